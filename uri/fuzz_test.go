package uri

import (
	"archive/tar"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxFiles: 200}

func FuzzExtractTar(f *testing.F) {
	f.Add(tarBytes(f, dirEnt("d/"), file("d/f", "x"), symlinkEnt("d/l", "f"), hardlinkEnt("h", "d/f")))
	f.Add(tarBytes(f, symlinkEnt("l", "../"), file("l/x", "x")))
	f.Add(tarBytes(f, symlinkEnt("a/b/l", "../../x"), symlinkEnt("t", "a/../../x")))
	f.Add(tarBytes(f, file("../x", "x"), file("/etc/x", "x")))
	f.Add(tarBytes(f, tarEntry{name: "p", typ: tar.TypeFifo}, hardlinkEnt("h", "/etc/passwd")))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkExtractConfined(t, "in.tar", data)
	})
}

func FuzzExtractZip(f *testing.F) {
	f.Add(zipBytes(f, zipEntry{name: "d/"}, zipEntry{name: "d/f", body: "x"}, zipEntry{name: "d/l", body: "f", mode: fs.ModeSymlink | 0o777}))
	f.Add(zipBytes(f, zipEntry{name: "../../evil", body: "x"}, zipEntry{name: `..\x`, body: "x"}))
	f.Add(zipBytes(f, zipEntry{name: "l", body: "..", mode: fs.ModeSymlink | 0o777}, zipEntry{name: "l/x", body: "x"}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkExtractConfined(t, "in.zip", data)
	})
}

// checkExtractConfined extracts data and checks that nothing appeared next
// to the destination, that a failure leaves the destination empty, and that
// every path inside resolves inside it.
func checkExtractConfined(t *testing.T, name string, data []byte) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "dest")
	arch := filepath.Join(parent, name)
	if err := os.WriteFile(arch, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Extract(arch, dest, fuzzLimits)
	des, rerr := os.ReadDir(parent)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var top []string
	for _, de := range des {
		top = append(top, de.Name())
	}
	if want := []string{"dest", name}; !slices.Equal(top, want) {
		t.Fatalf("wrote outside the destination: %v (err %v)", top, err)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "uri: extract ") {
		t.Fatalf("error without prefix: %v", err)
	}
	realDest, _ := filepath.EvalSymlinks(dest)
	var n int
	werr := filepath.WalkDir(dest, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if p == dest {
			return nil
		}
		n++
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			if filepath.IsAbs(target) {
				t.Fatalf("absolute symlink %s -> %s", p, target)
			}
		}
		if d.Type()&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
			t.Fatalf("special file %s", p)
		}
		if fi, _ := os.Lstat(p); fi != nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			t.Fatalf("setuid file %s", p)
		}
		resolved, rerr := filepath.EvalSymlinks(p)
		if rerr == nil && resolved != realDest && !strings.HasPrefix(resolved, realDest+"/") {
			t.Fatalf("%s resolves outside the destination: %s", p, resolved)
		}
		return nil
	})
	if werr != nil {
		t.Fatal(werr)
	}
	if err != nil && n != 0 {
		t.Fatalf("failed extraction (%v) left %d entries", err, n)
	}
	if n > fuzzLimits.MaxFiles {
		t.Fatalf("%d entries beyond the limit", n)
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"http://host/dir/file.tgz?x=1#sha256=" + strings.Repeat("ab", 32), "https://h/", "file:///tmp/x",
		"file://localhost/tmp/x", "/abs/path", "rel/path", "hdfs://nn/x", "http://h/a%2F..%2Fb",
		"http://[::1]:80/x", " \t/x", "HTTP://H/X", "http://h/..", "file:///", "a://b",
	} {
		f.Add(s, "out/file")
		f.Add(s, "../x")
	}
	f.Fuzz(func(t *testing.T, value, out string) {
		src, err := parseURI(value)
		if err != nil {
			if !errors.Is(err, ErrInvalidURI) && !errors.Is(err, ErrUnsupportedScheme) {
				t.Fatalf("%q: unclassified error %v", value, err)
			}
			return
		}
		if strings.ContainsAny(value, "\\'\x00") {
			t.Fatalf("%q: forbidden character accepted", value)
		}
		switch src.kind {
		case kindLocal:
			if !filepath.IsAbs(src.path) || filepath.Clean(src.path) != src.path {
				t.Fatalf("%q: local path %q", value, src.path)
			}
		case kindHTTP:
			if (src.url.Scheme != "http" && src.url.Scheme != "https") || src.url.Host == "" || src.url.Fragment != "" {
				t.Fatalf("%q: url %v", value, src.url)
			}
		default:
			t.Fatalf("%q: kind %d", value, src.kind)
		}
		for _, u := range []*mesos.CommandInfo_URI{{Value: value}, {Value: value, OutputFile: &out}} {
			name, err := outputName(u, src)
			if err != nil {
				if !errors.Is(err, ErrInvalidURI) {
					t.Fatalf("%q/%q: %v", value, out, err)
				}
				continue
			}
			if !filepath.IsLocal(name) || name == "." || strings.ContainsAny(name, "\\\x00") {
				t.Fatalf("%q/%q: output name %q leaves the sandbox", value, out, name)
			}
			if u.OutputFile == nil && strings.Contains(name, "/") {
				t.Fatalf("%q: basename %q has a slash", value, name)
			}
		}
	})
}
