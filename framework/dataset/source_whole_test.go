package dataset_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

type wholeArgs struct {
	Path     string
	MinParts int
	Binary   bool
}

type wholeOut struct {
	Files map[string]string // path → content (BinaryFiles' bytes as a string)
	Parts [][]string        // each partition's paths, in order
}

// beforeWholeRead runs on the driver between planning and reading (tests that change inputs).
var beforeWholeRead func()

var wholeJob = dataset.JobResult("test.files.whole", func(b *dataset.Builder, a wholeArgs) (wholeOut, error) {
	var ds dataset.Dataset[dataset.KV[string, string]]
	if a.Binary {
		ds = dataset.Map(dataset.BinaryFiles(b, a.Path, a.MinParts), func(kv dataset.KV[string, []byte]) dataset.KV[string, string] {
			return dataset.KV[string, string]{Key: kv.Key, Value: string(kv.Value)}
		})
	} else {
		ds = dataset.WholeTextFiles(b, a.Path, a.MinParts)
	}
	if b.Driver() && beforeWholeRead != nil {
		beforeWholeRead()
	}
	parts, err := dataset.Collect(dataset.Glom(ds))
	if err != nil {
		return wholeOut{}, err
	}
	out := wholeOut{Files: map[string]string{}}
	for _, p := range parts {
		var names []string
		for _, kv := range p {
			if _, dup := out.Files[kv.Key]; dup {
				return wholeOut{}, fmt.Errorf("file %s read twice", kv.Key)
			}
			out.Files[kv.Key] = kv.Value
			names = append(names, kv.Key)
		}
		out.Parts = append(out.Parts, names)
	}
	return out, nil
})

// sparkWords is WholeTextFileRecordReaderSuite's files: "Spark is easy to use.\n" repeated
// and cut at 10, 100 and 1000 bytes.
func sparkWords() map[string]string {
	words := strings.Repeat("Spark is easy to use.\n", 50)
	return map[string]string{"part-00000": words[:10], "part-00001": words[:100], "part-00002": words[:1000]}
}

func writeFiles(t *testing.T, dir string, files map[string]string, gz bool) map[string]string {
	t.Helper()
	want := map[string]string{}
	for name, content := range files {
		data := []byte(content)
		if gz {
			name += ".gz"
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			w.Write(data)
			w.Close()
			data = buf.Bytes()
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[p] = content
	}
	return want
}

func sameFiles(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d files, want %d: %v", len(got), len(want), keysOf(got))
	}
	for p, c := range want {
		if g, ok := got[p]; !ok || g != c {
			t.Fatalf("file %s: read %q (present %v), want %q", p, g, ok, c)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Spark's "Correctness of WholeTextFileRecordReader" (plain and with GzipCodec): every file
// once, keyed by its full path, with its whole content, in 3 partitions.
func TestWholeTextFilesSparkCorrectness(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		want := writeFiles(t, dir, sparkWords(), gz)
		fc := localContext(t)
		got, err := wholeJob.Run(context.Background(), fc, wholeArgs{Path: dir, MinParts: 3})
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, got.Files, want)
		if len(got.Parts) != 3 {
			t.Fatalf("gzip %v: %d partitions, want 3: %v", gz, len(got.Parts), got.Parts)
		}
	}
}

// A relative path is resolved on the driver; keys are absolute paths.
func TestWholeTextFilesRelativePath(t *testing.T) {
	dir := t.TempDir()
	want := writeFiles(t, dir, map[string]string{"a.txt": "alpha\nbeta", "empty.txt": ""}, false)
	t.Chdir(dir)
	got, err := wholeJob.Run(context.Background(), localContext(t), wholeArgs{Path: ".", MinParts: 0})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, got.Files, want)
}

// BinaryFiles gives every byte (NULs included) and a compressed file's raw bytes.
func TestBinaryFilesRawBytes(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"bytes.bin": string([]byte{0, 1, 2, 255, 0, '\n', 7}), "empty.bin": ""}
	want := writeFiles(t, dir, files, false)
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write([]byte("compressed text\n"))
	w.Close()
	gzPath := filepath.Join(dir, "c.txt.gz")
	if err := os.WriteFile(gzPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want[gzPath] = buf.String()
	got, err := wholeJob.Run(context.Background(), localContext(t), wholeArgs{Path: dir, MinParts: 2, Binary: true})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, got.Files, want)
}

// Many files of uneven sizes: at least minParts partitions, each file whole in one, the
// partitions in listing order and near equal in bytes but for one large file.
func TestWholeTextFilesPacking(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("f%02d", i)] = strings.Repeat("x", 100+i)
	}
	files["f40-big"] = strings.Repeat("y", 20000)
	want := writeFiles(t, dir, files, false)
	for _, minParts := range []int{1, 4, 7, 41, 100} {
		got, err := wholeJob.Run(context.Background(), localContext(t), wholeArgs{Path: dir, MinParts: minParts})
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, got.Files, want)
		if wantParts := min(minParts, 41); len(got.Parts) != wantParts {
			t.Fatalf("minParts %d: %d partitions, want %d", minParts, len(got.Parts), wantParts)
		}
		var order []string
		for _, p := range got.Parts {
			if len(p) == 0 {
				t.Fatalf("minParts %d: an empty partition: %v", minParts, got.Parts)
			}
			order = append(order, p...)
		}
		for i := range order {
			if wantName := filepath.Join(dir, fmt.Sprintf("f%02d", i)); i < 40 && order[i] != wantName {
				t.Fatalf("minParts %d: file %d is %s, want %s (listing order)", minParts, i, order[i], wantName)
			}
		}
		if minParts == 4 {
			// 40 small files (≈4.8 KB) and one of 20 KB: the small ones before it share
			// the first partitions, the big one closes the last.
			last := got.Parts[len(got.Parts)-1]
			if last[len(last)-1] != filepath.Join(dir, "f40-big") {
				t.Fatalf("the big file is not last: %v", got.Parts)
			}
		}
	}
}

// A file changed between listing and reading fails the job with TextFile's error, naming it.
func TestWholeTextFilesChangedAfterListing(t *testing.T) {
	t.Cleanup(func() { beforeWholeRead = nil })
	for _, binary := range []bool{false, true} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"a.txt": "one\n"}, false)
		p := filepath.Join(dir, "a.txt")
		beforeWholeRead = func() { os.WriteFile(p, []byte("one and two\n"), 0o644) }
		_, err := wholeJob.Run(context.Background(), localContext(t, "flint.task.maxFailures", "1"), wholeArgs{Path: dir, MinParts: 1, Binary: binary})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "changed since it was listed") {
			t.Fatalf("binary %v: %v", binary, err)
		}
	}
}

// Objects under an s3:// prefix: keys are the s3:// URLs; a replaced object is the same error.
func TestWholeTextFilesS3(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	ctx := s3Context(t, srv)
	t.Cleanup(func() { beforeWholeRead = nil })
	putObject(t, srv, "data", "in/a.txt", []byte("alpha\n"))
	putObject(t, srv, "data", "in/b.txt", []byte("beta\ngamma"))
	want := map[string]string{"s3://data/in/a.txt": "alpha\n", "s3://data/in/b.txt": "beta\ngamma"}
	for _, binary := range []bool{false, true} {
		got, err := wholeJob.Run(ctx, localContext(t, s3conf(srv)...), wholeArgs{Path: "s3://data/in/", MinParts: 2, Binary: binary})
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, got.Files, want)
	}
	beforeWholeRead = func() { putObject(t, srv, "data", "in/a.txt", []byte("ALPHA\n")) }
	_, err := wholeJob.Run(ctx, localContext(t, s3conf(srv, "flint.task.maxFailures", "1")...), wholeArgs{Path: "s3://data/in/", MinParts: 2})
	if err == nil || !strings.Contains(err.Error(), "s3://data/in/a.txt") || !strings.Contains(err.Error(), "changed since it was listed") {
		t.Fatalf("changed object: %v", err)
	}
}

// A path matching nothing fails at planning, naming it.
func TestWholeTextFilesMissingPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nothing-here")
	_, err := wholeJob.Run(context.Background(), localContext(t), wholeArgs{Path: p, MinParts: 2})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "wholeTextFiles") {
		t.Fatalf("missing path: %v", err)
	}
}
