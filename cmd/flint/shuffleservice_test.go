package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// `flint shuffle-service` publishes its address in its directory while
// it runs and withdraws it when stopped; a bad timeout is refused.
func TestShuffleServiceCommand(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu  sync.Mutex
		out bytes.Buffer
	)
	done := make(chan error, 1)
	go func() {
		done <- runShuffleService(ctx, lockedWriter{&mu, &out}, shuffleServiceOptions{dir: dir, host: "127.0.0.1", port: 0, appTimeout: time.Minute})
	}()
	waitfor.True(t, 30*time.Second, "the service's info file", func() bool {
		_, err := shuffleservice.ReadInfo(dir)
		return err == nil
	})
	a, _ := shuffleservice.ReadInfo(dir)
	if a.Pin == "" || !strings.HasPrefix(a.HostPort, "127.0.0.1:") {
		t.Errorf("address %+v: want TLS on 127.0.0.1", a)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	printed := out.String()
	mu.Unlock()
	if want := "flint shuffle-service: serving " + dir + " at https://" + a.HostPort; !strings.Contains(printed, want) {
		t.Errorf("printed %q, want %q", printed, want)
	}
	if _, err := os.Stat(filepath.Join(dir, shuffleservice.InfoFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("info file after stop: %v", err)
	}
	err := runShuffleService(context.Background(), &out, shuffleServiceOptions{dir: dir, appTimeout: 0})
	if err == nil || !strings.Contains(err.Error(), "--app-timeout is 0s; it must be > 0") {
		t.Errorf("zero timeout: %v", err)
	}
}
