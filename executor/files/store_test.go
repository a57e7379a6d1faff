package files_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/executor/files"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func sum(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// server serves body at /f/data.txt after failing the first fails requests
// with 503; it counts requests and records the Authorization headers.
type server struct {
	*httptest.Server
	hits  atomic.Int64
	mu    sync.Mutex
	auths []string
}

func newServer(t *testing.T, body string, fails int64) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if n <= fails {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// afterRecorder is Config.After that fires at once and records the waits.
type afterRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (a *afterRecorder) after(d time.Duration) <-chan time.Time {
	a.mu.Lock()
	a.waits = append(a.waits, d)
	a.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func TestFetchedOnceWithTokenAndChecksum(t *testing.T) {
	s := newServer(t, "hello", 0)
	st := files.New(files.Config{Dir: t.TempDir()})
	defer st.Close()
	ref := &flintpb.FileRef{Name: "data.txt", Uri: s.URL + "/f/data.txt", Sha256: sum("hello"), Served: true}
	var wg sync.WaitGroup
	views := make([]task.Files, 8)
	errs := make([]error, 8)
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i], errs[i] = st.Prepare(context.Background(), []*flintpb.FileRef{ref}, "tok-0123456789abcdef")
		}()
	}
	wg.Wait()
	for i := range views {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		p, err := views[i].File("data.txt")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "hello" {
			t.Fatalf("task %d read %q", i, b)
		}
	}
	if n := s.hits.Load(); n != 1 {
		t.Fatalf("8 concurrent tasks fetched the file %d times, want 1", n)
	}
	if s.auths[0] != "Bearer tok-0123456789abcdef" {
		t.Fatalf("served file fetched with Authorization %q", s.auths[0])
	}
	if _, err := views[0].File("other"); !errors.Is(err, task.ErrFileNotListed) || !strings.Contains(err.Error(), "data.txt") {
		t.Fatalf("File(other): %v", err)
	}
	// the same name with other content: refused
	_, err := st.Prepare(context.Background(), []*flintpb.FileRef{{Name: "data.txt", Uri: ref.Uri, Sha256: sum("other")}}, "")
	if !errors.Is(err, files.ErrConflict) {
		t.Fatalf("other content under data.txt: %v", err)
	}
}

func TestRetriesWithBackoffThenSucceeds(t *testing.T) {
	s := newServer(t, "late", 3)
	rec := &afterRecorder{}
	st := files.New(files.Config{Dir: t.TempDir(), Attempts: 5, Backoff: 100 * time.Millisecond, After: rec.after})
	defer st.Close()
	// a remote URL: no credential sent even when the task has a token
	ref := &flintpb.FileRef{Name: "data.txt", Uri: s.URL + "/f/data.txt", Sha256: sum("late")}
	if _, err := st.Prepare(context.Background(), []*flintpb.FileRef{ref}, "tok-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if len(rec.waits) != len(want) {
		t.Fatalf("waits %v, want %v", rec.waits, want)
	}
	for i := range want {
		if rec.waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", rec.waits, want)
		}
	}
	for _, a := range s.auths {
		if a != "" {
			t.Fatalf("a remote URL got Authorization %q", a)
		}
	}
}

func TestChecksumMismatchFailsAfterAttemptsAndIsRetriedLater(t *testing.T) {
	s := newServer(t, "tampered", 0)
	rec := &afterRecorder{}
	st := files.New(files.Config{Dir: t.TempDir(), Attempts: 2, After: rec.after})
	defer st.Close()
	ref := &flintpb.FileRef{Name: "data.txt", Uri: s.URL + "/f/data.txt", Sha256: sum("original")}
	_, err := st.Prepare(context.Background(), []*flintpb.FileRef{ref}, "")
	if !errors.Is(err, files.ErrChecksum) || !strings.Contains(err.Error(), "attempt 2 of 2") || !strings.Contains(err.Error(), sum("original")) {
		t.Fatalf("tampered content: %v", err)
	}
	if _, err := st.Prepare(context.Background(), []*flintpb.FileRef{ref}, ""); !errors.Is(err, files.ErrChecksum) {
		t.Fatalf("second task: %v", err)
	}
	if n := s.hits.Load(); n != 4 {
		t.Fatalf("%d fetches; a failed file must be tried again by the next task (want 2+2)", n)
	}
}

func TestServedFileNeedsAToken(t *testing.T) {
	st := files.New(files.Config{})
	defer st.Close()
	_, err := st.Prepare(context.Background(), []*flintpb.FileRef{{Name: "x", Uri: "http://127.0.0.1:1/x", Served: true}}, "")
	if err == nil || !strings.Contains(err.Error(), "no files token") {
		t.Fatalf("served file without token: %v", err)
	}
	if _, err := st.Prepare(context.Background(), []*flintpb.FileRef{{Name: "../x", Uri: "http://h/x"}}, ""); err == nil {
		t.Fatal("a name with a path separator was accepted")
	}
}
