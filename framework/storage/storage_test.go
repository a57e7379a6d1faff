package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/httpfs"
	"github.com/flint-mesos/flint/framework/storage/local"
)

func TestScheme(t *testing.T) {
	for in, want := range map[string]string{
		"/data/x.txt": "file", "rel/x": "file", "file:///x": "file", "S3://b/k": "s3",
		"s3a://b/k": "s3a", "http://h/x": "http", `C:\data\x`: "file", "dir/a://b": "file",
	} {
		if got := storage.Scheme(in); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnknownSchemeNamesRegistered(t *testing.T) {
	_, err := storage.For(context.Background(), nil, "gs://bucket/x")
	if !errors.Is(err, storage.ErrNoScheme) || !strings.Contains(err.Error(), "file") || !strings.Contains(err.Error(), `"gs"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := storage.WritableFor(context.Background(), nil, "https://h/x"); !errors.Is(err, storage.ErrReadOnly) {
		t.Fatalf("https writable: %v", err)
	}
}

// A user's scheme, registered like the built-in ones, serves Expand.
type memFS map[string]string

func (m memFS) Stat(_ context.Context, p string) (storage.FileInfo, error) {
	if v, ok := m[p]; ok {
		return storage.FileInfo{Path: p, Size: int64(len(v))}, nil
	}
	return storage.FileInfo{}, storage.ErrNotExist
}

func (m memFS) List(_ context.Context, dir string) ([]storage.FileInfo, error) {
	var out []storage.FileInfo
	for _, k := range []string{"mem://a/1", "mem://a/2", "mem://a/_x"} {
		if strings.HasPrefix(k, strings.TrimSuffix(dir, "/")+"/") {
			out = append(out, storage.FileInfo{Path: k, Size: int64(len(m[k]))})
		}
	}
	return out, nil
}

func (m memFS) Open(_ context.Context, f storage.FileInfo, off, n int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(m[f.Path][off:])), nil
}

func TestUserScheme(t *testing.T) {
	fs := memFS{"mem://a/1": "one", "mem://a/2": "two", "mem://a/_x": "hidden"}
	storage.Register("mem", func(context.Context, *config.Config) (storage.FS, error) { return fs, nil })
	files, err := storage.Expand(context.Background(), nil, []string{"mem://a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "mem://a/1" || files[1].Path != "mem://a/2" {
		t.Fatalf("files = %+v", files)
	}
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func paths(files []storage.FileInfo, root string) string {
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f.Path, root+"/"))
	}
	return strings.Join(out, " ")
}

func TestExpandLocal(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"in/a.txt": "a", "in/b.log": "bb", "in/_SUCCESS": "", "in/.crc": "x", "in/sub/c.txt": "ccc",
		"in/_temporary/0/part": "p", "other/d.txt": "dddd", "in2/e.txt": "e",
	})
	ctx := context.Background()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"in"}, "in/a.txt in/b.log in/sub/c.txt"},
		{[]string{"in/a.txt", "other"}, "in/a.txt other/d.txt"},
		{[]string{"in/*.txt"}, "in/a.txt"},
		{[]string{"in*/*.txt"}, "in/a.txt in2/e.txt"},
		{[]string{"in/_SUCCESS"}, "in/_SUCCESS"}, // named explicitly, a hidden file is read
		{[]string{"*"}, "in/a.txt in/b.log in/sub/c.txt in2/e.txt other/d.txt"},
		{[]string{"file://" + root + "/other"}, "file://" + root + "/other/d.txt"},
	} {
		in := make([]string, len(tc.in))
		for i, p := range tc.in {
			if !strings.HasPrefix(p, "file://") {
				p = root + "/" + p
			}
			in[i] = p
		}
		files, err := storage.Expand(ctx, nil, in)
		if err != nil {
			t.Fatalf("%v: %v", tc.in, err)
		}
		want := tc.want
		if !strings.HasPrefix(want, "file://") {
			got := paths(files, root)
			if got != want {
				t.Fatalf("Expand(%v) = %s, want %s", tc.in, got, want)
			}
		} else if files[0].Path != want {
			t.Fatalf("Expand(%v) = %s, want %s", tc.in, files[0].Path, want)
		}
		for _, f := range files {
			st, err := os.Stat(strings.TrimPrefix(f.Path, "file://"))
			if err != nil || st.Size() != f.Size {
				t.Fatalf("%s: size %d, stat %v", f.Path, f.Size, err)
			}
		}
	}
	for _, bad := range []string{root + "/missing", root + "/in/*.csv", root + "/in/[", root + "/in/_temporary/missing"} {
		if _, err := storage.Expand(ctx, nil, []string{bad}); err == nil {
			t.Fatalf("Expand(%s) succeeded", bad)
		} else if !strings.Contains(err.Error(), bad) {
			t.Fatalf("Expand(%s): %v does not name the path", bad, err)
		}
	}
}

func TestLocalOpenRangesAndChanged(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"f.txt": "0123456789"})
	fs := local.FS{}
	ctx := context.Background()
	fi, err := fs.Stat(ctx, root+"/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][3]int64{{0, -1, 10}, {3, 4, 4}, {9, 5, 1}} {
		rc, err := fs.Open(ctx, fi, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if want := "0123456789"[r[0] : r[0]+r[2]]; string(b) != want {
			t.Fatalf("range %v = %q, want %q", r, b, want)
		}
	}
	later := fi.ModTime.Add(time.Second)
	if err := os.WriteFile(root+"/f.txt", []byte("abcdefghij"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(root+"/f.txt", later, later)
	if _, err := fs.Open(ctx, fi, 0, -1); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("changed file: %v", err)
	}
	os.Remove(root + "/f.txt")
	if _, err := fs.Open(ctx, fi, 0, -1); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("deleted file: %v", err)
	}
}

func TestLocalStagePublishAbort(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil { // the committer makes it; Stage needs it
		t.Fatal(err)
	}
	fs := local.FS{}
	ctx := context.Background()
	stage := func(name, body string) storage.Pending {
		s, err := fs.Stage(ctx, out+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte(body))
		p, err := s.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	win := stage("part-00000", "winner\n")
	stage("part-00000", "loser\n")
	if _, err := fs.List(ctx, out); err == nil {
		// Only _temporary holds files: nothing visible.
		files, _ := storage.Expand(ctx, nil, []string{out})
		if len(files) != 0 {
			t.Fatalf("visible before publish: %+v", files)
		}
	}
	if err := fs.Publish(ctx, win); err != nil {
		t.Fatal(err)
	}
	if err := fs.Publish(ctx, win); err != nil {
		t.Fatalf("second publish: %v", err)
	}
	if err := fs.AbortStaged(ctx, out); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 || ents[0].Name() != "part-00000" {
		t.Fatalf("output holds %v", ents)
	}
	if b, _ := os.ReadFile(out + "/part-00000"); string(b) != "winner\n" {
		t.Fatalf("part = %q", b)
	}
	w, err := fs.Create(ctx, out+"/_SUCCESS")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(ctx, out+"/_SUCCESS"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(ctx, out+"/_SUCCESS"); err != nil {
		t.Fatalf("deleting a missing file: %v", err)
	}
}

func TestHTTPRangesAndChanged(t *testing.T) {
	body := []byte(strings.Repeat("0123456789", 100))
	etag := `"v1"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "f.txt", time.Unix(0, 0), bytes.NewReader(body))
	}))
	defer srv.Close()
	fs := httpfs.FS{Client: srv.Client()}
	ctx := context.Background()
	files, err := storage.Expand(ctx, nil, []string{srv.URL + "/f.txt?x=1"})
	if err != nil || len(files) != 1 || files[0].Size != 1000 || files[0].Version != etag {
		t.Fatalf("expand: %+v %v", files, err)
	}
	rc, err := fs.Open(ctx, files[0], 995, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "567" {
		t.Fatalf("range = %q", b)
	}
	etag = `"v2"`
	if _, err := fs.Open(ctx, files[0], 10, -1); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("changed ETag: %v", err)
	}
	etag = `"v1"`
	body = body[:500]
	if _, err := fs.Open(ctx, files[0], 10, -1); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("shorter file: %v", err)
	}
}

// A local attempt that stages after the driver committed (wrote _SUCCESS, removed
// _temporary) removes its own staged file and _temporary and fails with ErrCommitted:
// nothing is left beside the parts and _SUCCESS. (Before, a _temporary directory holding
// the late attempt's file stayed in the output.)
func TestLocalStagingAfterTheCommitLeavesNothing(t *testing.T) {
	out := t.TempDir()
	fs := local.FS{}
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(out, "part-00000"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, storage.SuccessMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.AbortStaged(ctx, out); err != nil {
		t.Fatal(err)
	}
	late, err := fs.Stage(ctx, out+"/part-00000")
	if !errors.Is(err, storage.ErrCommitted) {
		if late != nil {
			late.Abort()
		}
		t.Fatalf("staging after the commit: %v, want ErrCommitted", err)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"_SUCCESS", "part-00000"}) {
		t.Fatalf("the committed output holds %v, want only _SUCCESS and part-00000", names)
	}
}

// A local attempt that stages after a failed job's cleanup (the driver wrote _ABORTED and
// removed _temporary) removes its own staged file and _temporary and fails with ErrAborted:
// no temporary file is left and nothing but the marker is under the output. (Before, the
// failed job wrote no marker and the late attempt's file stayed under _temporary.)
func TestLocalStagingAfterAFailedJobLeavesNothing(t *testing.T) {
	out := t.TempDir()
	fs := local.FS{}
	ctx := context.Background()
	early, err := fs.Stage(ctx, out+"/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	early.Write([]byte("an attempt of the failed job\n"))
	if _, err := early.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, storage.AbortMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.AbortStaged(ctx, out); err != nil {
		t.Fatal(err)
	}
	late, err := fs.Stage(ctx, out+"/part-00001")
	if !errors.Is(err, storage.ErrAborted) {
		if late != nil {
			late.Abort()
		}
		t.Fatalf("staging after the failed job's cleanup: %v, want ErrAborted", err)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{storage.AbortMarker}) {
		t.Fatalf("the failed output holds %v, want only %s", names, storage.AbortMarker)
	}
}
