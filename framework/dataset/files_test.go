package dataset_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

type linesArgs struct{ Paths []string }

type linesOut struct {
	Lines []string
	Parts int
}

// beforeRead runs on the driver between planning and reading (tests that change inputs).
var beforeRead func()

var linesJob = dataset.JobResult("test.files.lines", func(b *dataset.Builder, a linesArgs) (linesOut, error) {
	ds := dataset.TextFile(b, a.Paths...)
	if b.Driver() && beforeRead != nil {
		beforeRead()
	}
	lines, err := dataset.Collect(ds)
	return linesOut{Lines: lines, Parts: ds.Partitions()}, err
})

// s3Context is a local[2] context whose s3:// paths reach srv.
func s3Context(t *testing.T, srv *s3server.Server, kv ...string) context.Context {
	t.Helper()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Cleanup(s3fs.CloseIdleConnections)
	return context.Background()
}

func s3conf(srv *s3server.Server, kv ...string) []string {
	var out []string
	for _, c := range srv.Conf() {
		k, v, _ := strings.Cut(c, "=")
		out = append(out, k, v)
	}
	return append(out, kv...)
}

// compressWith runs the standard tool (gzip, zstd, bzip2, xz) on text: the files users have.
func compressWith(t *testing.T, tool, text string) []byte {
	t.Helper()
	cmd := exec.Command(tool, "-c")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return out
}

func numbered(prefix string, n int) (string, []string) {
	var sb strings.Builder
	var lines []string
	for i := range n {
		l := fmt.Sprintf("%s line %d %s", prefix, i, strings.Repeat("x", i%17))
		lines = append(lines, l)
		sb.WriteString(l + "\n")
	}
	return sb.String(), lines
}

// putObject writes an object through the S3 API (the server keeps its ETag).
func putObject(t *testing.T, srv *s3server.Server, bucket, key string, data []byte) {
	t.Helper()
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: srv.Endpoint, Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.CloseIdleConnections()
	w, err := fs.Create(context.Background(), "s3://"+bucket+"/"+key)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Plain, CRLF, gzip, zstd, bzip2 and xz objects under one prefix, a large plain one split in
// byte ranges and small ones packed: every line once.
func TestTextFileS3EveryCodec(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	ctx := s3Context(t, srv)
	var want []string
	add := func(key string, data []byte, lines []string) {
		putObject(t, srv, "data", key, data)
		want = append(want, lines...)
	}
	big, bigLines := numbered("big", 3000)
	add("in/big.txt", []byte(big), bigLines)
	crlf, crlfLines := numbered("crlf", 10)
	for i := range crlfLines { // lines split at '\n' keep the '\r' before it
		crlfLines[i] += "\r"
	}
	add("in/crlf.txt", []byte(strings.ReplaceAll(crlf, "\n", "\r\n")), crlfLines)
	for _, tool := range []string{"gzip", "zstd", "bzip2", "xz"} {
		text, lines := numbered(tool, 500)
		ext := map[string]string{"gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}[tool]
		add("in/sub/f"+ext, compressWith(t, tool, text), lines)
	}
	putObject(t, srv, "data", "in/_SUCCESS", nil)
	putObject(t, srv, "data", "in/.hidden", []byte("not read\n"))

	fc := localContext(t, s3conf(srv, "flint.files.maxPartitionBytes", "16384", "flint.files.openCostInBytes", "0")...)
	out, err := linesJob.Run(ctx, fc, linesArgs{Paths: []string{"s3://data/in"}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out.Lines)
	slices.Sort(want)
	if !slices.Equal(out.Lines, want) {
		t.Fatalf("%d lines read, want %d (first difference near %q)", len(out.Lines), len(want), firstDiff(out.Lines, want))
	}
	// big.txt is cut in 16 KiB ranges; the others, small, are packed.
	if st, _ := os.Stat(filepath.Join(srv.Root, "data", "in", "big.txt")); out.Parts < int(st.Size()/16384) {
		t.Fatalf("%d partitions for a %d-byte file in 16 KiB splits", out.Parts, st.Size())
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return "the end"
}

// Small files are packed while their bytes plus the open cost fit: ten files of 100 bytes,
// 1000 bytes a split, each file costing 400 more: two a split.
func TestTextFilePacksSmallFiles(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 10 {
		text := fmt.Sprintf("%099d\n", i)
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), text)
		want = append(want, strings.TrimSpace(text))
	}
	for _, tc := range []struct {
		cost  string
		parts int
	}{{"400", 5}, {"0", 1}, {"1000", 10}} {
		fc := localContext(t, "flint.files.maxPartitionBytes", "1000", "flint.files.openCostInBytes", tc.cost)
		out, err := linesJob.Run(context.Background(), fc, linesArgs{Paths: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Parts != tc.parts || !slices.Equal(out.Lines, want) {
			t.Fatalf("open cost %s: %d partitions (want %d), lines %v", tc.cost, out.Parts, tc.parts, out.Lines)
		}
	}
}

// A truncated gzip file fails the job with one error naming the file and the codec.
func TestTextFileTruncatedGzip(t *testing.T) {
	dir := t.TempDir()
	text, _ := numbered("gz", 2000)
	gz := compressWith(t, "gzip", text)
	writeFile(t, filepath.Join(dir, "cut.gz"), string(gz[:len(gz)/2]))
	writeFile(t, filepath.Join(dir, "junk.gz"), "this is not gzip\n")
	for _, name := range []string{"cut.gz", "junk.gz"} {
		fc := localContext(t, "flint.task.maxFailures", "1")
		_, err := linesJob.Run(context.Background(), fc, linesArgs{Paths: []string{filepath.Join(dir, name)}})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, name)) || !strings.Contains(err.Error(), "gzip") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// An object replaced (same size, other bytes) or deleted between planning and reading fails
// the job naming it.
func TestTextFileS3ChangedOrDeletedAfterListing(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	ctx := s3Context(t, srv)
	t.Cleanup(func() { beforeRead = nil })
	for _, tc := range []struct {
		name, want string
		change     func()
	}{
		{"changed", "changed since it was listed", func() { putObject(t, srv, "data", "a.txt", []byte("line Two\n")) }},
		{"deleted", "gone", func() { os.Remove(filepath.Join(srv.Root, "data", "a.txt")) }},
	} {
		putObject(t, srv, "data", "a.txt", []byte("line one\n"))
		beforeRead = tc.change
		fc := localContext(t, s3conf(srv, "flint.task.maxFailures", "1")...)
		_, err := linesJob.Run(ctx, fc, linesArgs{Paths: []string{"s3://data/a.txt"}})
		if err == nil || !strings.Contains(err.Error(), "s3://data/a.txt") || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}

// Missing inputs and wrong credentials fail at planning, on the driver, with one error.
func TestTextFileS3PlanningErrors(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	ctx := s3Context(t, srv)
	putObject(t, srv, "data", "a.txt", []byte("x\n"))
	for _, tc := range []struct {
		path string
		conf []string
		want string
	}{
		{"s3://nobucket/a.txt", nil, "no such bucket"},
		{"s3://data/missing.txt", nil, "no such file"},
		{"s3://data/a.txt", []string{"flint.s3.secretKey", "wrong-s3-secret-61c0ffee42"}, "wrong credentials"},
	} {
		fc := localContext(t, s3conf(srv, tc.conf...)...)
		_, err := linesJob.Run(ctx, fc, linesArgs{Paths: []string{tc.path}})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if bytes.Contains([]byte(err.Error()), []byte("wrong-s3-secret")) || strings.Contains(err.Error(), s3server.SecretKey) {
			t.Fatalf("the error quotes a secret: %v", err)
		}
	}
}
