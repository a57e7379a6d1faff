package codec_test

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/storage/codec"
)

func TestRoundTripEveryWriter(t *testing.T) {
	text := strings.Repeat("the quick brown fox\n", 5000)
	for _, name := range []string{"gzip", "zstd", "xz"} {
		c, err := codec.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := c.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, text)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, ok := codec.ForPath("s3://b/part-00000" + c.Ext)
		if !ok || got.Name != name {
			t.Fatalf("ForPath(%s) = %v %v", c.Ext, got.Name, ok)
		}
		r, err := got.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != text {
			t.Fatalf("%s: %d bytes back, err %v", name, len(b), err)
		}
	}
}

// Files made by the standard tools (when installed) decompress to their input.
func TestReadsToolOutput(t *testing.T) {
	text := strings.Repeat("line of text 0123456789\n", 2000)
	for _, tool := range [][]string{{"gzip", "-c"}, {"bzip2", "-c"}, {"xz", "-c"}, {"zstd", "-c", "-q"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			continue
		}
		cmd := exec.Command(tool[0], tool[1:]...)
		cmd.Stdin = strings.NewReader(text)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst"}[tool[0]]
		c, ok := codec.ForPath("/x/f" + strings.ToUpper(ext))
		if !ok {
			t.Fatalf("no codec for %s", ext)
		}
		r, err := c.NewReader(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != text {
			t.Fatalf("%s output: %d bytes back, err %v", tool[0], len(b), err)
		}
	}
}

func TestByNameErrors(t *testing.T) {
	if _, err := codec.ByName("bzip2"); err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Fatalf("bzip2: %v", err)
	}
	if _, err := codec.ByName("lzo"); err == nil || !strings.Contains(err.Error(), "gzip, xz, zstd") {
		t.Fatalf("lzo: %v", err)
	}
	if c, err := codec.ByName("none"); err != nil || c.NewReader != nil {
		t.Fatalf("none: %v", err)
	}
	if _, ok := codec.ForPath("/x/f.txt"); ok {
		t.Fatal("a .txt file has a codec")
	}
}
