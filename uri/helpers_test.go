package uri

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/ulikunitz/xz"
)

// uriOpt sets an optional CommandInfo.URI field.
type uriOpt func(*mesos.CommandInfo_URI)

func executable() uriOpt { return func(u *mesos.CommandInfo_URI) { t := true; u.Executable = &t } }
func noExtract() uriOpt  { return func(u *mesos.CommandInfo_URI) { f := false; u.Extract = &f } }
func cached() uriOpt     { return func(u *mesos.CommandInfo_URI) { t := true; u.Cache = &t } }
func output(s string) uriOpt {
	return func(u *mesos.CommandInfo_URI) { u.OutputFile = &s }
}

func mkURI(value string, opts ...uriOpt) mesos.CommandInfo_URI {
	u := mesos.CommandInfo_URI{Value: value}
	for _, o := range opts {
		o(&u)
	}
	return u
}

// fileServer serves files from a map and counts requests per path.
type fileServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func newFileServer(t testing.TB, files map[string][]byte) *fileServer {
	fs := &fileServer{files: files, hits: map[string]int{}}
	fs.Server = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.Close)
	return fs
}

func (s *fileServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	b, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, "", fixedTime, bytes.NewReader(b))
}

func (s *fileServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func readString(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func perm(t testing.TB, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// tree lists every path under dir (relative, sorted), symlinks marked "@".
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			rel += "@"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// tarEntry describes one entry of a test tar archive.
type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func file(name, body string) tarEntry {
	return tarEntry{name: name, body: body, typ: tar.TypeReg, mode: 0o644}
}
func dirEnt(name string) tarEntry { return tarEntry{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlinkEnt(name, target string) tarEntry {
	return tarEntry{name: name, link: target, typ: tar.TypeSymlink, mode: 0o777}
}
func hardlinkEnt(name, target string) tarEntry {
	return tarEntry{name: name, link: target, typ: tar.TypeLink, mode: 0o644}
}

func tarBytes(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.body)), ModTime: fixedTime}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil && h.Size > 0 {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipEntry describes one entry of a test zip archive.
type zipEntry struct {
	name, body string
	mode       fs.FileMode
}

func zipBytes(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: fixedTime}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTemp(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func errContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

var fixedTime = mustTime("2024-01-02T03:04:05Z")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
