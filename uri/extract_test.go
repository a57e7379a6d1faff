package uri

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// TestFetchArchives fetches each archive type over HTTP and checks the
// extracted tree (Mesos keeps the archive next to its contents).
func TestFetchArchives(t *testing.T) {
	plain := tarBytes(t, dirEnt("pkg/"), file("pkg/hello.txt", "hello"), symlinkEnt("pkg/link", "hello.txt"))
	bz2, err := os.ReadFile("testdata/hello.tbz2")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"/a.tar":     plain,
		"/a.tgz":     gzipBytes(t, plain),
		"/a.tar.gz":  gzipBytes(t, plain),
		"/a.txz":     xzBytes(t, plain),
		"/a.tar.xz":  xzBytes(t, plain),
		"/a.zip":     zipBytes(t, zipEntry{name: "pkg/"}, zipEntry{name: "pkg/hello.txt", body: "hello"}, zipEntry{name: "pkg/link", body: "hello.txt", mode: fs.ModeSymlink | 0o777}),
		"/a.tbz2":    bz2,
		"/a.tar.bz2": bz2,
	}
	srv := newFileServer(t, files)
	for path := range files {
		t.Run(path, func(t *testing.T) {
			sandbox := t.TempDir()
			res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(srv.URL + path)}, sandbox)
			if err != nil {
				t.Fatal(err)
			}
			if !res[0].Extracted || res[0].Path != "." || res[0].Bytes != int64(len(files[path])) {
				t.Fatalf("result %+v", res[0])
			}
			want := []string{path[1:], "pkg", "pkg/hello.txt", "pkg/link@"}
			body := "hello"
			if strings.Contains(path, "bz2") {
				want, body = []string{path[1:], "pkg", "pkg/hello.txt"}, "hello bzip2\n"
			}
			if got := tree(t, sandbox); !slices.Equal(got, want) {
				t.Fatalf("tree %v, want %v", got, want)
			}
			if got := readString(t, filepath.Join(sandbox, "pkg/hello.txt")); got != body {
				t.Fatalf("content %q", got)
			}
		})
	}
}

func TestFetchBareGzipAndNoExtract(t *testing.T) {
	tgz := gzipBytes(t, tarBytes(t, file("inner", "x")))
	srv := newFileServer(t, map[string][]byte{
		"/data.csv.gz": gzipBytes(t, []byte("a,b\n")),
		"/keep.tgz":    tgz,
		"/notes.bz2":   []byte("not an archive type Mesos knows"),
	})
	sandbox := t.TempDir()
	res, err := New(Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{
		mkURI(srv.URL + "/data.csv.gz"),
		mkURI(srv.URL+"/keep.tgz", noExtract()),
		mkURI(srv.URL + "/notes.bz2"),
	}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Path != "data.csv" || !res[0].Extracted || res[1].Extracted || res[2].Extracted {
		t.Fatalf("results %+v", res)
	}
	if got := readString(t, filepath.Join(sandbox, "data.csv")); got != "a,b\n" {
		t.Fatalf("gunzipped %q", got)
	}
	if got := tree(t, sandbox); !slices.Equal(got, []string{"data.csv", "data.csv.gz", "keep.tgz", "notes.bz2"}) {
		t.Fatalf("tree %v", got)
	}
}

func TestFetchArchiveWithOutputFileExtractsToSandboxTop(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/download": gzipBytes(t, tarBytes(t, file("bin/run", "r")))})
	sandbox := t.TempDir()
	_, err := New(Config{}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{mkURI(srv.URL+"/download", output("dl/app.tgz"))}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(t, sandbox); !slices.Equal(got, []string{"bin", "bin/run", "dl", "dl/app.tgz"}) {
		t.Fatalf("tree %v", got)
	}
}

func TestExtractModes(t *testing.T) {
	dest := t.TempDir()
	arch := writeTemp(t, t.TempDir(), "m.tar", tarBytes(t,
		tarEntry{name: "ro/", typ: tar.TypeDir, mode: 0o555},
		tarEntry{name: "ro/suid", body: "s", typ: tar.TypeReg, mode: 0o4755},
		tarEntry{name: "priv", body: "p", typ: tar.TypeReg, mode: 0o600},
	))
	if err := Extract(arch, dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"ro": 0o755, "ro/suid": 0o755, "priv": 0o600} {
		if got := perm(t, filepath.Join(dest, name)); got != want {
			t.Errorf("%s: mode %v, want %v", name, got, want)
		}
	}
	fi, _ := os.Stat(filepath.Join(dest, "ro/suid"))
	if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		t.Fatalf("setuid kept: %v", fi.Mode())
	}
	if err := Extract(filepath.Join(t.TempDir(), "x.rar"), dest, Limits{}); !errors.Is(err, ErrNotArchive) {
		t.Fatalf("err = %v", err)
	}
}

func TestExtractSkipsGlobalHeader(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// What git archive writes first.
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": "0123abcd"}, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "README", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte("hi"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	if err := Extract(writeTemp(t, t.TempDir(), "src.tar", buf.Bytes()), dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dest); !slices.Equal(got, []string{"README"}) {
		t.Fatalf("tree %v", got)
	}
}

func TestExtractHardlinkInside(t *testing.T) {
	dest := t.TempDir()
	arch := writeTemp(t, t.TempDir(), "h.tar", tarBytes(t, file("a", "same"), hardlinkEnt("b", "a")))
	if err := Extract(arch, dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	if readString(t, filepath.Join(dest, "b")) != "same" {
		t.Fatal("hard link content")
	}
}

// TestExtractHostile checks each hostile archive is refused with the right
// sentinel and the entry named, leaves nothing in the destination, and
// writes nothing next to it.
func TestExtractHostile(t *testing.T) {
	many := make([]tarEntry, 11)
	for i := range many {
		many[i] = file(strings.Repeat("f", i+1), "")
	}
	cases := []struct {
		name  string
		file  string
		data  func(t *testing.T) []byte
		want  error
		entry string
	}{
		{"dotdot", "a.tar", func(t *testing.T) []byte { return tarBytes(t, file("ok", "1"), file("../x", "x")) }, ErrUnsafeArchive, "../x"},
		{"inner dotdot", "a.tar", func(t *testing.T) []byte { return tarBytes(t, file("a/../../x", "x")) }, ErrUnsafeArchive, "a/../../x"},
		{"absolute", "a.tar", func(t *testing.T) []byte { return tarBytes(t, file("/etc/x", "x")) }, ErrUnsafeArchive, "/etc/x"},
		{"symlink out then through", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, symlinkEnt("l", "../"), file("l/x", "x"))
		}, ErrUnsafeArchive, `"l"`},
		{"symlink inside then through", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, dirEnt("d/"), symlinkEnt("l", "d"), file("l/x", "x"))
		}, ErrUnsafeArchive, "l/x"},
		{"symlink absolute", "a.tar", func(t *testing.T) []byte { return tarBytes(t, symlinkEnt("l", "/etc/passwd")) }, ErrUnsafeArchive, `"l"`},
		{"symlink climbs too far", "a.tar", func(t *testing.T) []byte { return tarBytes(t, symlinkEnt("a/b/l", "../../../x")) }, ErrUnsafeArchive, "a/b/l"},
		{"symlink dotdot after name", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, symlinkEnt("t", "a/../../x"), symlinkEnt("a", "."))
		}, ErrUnsafeArchive, `"t"`},
		{"hardlink out", "a.tar", func(t *testing.T) []byte { return tarBytes(t, hardlinkEnt("h", "../outside")) }, ErrUnsafeArchive, `"h"`},
		{"hardlink absolute", "a.tar", func(t *testing.T) []byte { return tarBytes(t, hardlinkEnt("h", "/etc/passwd")) }, ErrUnsafeArchive, `"h"`},
		{"hardlink to symlink", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, symlinkEnt("s", "x"), hardlinkEnt("h", "s"))
		}, ErrUnsafeArchive, `"h"`},
		{"char device", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, tarEntry{name: "null", typ: tar.TypeChar, mode: 0o666})
		}, ErrUnsafeArchive, "null"},
		{"fifo", "a.tar", func(t *testing.T) []byte { return tarBytes(t, tarEntry{name: "p", typ: tar.TypeFifo, mode: 0o666}) }, ErrUnsafeArchive, `"p"`},
		{"zip slip", "a.zip", func(t *testing.T) []byte {
			return zipBytes(t, zipEntry{name: "ok", body: "1"}, zipEntry{name: "../../evil", body: "x"})
		}, ErrUnsafeArchive, "../../evil"},
		{"zip backslash slip", "a.zip", func(t *testing.T) []byte { return zipBytes(t, zipEntry{name: `..\evil`, body: "x"}) }, ErrUnsafeArchive, "evil"},
		{"zip symlink out", "a.zip", func(t *testing.T) []byte {
			return zipBytes(t, zipEntry{name: "l", body: "../..", mode: fs.ModeSymlink | 0o777}, zipEntry{name: "l/x", body: "x"})
		}, ErrUnsafeArchive, `"l"`},
		{"too many files", "a.tar", func(t *testing.T) []byte { return tarBytes(t, many...) }, ErrTooLarge, "fffffffffff"},
		{"too many zip files", "a.zip", func(t *testing.T) []byte {
			var es []zipEntry
			for i := range 11 {
				es = append(es, zipEntry{name: strings.Repeat("z", i+1)})
			}
			return zipBytes(t, es...)
		}, ErrTooLarge, "11 entries"},
		{"too many bytes", "a.tar", func(t *testing.T) []byte {
			return tarBytes(t, file("a", strings.Repeat("a", 600)), file("b", strings.Repeat("b", 600)))
		}, ErrTooLarge, `"b"`},
		{"tgz bomb", "a.tgz", func(t *testing.T) []byte {
			return gzipBytes(t, tarBytes(t, file("zeros", string(make([]byte, 1<<20)))))
		}, ErrTooLarge, "zeros"},
		{"zip bomb", "a.zip", func(t *testing.T) []byte {
			return zipBytes(t, zipEntry{name: "zeros", body: string(make([]byte, 1<<20))})
		}, ErrTooLarge, "zeros"},
		{"gzip bomb", "zeros.gz", func(t *testing.T) []byte { return gzipBytes(t, make([]byte, 1<<20)) }, ErrTooLarge, "zeros"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "dest")
			arch := writeTemp(t, parent, tc.file, tc.data(t))
			err := Extract(arch, dest, Limits{MaxBytes: 1000, MaxFiles: 10})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			errContains(t, err, "uri: extract", tc.entry)
			want := []string{tc.file, "dest"}
			slices.Sort(want)
			if got := tree(t, parent); !slices.Equal(got, want) {
				t.Fatalf("left behind: %v", got)
			}
		})
	}
}

func TestExtractKeepsExistingFilesOnFailure(t *testing.T) {
	dest := t.TempDir()
	writeTemp(t, dest, "mine", []byte("keep"))
	arch := writeTemp(t, t.TempDir(), "a.tar", tarBytes(t, dirEnt("new/"), file("new/f", "f"), file("../x", "x")))
	if err := Extract(arch, dest, Limits{}); !errors.Is(err, ErrUnsafeArchive) {
		t.Fatalf("err = %v", err)
	}
	if got := tree(t, dest); !slices.Equal(got, []string{"mine"}) {
		t.Fatalf("tree %v", got)
	}
}

func TestExtractRefusesPreexistingSymlinkOnPath(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "dest")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(dest, "up")); err != nil {
		t.Fatal(err)
	}
	arch := writeTemp(t, t.TempDir(), "a.tar", tarBytes(t, file("up/x", "x")))
	if err := Extract(arch, dest, Limits{}); !errors.Is(err, ErrUnsafeArchive) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("escaped through a pre-existing symlink")
	}
}

func TestExtractReplacesSymlinkWithFile(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "dest")
	arch := writeTemp(t, parent, "a.tar", tarBytes(t, symlinkEnt("f", "g"), file("g", "g"), file("f", "new")))
	if err := Extract(arch, dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	if readString(t, filepath.Join(dest, "g")) != "g" || readString(t, filepath.Join(dest, "f")) != "new" {
		t.Fatal("wrote through the symlink instead of replacing it")
	}
	if fi, err := os.Lstat(filepath.Join(dest, "f")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("f is not a regular file: %v", err)
	}
}

// IsArchive is the fetcher's own rule, which drivers use to know what an
// agent will do with a URI: case-sensitive suffixes, a bare .gz included.
func TestIsArchive(t *testing.T) {
	for name, want := range map[string]bool{
		"a.tar": true, "a.tgz": true, "a.tar.gz": true, "a.tbz2": true, "a.tar.bz2": true,
		"a.txz": true, "a.tar.xz": true, "a.zip": true, "flint.gz": true,
		"flint": false, "a.TAR.GZ": false, "a.Zip": false, "a.tar.gz.sig": false, "gz": false,
	} {
		if got := IsArchive(name); got != want {
			t.Errorf("IsArchive(%q) = %t, want %t", name, got, want)
		}
		// Extract agrees: what IsArchive calls no archive is ErrNotArchive.
		if err := Extract(filepath.Join(t.TempDir(), name), t.TempDir(), Limits{}); want == errors.Is(err, ErrNotArchive) {
			t.Errorf("Extract(%q): %v, but IsArchive says %t", name, err, want)
		}
	}
}
