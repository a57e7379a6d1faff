package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/local"
)

// orderFS is the local file system under a scheme "order<n>", recording the committer's
// Create, Publish and AbortStaged calls in order.
type orderFS struct {
	mu  sync.Mutex
	ops []string
}

func (o *orderFS) log(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, op)
}

func toFile(p string) string {
	_, rest, _ := strings.Cut(p, "://")
	return "file://" + rest
}

func (o *orderFS) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	return local.FS{}.Stat(ctx, toFile(p))
}
func (o *orderFS) List(ctx context.Context, p string) ([]storage.FileInfo, error) {
	return local.FS{}.List(ctx, toFile(p))
}
func (o *orderFS) Open(ctx context.Context, f storage.FileInfo, off, n int64) (io.ReadCloser, error) {
	return local.FS{}.Open(ctx, f, off, n)
}
func (o *orderFS) Create(ctx context.Context, p string) (io.WriteCloser, error) {
	o.log("create " + filepath.Base(p))
	return local.FS{}.Create(ctx, toFile(p))
}
func (o *orderFS) Delete(ctx context.Context, p string) error {
	return local.FS{}.Delete(ctx, toFile(p))
}
func (o *orderFS) Stage(ctx context.Context, p string) (storage.Staged, error) {
	return local.FS{}.Stage(ctx, toFile(p))
}
func (o *orderFS) Publish(ctx context.Context, p storage.Pending) error {
	o.log("publish")
	return local.FS{}.Publish(ctx, p)
}
func (o *orderFS) AbortStaged(ctx context.Context, dir string) error {
	o.log("abortStaged")
	return local.FS{}.AbortStaged(ctx, toFile(dir))
}

// The driver writes _SUCCESS before its final sweep of staged writes: an attempt still
// running that stages its part after the sweep listed then finds _SUCCESS and discards its
// write itself (storage.Writable.Stage); with the sweep first, such a write (an S3 upload)
// stayed open after the job.
func TestCommitWritesSuccessBeforeTheFinalSweep(t *testing.T) {
	fs := &orderFS{}
	scheme := orderScheme("order")
	storage.Register(scheme, func(context.Context, *config.Config) (storage.FS, error) { return fs, nil })
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	fc := localContext(t)
	if _, err := saveJob.Run(context.Background(), fc, saveArgs{N: 100, Parts: 3, Out: scheme + "://" + dir + "/out"}); err != nil {
		t.Fatal(err)
	}
	// The last sweep runs once the job's attempts have all ended, at the latest when the
	// Context stops: stop it, so that the calls are all made.
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	ops := slices.Clone(fs.ops)
	fs.mu.Unlock()
	last := slices.Index(ops, "publish")
	for i, op := range ops {
		if op == "publish" {
			last = i
		}
	}
	if last < 0 || !slices.Equal(ops[last+1:], []string{"create _SUCCESS", "abortStaged", "abortStaged"}) {
		t.Fatalf("the committer's calls: %v; want the publishes, then create _SUCCESS, then the final sweep and the last one", ops)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "_SUCCESS")); err != nil {
		t.Fatal(err)
	}
}

// A failed job's driver writes _ABORTED before its sweep of staged writes, so an attempt
// still running that stages after the sweep listed finds the marker and discards its own
// write; without the marker such a write (an S3 upload, a temporary file) outlived the job.
func TestFailedJobWritesAbortedBeforeItsSweep(t *testing.T) {
	fs := &orderFS{}
	scheme := orderScheme("orderfail")
	storage.Register(scheme, func(context.Context, *config.Config) (storage.FS, error) { return fs, nil })
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	fc := localContext(t)
	out := scheme + "://" + dir + "/out"
	if _, err := saveJob.Run(context.Background(), fc, saveArgs{N: 100, Parts: 3, Out: out, FailPart: 2}); err == nil || !strings.Contains(err.Error(), "always fails") {
		t.Fatalf("err = %v, want the failing partition's error", err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	ops := slices.Clone(fs.ops)
	fs.mu.Unlock()
	// prepareOutput sweeps first (an earlier job's leftovers); the failure's cleanup follows,
	// and the last sweep once the job's attempts have all ended.
	if !slices.Equal(ops, []string{"abortStaged", "create " + storage.AbortMarker, "abortStaged", "abortStaged"}) {
		t.Fatalf("the failed job's committer calls: %v; want the initial sweep, then create %s, then the job's sweep and the last one", ops, storage.AbortMarker)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{storage.AbortMarker}) {
		t.Fatalf("the failed job's output holds %v, want only %s (no part, no _temporary)", names, storage.AbortMarker)
	}
	// A late attempt of the failed job staging now discards its own write.
	late, err := local.FS{}.Stage(context.Background(), filepath.Join(dir, "out", "part-00000"))
	if !errors.Is(err, storage.ErrAborted) {
		if late != nil {
			late.Abort()
		}
		t.Fatalf("staging into the failed job's output: %v, want ErrAborted", err)
	}
}

// orderSchemes numbers the schemes the order tests register: a scheme is registered once per
// process, and -count runs a test again.
var orderSchemes atomic.Int64

func orderScheme(name string) string { return fmt.Sprintf("%s%d", name, orderSchemes.Add(1)) }
