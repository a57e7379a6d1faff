package master

import (
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// A framework stream that ends while the master closes (the client leaves
// at the same moment) runs streamGone after Close began; it used to arm the
// failover timer, and Close then waited for it — an hour with
// failover_timeout 3600. Nothing may be armed once Close has begun.
func TestNoTimerArmedAfterClose(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	m, err := New(Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.mu.Lock()
	ran := false
	l := m.after(time.Hour, func(time.Time) { ran = true })
	m.every(time.Hour, func(time.Time) { ran = true })
	m.mu.Unlock()
	if !l.stopped {
		t.Fatal("after() armed a timer on a closed master")
	}
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a timer armed after Close")
	}
	if ran {
		t.Fatal("a timer callback ran after Close")
	}
}
