package uri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestFetchHTTP(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/dir/app.conf": []byte("key=value\n")})
	sandbox := t.TempDir()
	res, err := New(Config{}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{mkURI(srv.URL + "/dir/app.conf?token=x")}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	// Named as Mesos names it: the query is part of the file name.
	want := Result{URI: srv.URL + "/dir/app.conf?token=x", Path: "app.conf?token=x", Bytes: 10}
	if len(res) != 1 || res[0] != want {
		t.Fatalf("results = %+v, want %+v", res, want)
	}
	if got := readString(t, filepath.Join(sandbox, want.Path)); got != "key=value\n" {
		t.Fatalf("content %q", got)
	}
	if m := perm(t, filepath.Join(sandbox, want.Path)); m != 0o644 {
		t.Fatalf("mode %v, want 0644", m)
	}
	if got := tree(t, sandbox); !slices.Equal(got, []string{want.Path}) {
		t.Fatalf("sandbox %v", got)
	}
}

func TestFetchHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone.txt":
			http.Error(w, "gone", http.StatusNotFound)
		case "/broken.txt":
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path string
		want error
		code string
	}{
		{"/gone.txt", ErrNotFound, "404"},
		{"/broken.txt", ErrHTTPStatus, "500"},
	} {
		sandbox := t.TempDir()
		_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL + tc.path)}, sandbox)
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: err = %v, want %v", tc.path, err, tc.want)
		}
		errContains(t, err, "uri: fetch", srv.URL+tc.path, tc.code)
		if got := tree(t, sandbox); len(got) != 0 {
			t.Fatalf("%s: sandbox not empty: %v", tc.path, got)
		}
	}
}

func TestFetchRedirectWithHeaders(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Accept-Encoding"))
		switch r.URL.Path {
		case "/latest/tool":
			http.Redirect(w, r, "/v2/tool-2.0", http.StatusFound)
		case "/v2/tool-2.0":
			fmt.Fprint(w, "v2")
		}
	}))
	defer srv.Close()
	sandbox := t.TempDir()
	f := New(Config{Header: func(u *url.URL) http.Header {
		return http.Header{"Authorization": {"Bearer " + strings.TrimPrefix(u.Path, "/")}}
	}})
	res, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL + "/latest/tool")}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	// Named after the URI, as in Mesos, not after the redirect target.
	if res[0].Path != "tool" || readString(t, filepath.Join(sandbox, "tool")) != "v2" {
		t.Fatalf("result %+v", res[0])
	}
	want := []string{"/latest/tool Bearer latest/tool identity", "/v2/tool-2.0 Bearer v2/tool-2.0 identity"}
	if !slices.Equal(seen, want) {
		t.Fatalf("requests %q, want %q", seen, want)
	}
}

func TestFetchHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted attempt logs a handshake error
	srv.StartTLS()
	defer srv.Close()
	sandbox := t.TempDir()
	if _, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL + "/s")}, sandbox); err == nil {
		t.Fatal("default client trusted the test CA")
	}
	_, err := New(Config{HTTPClient: srv.Client()}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{mkURI(srv.URL + "/s")}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(sandbox, "s")); got != "secret" {
		t.Fatalf("content %q", got)
	}
}

func TestFetchLocal(t *testing.T) {
	src := t.TempDir()
	p := writeTemp(t, src, "run.sh", []byte("#!/bin/sh\n"))
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{p, "file://" + p, "file://localhost" + p, "  " + p} {
		sandbox := t.TempDir()
		res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(v)}, sandbox)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if res[0].Path != "run.sh" || res[0].Bytes != 10 {
			t.Fatalf("%s: result %+v", v, res[0])
		}
		if m := perm(t, filepath.Join(sandbox, "run.sh")); m != 0o750 {
			t.Fatalf("%s: mode %v, want the source's 0750", v, m)
		}
	}
	for v, want := range map[string]error{
		filepath.Join(src, "missing"): ErrNotFound,
		"relative/path.txt":           ErrInvalidURI,
		"file://relative/path.txt":    ErrInvalidURI,
		"file://" + src:               nil, // a directory
	} {
		_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(v)}, t.TempDir())
		if err == nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", v, err, want)
		}
	}
}

func TestFetchExecutableSkipsExtraction(t *testing.T) {
	tgz := gzipBytes(t, tarBytes(t, file("a.txt", "a")))
	srv := newFileServer(t, map[string][]byte{"/tool.tar.gz": tgz, "/bin/tool": []byte("#!/bin/sh\n")})
	sandbox := t.TempDir()
	res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{
		mkURI(srv.URL+"/tool.tar.gz", executable()),
		mkURI(srv.URL+"/bin/tool", executable(), cached()), // no cache configured: fetched directly
	}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Extracted || res[1].Extracted {
		t.Fatalf("executable URI extracted: %+v", res)
	}
	for _, n := range []string{"tool.tar.gz", "tool"} {
		if m := perm(t, filepath.Join(sandbox, n)); m != 0o755 {
			t.Errorf("%s: mode %v, want 0755", n, m)
		}
	}
	if got := tree(t, sandbox); !slices.Equal(got, []string{"tool", "tool.tar.gz"}) {
		t.Fatalf("sandbox %v", got)
	}
}

func TestFetchOutputFile(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/x": []byte("x")})
	parent := t.TempDir()
	sandbox := filepath.Join(parent, "sandbox")
	res, err := New(Config{}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{mkURI(srv.URL+"/x", output("conf/nested/x.cfg"))}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Path != "conf/nested/x.cfg" || readString(t, filepath.Join(sandbox, "conf/nested/x.cfg")) != "x" {
		t.Fatalf("result %+v", res[0])
	}
	for _, of := range []string{"../x", "/etc/x", "a/../../x", "", "dir/", ".", "a\\b"} {
		_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL+"/x", output(of))}, sandbox)
		if !errors.Is(err, ErrInvalidURI) {
			t.Errorf("output_file %q: err = %v, want ErrInvalidURI", of, err)
		}
	}
	if got := tree(t, parent); !slices.Equal(got, []string{"sandbox", "sandbox/conf", "sandbox/conf/nested", "sandbox/conf/nested/x.cfg"}) {
		t.Fatalf("files %v", got)
	}
	if srv.count("/x") != 1 {
		t.Fatalf("refused output_file still downloaded: %d requests", srv.count("/x"))
	}
}

func TestFetchOutputFileThroughSymlinkStaysInSandbox(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/x": []byte("x")})
	parent := t.TempDir()
	sandbox := filepath.Join(parent, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(sandbox, "out")); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL+"/x", output("out/x"))}, sandbox)
	if err == nil {
		t.Fatal("wrote through a symlink leaving the sandbox")
	}
	if _, err := os.Stat(filepath.Join(parent, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file escaped: %v", err)
	}
}

func TestFetchRefusesSchemesAndCharacters(t *testing.T) {
	for v, scheme := range map[string]string{
		"ftp://host/file":         "ftp",
		"hdfs://nn:8020/jobs/app": "hdfs",
		"s3://bucket/key.tgz":     "s3",
		"S3N://bucket/key":        "s3n",
		"docker://image":          "docker",
	} {
		_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(v)}, t.TempDir())
		if !errors.Is(err, ErrUnsupportedScheme) {
			t.Errorf("%s: err = %v", v, err)
			continue
		}
		errContains(t, err, `"`+scheme+`"`)
	}
	for _, v := range []string{`http://h/a\b`, "http://h/it's", "/tmp/a\x00b", "", "   ", "http:///nohost", "1http://h/x"} {
		_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(v)}, t.TempDir())
		if !errors.Is(err, ErrInvalidURI) {
			t.Errorf("%q: err = %v, want ErrInvalidURI", v, err)
		}
	}
}

// A URI whose name would be empty needs output_file; one with no path at
// all is refused even with output_file, as Mesos validates every URI's
// basename ("Malformed URI (missing path)").
func TestFetchNeedsAName(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/": []byte("index"), "/dir/": []byte("index")})
	sandbox := t.TempDir()
	for _, u := range []mesos.CommandInfo_URI{mkURI(srv.URL + "/dir/"), mkURI(srv.URL + "/"), mkURI(srv.URL+"/", output("index.html"))} {
		if _, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{u}, sandbox); !errors.Is(err, ErrInvalidURI) {
			t.Fatalf("%s: err = %v", u.Value, err)
		}
	}
	res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL+"/dir/", output("index.html"))}, sandbox)
	if err != nil || res[0].Path != "index.html" {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestFetchStopsAtFirstFailure(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/a": []byte("a"), "/c": []byte("c")})
	sandbox := t.TempDir()
	res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{
		mkURI(srv.URL + "/a"), mkURI(srv.URL + "/b"), mkURI(srv.URL + "/c"),
	}, sandbox)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	errContains(t, err, srv.URL+"/b")
	if len(res) != 1 || res[0].Path != "a" {
		t.Fatalf("results %+v", res)
	}
	if srv.count("/c") != 0 {
		t.Fatal("fetched past the failure")
	}
}

func TestFetchCancelSlowDownload(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	sandbox := t.TempDir()
	// The server never finishes the response (it waits for the client to
	// go): Fetch can return only by abandoning the download on cancel.
	_, err := New(Config{}).Fetch(ctx, []mesos.CommandInfo_URI{mkURI(srv.URL + "/slow.bin")}, sandbox)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := tree(t, sandbox); len(got) != 0 {
		t.Fatalf("partial download left: %v", got)
	}
}

// Without output_file a fetched file is named as Mesos' fetcher names it
// (Fetcher::basename): everything after the last "/", query and fragment
// included and nothing unescaped; no fragment is verified. output_file
// names it otherwise.
func TestFetchNamesFilesAsMesos(t *testing.T) {
	body := []byte("the executor")
	srv := newFileServer(t, map[string][]byte{"/files/x/flint": body, "/files/x/app data.bin": body, "/a": body})
	for _, tc := range []struct{ uri, want string }{
		{"/files/x/flint?token=t0k#sha256=00", "flint?token=t0k#sha256=00"},
		{"/files/x/flint#frag", "flint#frag"},
		{"/files/x/app%20data.bin", "app%20data.bin"},
		{"/a?next=/b/c", "c"}, // a "/" in the query still ends the path, as in Mesos
	} {
		sandbox := t.TempDir()
		res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL + tc.uri)}, sandbox)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if res[0].Path != tc.want || readString(t, filepath.Join(sandbox, tc.want)) != string(body) {
			t.Fatalf("%s: stored as %q, want %q (sandbox %v)", tc.uri, res[0].Path, tc.want, tree(t, sandbox))
		}
	}
	sandbox := t.TempDir()
	res, err := New(Config{}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{mkURI(srv.URL+"/files/x/flint?token=t0k#sha256=00", output("flint"))}, sandbox)
	if err != nil || res[0].Path != "flint" || len(tree(t, sandbox)) != 1 {
		t.Fatalf("with output_file: %+v, %v, sandbox %v", res, err, tree(t, sandbox))
	}
	for _, bad := range []string{srv.URL + "/", "http://host", "http://host/", srv.URL + "/files/.."} {
		if _, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(bad)}, t.TempDir()); !errors.Is(err, ErrInvalidURI) {
			t.Errorf("%s: err = %v, want ErrInvalidURI", bad, err)
		}
	}
}

func TestFetchMaxDownloadBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.Write(make([]byte, 600))
			w.(http.Flusher).Flush() // no Content-Length
			w.Write(make([]byte, 600))
			return
		}
		w.Write(make([]byte, 1200))
	}))
	defer srv.Close()
	local := writeTemp(t, t.TempDir(), "big", make([]byte, 1200))
	for _, v := range []string{srv.URL + "/sized", srv.URL + "/chunked", local} {
		sandbox := t.TempDir()
		_, err := New(Config{MaxDownloadBytes: 1000}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(v)}, sandbox)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", v, err)
		}
		if got := tree(t, sandbox); len(got) != 0 {
			t.Errorf("%s: left %v", v, got)
		}
	}
	if _, err := New(Config{MaxDownloadBytes: 1200}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(local)}, t.TempDir()); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestFetchRedactsPassword(t *testing.T) {
	srv := newFileServer(t, nil)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("bob", "hunter2")
	_, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(u.String() + "/missing")}, t.TempDir())
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}
