package filescheck

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// Seen is what one task found of the files it was asked for.
type Seen struct {
	PID      int               // the executor process
	Contents map[string]string // name → content (a directory: "rel=content" lines, sorted)
	Errors   map[string]string // name → TaskContext.File's error
}

// Read looks up every name through the task context and reads it.
var Read = framework.Register("filescheck.read", func(ctx context.Context, names []string) (Seen, error) {
	s := Seen{PID: os.Getpid(), Contents: map[string]string{}, Errors: map[string]string{}}
	for _, n := range names {
		p, err := framework.TaskContextOf(ctx).File(n)
		if err != nil {
			s.Errors[n] = err.Error()
			continue
		}
		c, err := readTree(p)
		if err != nil {
			return s, fmt.Errorf("read %s at %s: %w", n, p, err)
		}
		s.Contents[n] = c
	}
	return s, nil
})

// readTree is a file's content, or a directory's files as sorted
// "rel=content" lines.
func readTree(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		b, err := os.ReadFile(p)
		return string(b), err
	}
	var lines []string
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(q)
		rel, _ := filepath.Rel(p, q)
		lines = append(lines, filepath.ToSlash(rel)+"="+string(b))
		return err
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n"), err
}

// Check runs the scenario on fc with tasks tasks per job:
//
//  1. a job before anything was added: File fails, naming the file;
//  2. a local file, a directory, a local archive and a remote http URL are
//     added (the same content again is accepted, other content under a name
//     taken is refused with ErrFileConflict);
//  3. a job reads all four through TaskContext.File and gets the content
//     the driver wrote, on executors that were running before the files
//     were added (separate: whether the executors are processes of their
//     own, so that the first job's processes can be recognised);
//  4. a third job reads them again and the remote URL is not fetched again:
//     each executor fetched it at most once.
func Check(t testing.TB, fc *framework.Context, tasks int, separate bool) {
	t.Helper()
	dir := t.TempDir()
	mark := fmt.Sprint(time.Now().UnixNano())
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	local := filepath.Join(dir, "a.txt")
	write(local, "alpha "+mark)
	tree := filepath.Join(dir, "conf")
	write(filepath.Join(tree, "x.txt"), "ex "+mark)
	write(filepath.Join(tree, "sub", "y.txt"), "why "+mark)
	archive := filepath.Join(dir, "data.tar.gz")
	writeArchive(t, archive, map[string]string{"c.txt": "see " + mark, "d/e.txt": "ee " + mark})
	var remoteHits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/pub/remote.txt" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "a credential was sent to a remote URL", http.StatusBadRequest)
			return
		}
		remoteHits.Add(1)
		fmt.Fprint(w, "remote "+mark)
	}))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	inputs := func(names ...string) [][]string {
		in := make([][]string, tasks)
		for i := range in {
			in[i] = names
		}
		return in
	}
	first, err := framework.Map(ctx, fc, Read, inputs("a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	before := map[int]bool{}
	for i, s := range first {
		if e := s.Errors["a.txt"]; !strings.Contains(e, `"a.txt"`) || !strings.Contains(e, "no file was added") {
			t.Fatalf("task %d before AddFile: File(a.txt) error %q, content %q", i, e, s.Contents["a.txt"])
		}
		before[s.PID] = true
	}

	for _, add := range []func() error{
		func() error { return fc.AddFile(local) },
		func() error { return fc.AddDir(tree) },
		func() error { return fc.AddArchive(archive) },
		func() error { return fc.AddFile(srv.URL + "/pub/remote.txt") },
		func() error { return fc.AddFile(local) }, // the same again: accepted
	} {
		if err := add(); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "other", "a.txt")
	write(other, "another alpha")
	if err := fc.AddFile(other); !errors.Is(err, framework.ErrFileConflict) || !strings.Contains(err.Error(), `"a.txt"`) {
		t.Fatalf("AddFile of another a.txt: %v, want ErrFileConflict naming a.txt", err)
	}

	want := map[string]string{
		"a.txt":       "alpha " + mark,
		"conf":        "sub/y.txt=why " + mark + "\nx.txt=ex " + mark,
		"data.tar.gz": "c.txt=see " + mark + "\nd/e.txt=ee " + mark,
		"remote.txt":  "remote " + mark,
	}
	names := []string{"a.txt", "conf", "data.tar.gz", "remote.txt"}
	pids := map[int]bool{}
	for round := 0; round < 2; round++ {
		got, err := framework.Map(ctx, fc, Read, inputs(names...))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range got {
			if len(s.Errors) != 0 {
				t.Fatalf("round %d task %d: %v", round, i, s.Errors)
			}
			for _, n := range names {
				if s.Contents[n] != want[n] {
					t.Fatalf("round %d task %d: %s has %q, want %q", round, i, n, s.Contents[n], want[n])
				}
			}
			pids[s.PID] = true
		}
		if round == 0 {
			hits := remoteHits.Load()
			if hits < 1 || hits > int64(len(pids)) {
				t.Fatalf("the remote URL was fetched %d times by %d executors", hits, len(pids))
			}
		}
	}
	if hits := remoteHits.Load(); hits > int64(len(pids)) {
		t.Fatalf("the remote URL was fetched %d times by %d executors: an executor fetched a file twice", hits, len(pids))
	}
	if separate {
		reused := false
		for p := range pids {
			reused = reused || before[p]
		}
		if !reused {
			t.Fatalf("no executor of the first job (%v) ran the later ones (%v): files added after executors started were not shown to reach them", before, pids)
		}
	}
}

func writeArchive(t testing.TB, p string, entries map[string]string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(entries[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(entries[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Close(), zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
}
