package fileserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestServerConcurrentDownloads(t *testing.T) {
	s, tok := startServer(t, nil)
	body := randomBytes(4 << 20)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "big.bin", body))
	if err != nil {
		t.Fatal(err)
	}
	f := tokenFetcher(t, s, tok, nil)
	c := testClient(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 48)
	for i := range 16 {
		wg.Go(func() {
			sandbox := t.TempDir()
			if _, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(fu.URL)}, sandbox); err != nil {
				errs <- err
				return
			}
			if b, err := os.ReadFile(filepath.Join(sandbox, "big.bin")); err != nil || !bytes.Equal(b, body) {
				errs <- fmt.Errorf("download %d differs (%v)", i, err)
			}
		})
		wg.Go(func() {
			from := i * 1000
			req, _ := http.NewRequest("GET", strings.SplitN(fu.URL, "#", 2)[0], nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, from+99999))
			resp, err := c.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 206 || !bytes.Equal(b, body[from:from+100000]) {
				errs <- fmt.Errorf("range %d: %d (%v)", i, resp.StatusCode, err)
			}
		})
		wg.Go(func() {
			content := fmt.Sprint("file ", i)
			fu, err := s.AddFile(writeTemp(t, dir, fmt.Sprint("f", i), []byte(content)))
			if err == nil && fu.SHA256 != sha([]byte(content)) {
				err = fmt.Errorf("file %d: hash %s", i, fu.SHA256)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// stalledDownload starts a GET of fu and reads only its first bytes, so
// the server's handler is blocked writing the rest.
func stalledDownload(t *testing.T, fu FileURL, tok string) (*http.Response, *http.Transport) {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequest("GET", strings.SplitN(fu.URL, "#", 2)[0], nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	return resp, tr
}

func TestServerCloseWaitsForDownload(t *testing.T) {
	s, tok := startServer(t, nil)
	body := randomBytes(32 << 20)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "big.bin", body))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := stalledDownload(t, fu, tok)
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	// Wait until the listener is closed, then check Close still waits.
	waitfor.True(t, 5*time.Second, "the listener to close once Close began", func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) during a download", err)
	case <-time.After(100 * time.Millisecond):
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(rest, body[1024:]) {
		t.Fatalf("download interrupted by a graceful Close: %d bytes, %v", len(rest), err)
	}
	resp.Body.Close()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the download")
	}
	if _, err := s.AddFile(writeTemp(t, t.TempDir(), "late", nil)); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddFile after Close: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestServerCloseDeadline(t *testing.T) {
	s, tok := startServer(t, nil)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "big.bin", randomBytes(32<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := stalledDownload(t, fu, tok)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// The stalled download never ends on its own: Close returns only by
	// giving up at ctx's deadline.
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want DeadlineExceeded", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err == nil {
		t.Fatal("download completed although Close cut it off")
	}
}
