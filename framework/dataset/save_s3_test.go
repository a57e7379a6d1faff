package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/storage"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

type saveArgs struct {
	N, Parts  int
	Out       string
	Codec     string
	Overwrite bool
	Hold      bool // partition 0's first attempt writes, then waits to be killed
	FailPart  int  // >0: partition FailPart-1 fails every attempt after writing
}

var saveJob = dataset.Job("test.files.save", func(b *dataset.Builder, a saveArgs) error {
	xs := dataset.Range(b, 0, int64(a.N), a.Parts)
	lines := dataset.MapPartitions(xs, func(p int, records func(func(int64) bool), yield func(string)) error {
		for x := range records {
			yield(fmt.Sprintf("record %d", x))
		}
		if a.FailPart > 0 && p == a.FailPart-1 {
			return errors.New("this partition always fails")
		}
		return nil
	})
	var opts []dataset.SaveOption
	if a.Codec != "" {
		opts = append(opts, dataset.Compress(a.Codec))
	}
	if a.Overwrite {
		opts = append(opts, dataset.Overwrite())
	}
	return dataset.SaveAsTextFile(lines, a.Out, opts...)
})

// s3Files lists the objects under prefix by name relative to it.
func s3Files(t *testing.T, fs *s3fs.FS, prefix string) []string {
	t.Helper()
	files, err := fs.List(context.Background(), prefix)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f.Path, prefix+"/"))
	}
	return out
}

func testFS(t *testing.T, srv *s3server.Server) *s3fs.FS {
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: srv.Endpoint, Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.CloseIdleConnections)
	return fs
}

func wantRecords(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("record %d", i))
	}
	slices.Sort(out)
	return out
}

// A job writes to S3 and reads its output back, compressed or not; writing again needs
// Overwrite; _SUCCESS is there, no upload is left open.
func TestSaveAsTextFileS3RoundTrip(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	ctx := s3Context(t, srv)
	fs := testFS(t, srv)
	for _, c := range []struct{ codec, ext string }{{"", ""}, {"gzip", ".gz"}, {"zstd", ".zst"}} {
		out := "s3://out/run" + c.ext
		fc := localContext(t, s3conf(srv)...)
		if _, err := saveJob.Run(ctx, fc, saveArgs{N: 5000, Parts: 3, Out: out, Codec: c.codec}); err != nil {
			t.Fatal(err)
		}
		want := []string{"_SUCCESS", "part-00000" + c.ext, "part-00001" + c.ext, "part-00002" + c.ext}
		if got := s3Files(t, fs, out); !slices.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", out, got, want)
		}
		back, err := linesJob.Run(ctx, fc, linesArgs{Paths: []string{out}})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(back.Lines)
		if !slices.Equal(back.Lines, wantRecords(5000)) {
			t.Fatalf("%s: read back %d lines, want the 5000 records once each", out, len(back.Lines))
		}
		if ups, _ := fs.Uploads(context.Background(), out); len(ups) != 0 {
			t.Fatalf("uploads left open: %v", ups)
		}
	}
	fc := localContext(t, s3conf(srv)...)
	_, err := saveJob.Run(ctx, fc, saveArgs{N: 10, Parts: 2, Out: "s3://out/run"})
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "Overwrite") {
		t.Fatalf("writing into a non-empty output: %v", err)
	}
	if _, err := saveJob.Run(ctx, fc, saveArgs{N: 10, Parts: 2, Out: "s3://out/run", Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got := s3Files(t, fs, "s3://out/run"); !slices.Equal(got, []string{"_SUCCESS", "part-00000", "part-00001"}) {
		t.Fatalf("after overwrite: %v", got)
	}
}

// A job whose task fails every attempt leaves no part file, no _SUCCESS and no open upload.
func TestSaveAsTextFileS3FailedJobLeavesNothing(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	ctx := s3Context(t, srv)
	fs := testFS(t, srv)
	fc := localContext(t, s3conf(srv, "flint.master", "local[2,2]")...)
	_, err := saveJob.Run(ctx, fc, saveArgs{N: 1000, Parts: 4, Out: "s3://out/failed", FailPart: 3})
	if err == nil || !strings.Contains(err.Error(), "always fails") {
		t.Fatalf("err = %v", err)
	}
	if got := s3Files(t, fs, "s3://out/failed"); !slices.Equal(got, []string{storage.AbortMarker}) {
		t.Fatalf("a failed job left %v, want only its hidden %s marker", got, storage.AbortMarker)
	}
	if ups, _ := fs.Uploads(context.Background(), "s3://out/failed"); len(ups) != 0 {
		t.Fatalf("uploads left open: %v", ups)
	}
	// The marker alone does not make the output non-empty: the same job reruns into it
	// without Overwrite, and the marker is gone from the committed output.
	if _, err := saveJob.Run(ctx, fc, saveArgs{N: 1000, Parts: 4, Out: "s3://out/failed"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"_SUCCESS", "part-00000", "part-00001", "part-00002", "part-00003"}
	if got := s3Files(t, fs, "s3://out/failed"); !slices.Equal(got, want) {
		t.Fatalf("the rerun's output holds %v, want %v", got, want)
	}
}
