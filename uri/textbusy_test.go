package uri

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Many goroutines each fetch an executable and run it at once, while the
// others fork: none sees ETXTBSY. Before writeExecutable, a child forked
// by one goroutine inherited another's still-open write descriptor of its
// freshly fetched binary, and exec'ing that binary failed with "text file
// busy" (golang/go#22315) — about once in 28 fine-mode jobs.
func TestFetchedExecutablesNeverTextBusy(t *testing.T) {
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("the test fetches and runs true(1), which is not on PATH: %v", err)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(content) }))
	defer srv.Close()
	cache, err := NewCache(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	f := New(Config{Cache: cache})
	const workers, rounds = 16, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	var busy, other []error
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				// Half download straight into the sandbox, half come from the cache.
				u := mesos.CommandInfo_URI{Value: srv.URL + "/true", Executable: ptrBool(true), Cache: ptrBool(w%2 == 0)}
				sandbox := filepath.Join(t.TempDir(), "s")
				if _, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{u}, sandbox); err != nil {
					mu.Lock()
					other = append(other, err)
					mu.Unlock()
					return
				}
				err := exec.Command(filepath.Join(sandbox, "true")).Run()
				mu.Lock()
				switch {
				case errors.Is(err, syscall.ETXTBSY):
					busy = append(busy, err)
				case err != nil:
					other = append(other, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("%d fetches or runs failed, first: %v", len(other), other[0])
	}
	if len(busy) > 0 {
		t.Fatalf("%d of %d runs of freshly fetched executables failed with ETXTBSY, first: %v", len(busy), workers*rounds, busy[0])
	}
}

func ptrBool(b bool) *bool { return &b }
