package uri

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func newTestCache(t *testing.T, max int64) *Cache {
	t.Helper()
	c, err := NewCache(t.TempDir(), max)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fetchOne(t *testing.T, f *Fetcher, u mesos.CommandInfo_URI) (Result, string) {
	t.Helper()
	sandbox := t.TempDir()
	res, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{u}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	return res[0], sandbox
}

func TestCacheHitTouchesNoNetwork(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/tool": []byte("#!/bin/sh\necho hi\n")})
	f := New(Config{Cache: newTestCache(t, 1<<20)})
	u := srv.URL + "/tool"
	r1, _ := fetchOne(t, f, mkURI(u, cached()))
	r2, sb := fetchOne(t, f, mkURI(u, cached(), executable()))
	r3, sb3 := fetchOne(t, f, mkURI(u, cached()))
	if r1.CacheHit || !r2.CacheHit || !r3.CacheHit || r2.Bytes != 18 {
		t.Fatalf("results %+v %+v %+v", r1, r2, r3)
	}
	if n := srv.count("/tool"); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if readString(t, filepath.Join(sb, "tool")) != "#!/bin/sh\necho hi\n" || perm(t, filepath.Join(sb, "tool")) != 0o755 {
		t.Fatal("executable copy from cache")
	}
	if perm(t, filepath.Join(sb3, "tool")) != 0o644 {
		t.Fatal("chmod of a sandbox copy changed the cached file")
	}
	if _, sb4 := fetchOne(t, f, mkURI(u)); srv.count("/tool") != 2 || readString(t, filepath.Join(sb4, "tool")) == "" {
		t.Fatal("cache=false must bypass the cache")
	}
}

func TestCacheExtractsStraightFromCache(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/pkg.tgz": gzipBytes(t, tarBytes(t, file("bin/app", "app")))})
	f := New(Config{Cache: newTestCache(t, 1<<20)})
	for i := range 2 {
		res, sb := fetchOne(t, f, mkURI(srv.URL+"/pkg.tgz", cached()))
		if res.CacheHit != (i == 1) || !res.Extracted {
			t.Fatalf("fetch %d: %+v", i, res)
		}
		if got := tree(t, sb); !slices.Equal(got, []string{"bin", "bin/app"}) {
			t.Fatalf("fetch %d: tree %v (the cached archive is not copied)", i, got)
		}
	}
	if srv.count("/pkg.tgz") != 1 {
		t.Fatal("downloaded twice")
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	body := strings.Repeat("x", 100)
	srv := newFileServer(t, map[string][]byte{"/a": []byte(body), "/b": []byte(body), "/c": []byte(body), "/big": []byte(body + body + body)})
	c := newTestCache(t, 250)
	f := New(Config{Cache: c})
	for _, p := range []string{"/a", "/b", "/a", "/c"} {
		fetchOne(t, f, mkURI(srv.URL+p, cached()))
	}
	if !c.Contains(srv.URL+"/a") || c.Contains(srv.URL+"/b") || !c.Contains(srv.URL+"/c") || c.Size() != 200 || c.Len() != 2 {
		t.Fatalf("a %v b %v c %v size %d len %d", c.Contains(srv.URL+"/a"), c.Contains(srv.URL+"/b"),
			c.Contains(srv.URL+"/c"), c.Size(), c.Len())
	}
	if res, _ := fetchOne(t, f, mkURI(srv.URL+"/b", cached())); res.CacheHit || srv.count("/b") != 2 {
		t.Fatalf("evicted entry served: %+v", res)
	}
	// Larger than the budget: fetched, used once, not kept.
	res, sb := fetchOne(t, f, mkURI(srv.URL+"/big", cached()))
	if res.CacheHit || res.Bytes != 300 || readString(t, filepath.Join(sb, "big")) != body+body+body {
		t.Fatalf("big: %+v", res)
	}
	if c.Contains(srv.URL+"/big") || c.Len() != 2 || c.Size() != 200 {
		t.Fatalf("big retained: len %d size %d", c.Len(), c.Size())
	}
	if files := tree(t, c.Dir()); len(files) != 2 {
		t.Fatalf("cache dir %v", files)
	}
}

func TestCacheConcurrentFetchesDownloadOnce(t *testing.T) {
	var requests atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-release
		w.Write([]byte("shared"))
	}))
	defer srv.Close()
	f := New(Config{Cache: newTestCache(t, 1<<20)})
	const n = 8
	var wg, started sync.WaitGroup
	results := make([]Result, n)
	errs := make([]error, n)
	started.Add(n)
	for i := range n {
		wg.Go(func() {
			sandbox := t.TempDir()
			started.Done()
			var res []Result
			res, errs[i] = f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL+"/lib.so", cached())}, sandbox)
			if errs[i] == nil {
				results[i] = res[0]
				if readString(t, filepath.Join(sandbox, "lib.so")) != "shared" {
					errs[i] = errors.New("bad content")
				}
			}
		})
	}
	started.Wait()
	close(release)
	wg.Wait()
	misses := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !results[i].CacheHit {
			misses++
		}
	}
	if requests.Load() != 1 || misses != 1 {
		t.Fatalf("%d requests, %d misses; want 1 and 1", requests.Load(), misses)
	}
}

func TestCacheWaiterRetriesWhenFillerCancels(t *testing.T) {
	var requests atomic.Int32
	first := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			close(first)
			<-r.Context().Done()
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	f := New(Config{Cache: newTestCache(t, 1<<20)})
	u := []mesos.CommandInfo_URI{mkURI(srv.URL+"/f", cached())}
	ctx, cancel := context.WithCancel(context.Background())
	fillerErr := make(chan error, 1)
	go func() {
		_, err := f.Fetch(ctx, u, t.TempDir())
		fillerErr <- err
	}()
	<-first
	waiter := make(chan error, 1)
	go func() {
		_, err := f.Fetch(context.Background(), u, t.TempDir())
		waiter <- err
	}()
	cancel()
	if err := <-fillerErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("filler: %v", err)
	}
	if err := <-waiter; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestCacheVerifiesEntryBeforeUse(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/data": []byte("0123456789")})
	c := newTestCache(t, 1<<20)
	f := New(Config{Cache: c})
	fetchOne(t, f, mkURI(srv.URL+"/data", cached()))
	files := tree(t, c.Dir())
	if len(files) != 1 {
		t.Fatalf("cache dir %v", files)
	}
	if err := os.Truncate(filepath.Join(c.Dir(), files[0]), 3); err != nil {
		t.Fatal(err)
	}
	res, sb := fetchOne(t, f, mkURI(srv.URL+"/data", cached()))
	if res.CacheHit || srv.count("/data") != 2 || readString(t, filepath.Join(sb, "data")) != "0123456789" {
		t.Fatalf("damaged entry used: %+v", res)
	}
	if c.Size() != 10 || c.Len() != 1 {
		t.Fatalf("size %d len %d", c.Size(), c.Len())
	}
}

func TestCacheDoesNotKeepFailures(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{})
	c := newTestCache(t, 1<<20)
	f := New(Config{Cache: c})
	u := []mesos.CommandInfo_URI{mkURI(srv.URL+"/later", cached())}
	if _, err := f.Fetch(context.Background(), u, t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	if files := tree(t, c.Dir()); len(files) != 0 || c.Len() != 0 {
		t.Fatalf("failure cached: %v", files)
	}
	srv.mu.Lock()
	srv.files["/later"] = []byte("now")
	srv.mu.Unlock()
	if _, err := f.Fetch(context.Background(), u, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func TestNewCache(t *testing.T) {
	dir := t.TempDir()
	writeTemp(t, dir, "cache-stale-1", []byte("old"))
	writeTemp(t, dir, "unrelated", []byte("keep"))
	c, err := NewCache(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); !slices.Equal(got, []string{"unrelated"}) {
		t.Fatalf("dir %v", got)
	}
	if c.MaxBytes() != 10 || c.Size() != 0 {
		t.Fatal("fresh cache")
	}
	if _, err := NewCache(dir, 0); err == nil {
		t.Fatal("zero budget accepted")
	}
}
