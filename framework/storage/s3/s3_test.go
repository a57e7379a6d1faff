package s3_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

func newFS(t *testing.T, srv *s3server.Server, mod func(*s3fs.Options)) *s3fs.FS {
	t.Helper()
	o := s3fs.Options{Endpoint: srv.Endpoint, Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey, PartSize: 5 << 20,
		MaxAttempts: 2, MaxBackoff: 10 * time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	fs, err := s3fs.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.CloseIdleConnections)
	return fs
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, fs storage.Writable, path string, data []byte) {
	t.Helper()
	w, err := fs.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, fs storage.FS, f storage.FileInfo, off, n int64) []byte {
	t.Helper()
	rc, err := fs.Open(context.Background(), f, off, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCreateStatListOpenRanges(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	data := randomBytes(t, 11<<20+123) // three parts of 5 MiB, the last short
	put(t, fs, "s3://data/in/big.bin", data)
	put(t, fs, "s3://data/in/small.txt", []byte("hello\n"))

	st, err := fs.Stat(ctx, "s3://data/in/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(data)) || st.Version == "" {
		t.Fatalf("stat: size %d version %q, want size %d and an ETag", st.Size, st.Version, len(data))
	}
	// The server holds exactly the bytes written (read from its posix backend directly).
	onDisk, err := os.ReadFile(filepath.Join(srv.Root, "data", "in", "big.bin"))
	if err != nil || !bytes.Equal(onDisk, data) {
		t.Fatalf("the server's file differs from what was written (err %v)", err)
	}
	files, err := fs.List(ctx, "s3://data/in")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "s3://data/in/big.bin" || files[1].Path != "s3://data/in/small.txt" || files[1].Size != 6 {
		t.Fatalf("list = %+v", files)
	}
	for _, r := range [][2]int64{{0, -1}, {0, 10}, {5 << 20, 100}, {int64(len(data)) - 7, -1}, {12345, 5 << 20}} {
		got := read(t, fs, st, r[0], r[1])
		end := int64(len(data))
		if r[1] >= 0 {
			end = r[0] + r[1]
		}
		if !bytes.Equal(got, data[r[0]:end]) {
			t.Fatalf("range %v: got %d bytes, not the file's bytes [%d,%d)", r, len(got), r[0], end)
		}
	}
	if got := read(t, fs, st, int64(len(data)), -1); len(got) != 0 {
		t.Fatalf("read at the end gave %d bytes", len(got))
	}
}

func TestStagedWriteInvisibleUntilPublished(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	data := randomBytes(t, 12<<20)
	st, err := fs.Stage(ctx, "s3://out/job/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(data[:1<<20]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(data[1<<20:]); err != nil {
		t.Fatal(err)
	}
	p, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts) != 3 || p.Size != int64(len(data)) {
		t.Fatalf("pending = %d parts, %d bytes; want 3 parts of %d bytes", len(p.Parts), p.Size, len(data))
	}
	if _, err := fs.Stat(ctx, "s3://out/job/part-00000"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("before publish, stat: %v, want ErrNotExist", err)
	}
	if _, err := fs.List(ctx, "s3://out/job"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("before publish, list: %v, want ErrNotExist", err)
	}
	ups, err := fs.Uploads(ctx, "s3://out/job")
	if err != nil || len(ups) != 1 || ups[0] != "s3://out/job/part-00000" {
		t.Fatalf("uploads = %v, %v", ups, err)
	}
	if err := fs.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := fs.Publish(ctx, p); err != nil {
		t.Fatalf("a second publish of the same upload: %v", err)
	}
	fi, err := fs.Stat(ctx, "s3://out/job/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, fs, fi, 0, -1); !bytes.Equal(got, data) {
		t.Fatalf("published object: %d bytes, not the staged ones", len(got))
	}
	if ups, _ := fs.Uploads(ctx, "s3://out/job"); len(ups) != 0 {
		t.Fatalf("uploads left: %v", ups)
	}
}

func TestEmptyStagedFile(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	st, err := fs.Stage(ctx, "s3://out/e/part-00001")
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	fi, err := fs.Stat(ctx, "s3://out/e/part-00001")
	if err != nil || fi.Size != 0 {
		t.Fatalf("empty part: %+v, %v", fi, err)
	}
}

func TestAbortStagedAbortsEveryOpenUpload(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	finished, err := fs.Stage(ctx, "s3://out/job/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	finished.Write([]byte("loser's bytes\n"))
	if _, err := finished.Finish(); err != nil {
		t.Fatal(err)
	}
	// A writer killed mid-write: its requests stop (its context ends) and nobody aborts
	// its upload.
	wctx, kill := context.WithCancel(ctx)
	half, err := fs.Stage(wctx, "s3://out/job/part-00001")
	if err != nil {
		t.Fatal(err)
	}
	half.Write(randomBytes(t, 6<<20))
	kill()
	if _, err := half.Finish(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed writer's finish: %v", err)
	}
	if ups, _ := fs.Uploads(ctx, "s3://out/job"); len(ups) != 2 {
		t.Fatalf("uploads before the sweep: %v, want the finished and the killed writer's", ups)
	}
	other, err := fs.Stage(ctx, "s3://out/elsewhere/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.AbortStaged(ctx, "s3://out/job"); err != nil {
		t.Fatal(err)
	}
	if ups, _ := fs.Uploads(ctx, "s3://out/job"); len(ups) != 0 {
		t.Fatalf("uploads left under the output: %v", ups)
	}
	if ups, _ := fs.Uploads(ctx, "s3://out/elsewhere"); len(ups) != 1 {
		t.Fatalf("an upload outside the output was touched: %v", ups)
	}
	if _, err := fs.List(ctx, "s3://out/job"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("objects under the aborted output: %v", err)
	}
	if err := other.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := half.Abort(); err != nil { // already aborted by the sweep: not an error
		t.Fatal(err)
	}
}

func TestWrongCredentialsOneClearErrorWithoutSecrets(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	const wrongKey, wrongSecret = "AKIDwrongflint0d17", "wrong-s3-secret-61c0ffee42"
	for _, tc := range []struct{ name, ak, sk string }{
		{"unknown key", wrongKey, wrongSecret},
		{"wrong secret", s3server.AccessKey, wrongSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFS(t, srv, func(o *s3fs.Options) { o.AccessKey, o.SecretKey = tc.ak, tc.sk })
			_, err := fs.List(context.Background(), "s3://data/")
			if !errors.Is(err, storage.ErrAccess) {
				t.Fatalf("list with wrong credentials: %v, want ErrAccess", err)
			}
			for _, s := range []string{wrongSecret, s3server.SecretKey, tc.ak} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("the error quotes a credential: %v", err)
				}
			}
			if !strings.Contains(err.Error(), "s3://data/") {
				t.Fatalf("the error does not name the path: %v", err)
			}
		})
	}
}

func TestMissingBucketAndKey(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	_, err := fs.List(ctx, "s3://nosuchbucket/x")
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "no such bucket") {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := fs.Stat(ctx, "s3://data/missing.txt"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("missing key: %v", err)
	}
	_, err = storage.Expand(ctx, nil, []string{"s3://data/missing.txt"})
	if err == nil {
		// Expand uses the registered scheme with default options: no server there.
		t.Fatal("expand of a missing key succeeded")
	}
}

func TestObjectChangedOrDeletedAfterListing(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	put(t, fs, "s3://data/a.txt", []byte("first version\n"))
	put(t, fs, "s3://data/b.txt", []byte("stays\n"))
	listed, err := fs.List(ctx, "s3://data/")
	if err != nil {
		t.Fatal(err)
	}
	put(t, fs, "s3://data/a.txt", []byte("other version\n")) // same size, other bytes
	_, err = fs.Open(ctx, listed[0], 0, -1)
	if !errors.Is(err, storage.ErrChanged) || !strings.Contains(err.Error(), "s3://data/a.txt") {
		t.Fatalf("changed object: %v, want ErrChanged naming it", err)
	}
	if err := fs.Delete(ctx, "s3://data/b.txt"); err != nil {
		t.Fatal(err)
	}
	_, err = fs.Open(ctx, listed[1], 0, -1)
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("deleted object: %v, want ErrNotExist", err)
	}
}

// A server that accepts connections and never answers: each attempt times out, the
// retryer tries flint.s3.maxAttempts times with back-off, then one error.
func TestStalledServerTimesOutRetriesThenFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var conns sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns.Go(func() { <-stop; c.Close() })
		}
	}()
	defer func() { close(stop); l.Close(); conns.Wait() }()
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: "http://" + l.Addr().String(), PathStyle: true, Region: "us-east-1",
		AccessKey: "AKIDstall", SecretKey: "stall-secret", RequestTimeout: 200 * time.Millisecond, MaxAttempts: 3, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.CloseIdleConnections()
	start := time.Now()
	_, err = fs.Stat(context.Background(), "s3://data/x")
	if err == nil || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), "s3://data/x") {
		t.Fatalf("stalled server: %v, want one timeout error naming the path", err)
	}
	if n := accepted.Load(); n != 3 {
		t.Fatalf("%d attempts reached the server, want 3 (flint.s3.maxAttempts)", n)
	}
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Fatalf("3 attempts of 200ms took %v", d)
	}
}

// Virtual-host addressing: the bucket is in the host name (bucket.s3.test), which a
// dialing rule sends to the loopback server started with that virtual domain.
func TestVirtualHostStyle(t *testing.T) {
	srv := s3server.Start(t, []string{"vbucket"}, "--virtual-domain", "s3.test")
	_, port, _ := net.SplitHostPort(srv.Addr)
	var mu sync.Mutex
	hosts := map[string]bool{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		hosts[addr] = true
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr)
	}
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: "http://s3.test:" + port, Region: s3server.Region,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey, Dial: dial, PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.CloseIdleConnections)
	put(t, fs, "s3://vbucket/k.txt", []byte("virtual\n"))
	fi, err := fs.Stat(context.Background(), "s3://vbucket/k.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, fs, fi, 0, -1); string(got) != "virtual\n" {
		t.Fatalf("read %q", got)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "vbucket", "k.txt")); err != nil {
		t.Fatalf("the object is not in the bucket: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !hosts["vbucket.s3.test:"+port] || len(hosts) != 1 {
		t.Fatalf("dialed %v, want only vbucket.s3.test:%s", hosts, port)
	}
}

// The registered scheme reads its settings, the secret key from a file.
func TestRegisteredSchemeWithSecretFile(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	t.Cleanup(s3fs.CloseIdleConnections)
	secret := filepath.Join(t.TempDir(), "s3.secret")
	if err := os.WriteFile(secret, []byte(s3server.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	for _, kv := range srv.Conf() {
		k, v, _ := strings.Cut(kv, "=")
		if k == "flint.s3.secretKey" {
			k, v = "flint.s3.secretKey.file", secret
		}
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, name := range []string{"x/a.txt", "x/b.csv", "x/_SUCCESS", "x/.hidden", "x/sub/c.txt", "x/_temporary/d.txt", "y.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(srv.Root, "data", name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(srv.Root, "data", name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"s3://data/x"}, "s3://data/x/a.txt s3://data/x/b.csv s3://data/x/sub/c.txt"},
		{[]string{"s3a://data/x/"}, "s3a://data/x/a.txt s3a://data/x/b.csv s3a://data/x/sub/c.txt"},
		{[]string{"s3://data/x/*.txt"}, "s3://data/x/a.txt"},
		{[]string{"s3://data/*"}, "s3://data/x/a.txt s3://data/x/b.csv s3://data/x/sub/c.txt s3://data/y.txt"},
		{[]string{"s3://data/y.txt", "s3://data/x/s*"}, "s3://data/y.txt s3://data/x/sub/c.txt"},
	} {
		files, err := storage.Expand(ctx, cfg, tc.paths)
		if err != nil {
			t.Fatalf("%v: %v", tc.paths, err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.Path)
			if f.Size != int64(len(strings.TrimPrefix(strings.TrimPrefix(f.Path, "s3://data/"), "s3a://data/"))) {
				t.Fatalf("%s: size %d", f.Path, f.Size)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Fatalf("expand %v = %v, want %s", tc.paths, got, tc.want)
		}
	}
	if _, err := storage.Expand(ctx, cfg, []string{"s3://data/x/*.parquet"}); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("a glob matching nothing: %v", err)
	}
}

// The commit protocol's late attempt: the driver published the parts, wrote _SUCCESS and
// swept the open uploads; then an attempt still running (a speculative copy, a task whose
// kill has not arrived) stages its part. Its upload must not outlive the job: Stage finds
// _SUCCESS after creating the upload, aborts it and fails with ErrCommitted. (Before, the
// upload stayed open: nobody sweeps again.)
func TestAttemptStagingAfterTheFinalSweepDiscardsItsUpload(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	st, err := fs.Stage(ctx, "s3://out/job/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	st.Write([]byte("the counted attempt\n"))
	pd, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Publish(ctx, pd); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create(ctx, "s3://out/job/"+storage.SuccessMarker)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.AbortStaged(ctx, "s3://out/job"); err != nil {
		t.Fatal(err)
	}
	late, err := fs.Stage(ctx, "s3://out/job/part-00000")
	if !errors.Is(err, storage.ErrCommitted) {
		if late != nil {
			late.Abort()
		}
		t.Fatalf("staging after the commit: %v, want ErrCommitted", err)
	}
	if ups, err := fs.Uploads(ctx, "s3://out/job"); err != nil || len(ups) != 0 {
		t.Fatalf("uploads left open under the committed output: %v (%v)", ups, err)
	}
	// An output without _SUCCESS (the job still writing) is staged into as before.
	other, err := fs.Stage(ctx, "s3://out/running/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	other.Abort()
}

// The commit protocol's late attempt after a failed or cancelled job: the driver wrote
// _ABORTED and swept the open uploads (an earlier attempt's among them); then an attempt
// still running stages its part. Stage finds _ABORTED once its upload exists, aborts it and
// fails with ErrAborted: no upload is left open and nothing but the marker is visible under
// the output. (Before, the failed job wrote no marker and the late upload stayed open.)
func TestAttemptStagingAfterAFailedJobsSweepDiscardsItsUpload(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fs := newFS(t, srv, nil)
	ctx := context.Background()
	early, err := fs.Stage(ctx, "s3://out/failed/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	early.Write([]byte("an attempt of the failed job\n"))
	if _, err := early.Finish(); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create(ctx, "s3://out/failed/"+storage.AbortMarker)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.AbortStaged(ctx, "s3://out/failed"); err != nil {
		t.Fatal(err)
	}
	late, err := fs.Stage(ctx, "s3://out/failed/part-00001")
	if !errors.Is(err, storage.ErrAborted) {
		if late != nil {
			late.Abort()
		}
		t.Fatalf("staging after the failed job's sweep: %v, want ErrAborted", err)
	}
	if ups, err := fs.Uploads(ctx, "s3://out/failed"); err != nil || len(ups) != 0 {
		t.Fatalf("uploads left open under the failed output: %v (%v)", ups, err)
	}
	files, err := fs.List(ctx, "s3://out/failed")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "s3://out/failed/"+storage.AbortMarker {
		t.Fatalf("the failed output holds %v, want only its %s", files, storage.AbortMarker)
	}
}
