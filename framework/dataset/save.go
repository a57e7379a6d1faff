package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/codec"
	"github.com/flint-mesos/flint/internal/driverseam"
)

// SaveOption changes how an output is written.
type SaveOption func(*saveOptions)

type saveOptions struct {
	overwrite bool
	codec     string
}

// Overwrite replaces what dir holds (every file under it is deleted before the job writes);
// without it a dir holding any file is an error, as in Spark.
func Overwrite() SaveOption { return func(o *saveOptions) { o.overwrite = true } }

// Compress compresses each part file with the named codec ("gzip", "zstd", "xz"; "none"),
// its name getting the codec's extension (part-00000.gz), which TextFile reads back.
func Compress(name string) SaveOption { return func(o *saveOptions) { o.codec = name } }

// SaveAsTextFile writes every record as a line into part files under dir (part-00000, …
// one per partition) — a local path, file://, s3:// or any writable storage scheme — with
// an output commit protocol that never shows a partial or duplicate output:
//
//   - each task attempt stages its part invisibly (on S3 a multipart upload to the part's
//     key, not completed; locally a file under dir/_temporary) and hands the driver what
//     publishes it as its task result;
//   - the driver publishes exactly one staged part per partition — the attempt the
//     scheduler counted — when every partition is done, writes dir/_SUCCESS after the
//     parts, then aborts every other staged write under dir (failed, killed and
//     speculative attempts: S3 uploads still open under the prefix are listed and aborted;
//     _temporary is removed); an attempt that stages its part after that sweep finds
//     _SUCCESS and discards its own write;
//   - a job that fails or is cancelled publishes nothing, writes dir/_ABORTED, then aborts
//     every staged write; an attempt that stages after that sweep finds _ABORTED and
//     discards its own write. _ABORTED is a hidden name readers skip, and the next write
//     into dir removes it (it does not count as dir holding a file).
//
// dir must hold no file (Overwrite replaces it). A local dir must be on a file system the
// executors and the driver share (or one host); a relative one is resolved against the
// driver's working directory, and an executor that cannot open it fails the job at once
// (ErrInputUnreadable).
func SaveAsTextFile(ds Dataset[string], dir string, opts ...SaveOption) error {
	return SaveFiles(ds, FileSink[string]{Op: "saveAsTextFile", Write: writeLines}, dir, opts...)
}

// FileSink is a file format's writer, for SaveFiles.
type FileSink[T any] struct {
	// Op names the action ("saveAsCSV").
	Op string
	// Ext ends each part file's name (".csv"), before the codec's extension.
	Ext string
	// SelfCompressed: the format compresses inside its files (Parquet), so Compress is an
	// error.
	SelfCompressed bool
	// Write encodes one partition into w: it calls part with a function that gets the
	// partition's records batch by batch, and flushes its encoder when part returns.
	Write func(w io.Writer, part func(each func([]T) error) error) error
}

// SaveFiles writes every partition of ds as one part file under dir (part-00000<Ext>, …)
// encoded by sink.Write, through the output commit protocol described at SaveAsTextFile,
// with the same options.
func SaveFiles[T any](ds Dataset[T], sink FileSink[T], dir string, opts ...SaveOption) error {
	var o saveOptions
	for _, opt := range opts {
		opt(&o)
	}
	c, err := codec.ByName(o.codec)
	if err == nil && sink.SelfCompressed && c.NewWriter != nil {
		err = fmt.Errorf("%s compresses inside its files: Compress(%q) does not apply", sink.Op, o.codec)
	}
	b := ds.n.b
	if b.Driver() && err != nil {
		b.fail(fmt.Errorf("dataset: %s: %w", sink.Op, err))
	}
	if b.Driver() || b.replay.captured == nil { // else an executor's replay is past its action
		b.freeze(fmt.Sprintf("output:%d", b.actions), func() any { return absInputs([]string{dir})[0] }, &dir)
	}
	var w storage.Writable
	var gen uint64 // this write's place among the Context's writes into dir
	if b.Driver() {
		if w, err = prepareOutput(b.config(), dir, o.overwrite); err != nil {
			b.fail(err)
		} else {
			gen = driverseam.Of(b.fc).Writes.Begin(dir)
		}
	}
	pending, err := runAction(ds, sink.Op, nil, func(tc *taskContext, p int) (storage.Pending, error) {
		return writePart(tc, ds, storage.Join(dir, fmt.Sprintf("part-%05d%s%s", p, sink.Ext, c.Ext)), c, p, sink.Write)
	})
	if !b.Driver() || w == nil {
		return err
	}
	ctx := context.WithoutCancel(b.Context())
	defer sweepAfterAttempts(b, w, dir, gen)
	if err != nil {
		return errors.Join(err, abortOutput(ctx, w, dir))
	}
	return commitOutput(ctx, w, dir, pending)
}

// sweepAfterAttempts discards, once every attempt of the job has ended, what staged writes
// the commit's or abort's sweep could not see: an attempt that created its write after that
// sweep listed and died before it found the _SUCCESS or _ABORTED marker (which makes every
// live attempt discard its own). With no attempt left nothing can stage under dir any more,
// so this sweep is the last; the Context's Stop runs it at the latest. A later write into dir
// by this Context makes it unneeded (that write's own sweeps cover dir) and wrong (it would
// discard that write's staged parts), so it is skipped then (storage.Writes).
func sweepAfterAttempts(b *Builder, w storage.Writable, dir string, gen uint64) {
	seam, log := driverseam.Of(b.fc), b.fc.Logger()
	seam.Driver.AfterAttemptsEnd(func() {
		seam.Writes.LastSweep(dir, gen, func() {
			if err := w.AbortStaged(context.Background(), dir); err != nil {
				log.Warnf("dataset: output %s: the last sweep of staged writes failed: %v", dir, err)
			}
		})
	})
}

// prepareOutput is dir's storage, checked empty (or emptied, overwriting). A local dir is
// made, so that executors can tell a shared file system from none.
func prepareOutput(cfg *config.Config, dir string, overwrite bool) (storage.Writable, error) {
	ctx := context.Background()
	w, err := storage.WritableFor(ctx, cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("dataset: output %s: %w", dir, err)
	}
	files, err := w.List(ctx, dir)
	switch {
	case errors.Is(err, storage.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("dataset: output: %w", err)
	case !overwrite:
		// A failed job's _ABORTED alone does not make dir hold an output: it is removed.
		for _, f := range files {
			if f.Path != storage.Join(dir, storage.AbortMarker) {
				return nil, fmt.Errorf("dataset: output directory %s already exists and is not empty (%s, …): pass dataset.Overwrite() to replace it", dir, f.Path)
			}
		}
	}
	for _, f := range files {
		if err := w.Delete(ctx, f.Path); err != nil {
			return nil, fmt.Errorf("dataset: overwrite output: %w", err)
		}
	}
	if err := w.AbortStaged(ctx, dir); err != nil {
		return nil, fmt.Errorf("dataset: output: %w", err)
	}
	if storage.Scheme(dir) == "file" {
		if err := os.MkdirAll(strings.TrimPrefix(dir, "file://"), 0o755); err != nil {
			return nil, fmt.Errorf("dataset: output directory: %w", err)
		}
	}
	return w, nil
}

// commitOutput publishes one staged part per partition, aborts every other staged write
// under dir, and writes _SUCCESS last. A failure deletes what it published.
func commitOutput(ctx context.Context, w storage.Writable, dir string, pending []storage.Pending) error {
	for p, pd := range pending {
		if err := w.Publish(ctx, pd); err != nil {
			for _, done := range pending[:p] {
				w.Delete(ctx, done.Path)
			}
			return errors.Join(fmt.Errorf("dataset: commit part %d of %s: %w", p, dir, err), abortOutput(ctx, w, dir))
		}
	}
	// _SUCCESS before the sweep: an attempt still running (speculative, killed, launched
	// late) that stages its part after the sweep listed sees _SUCCESS and discards its
	// write itself (storage.Writable.Stage), so no staged write outlives the job.
	f, err := w.Create(ctx, storage.Join(dir, storage.SuccessMarker))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return errors.Join(fmt.Errorf("dataset: commit %s: %w", dir, err), abortOutput(ctx, w, dir))
	}
	if err := w.AbortStaged(ctx, dir); err != nil {
		return fmt.Errorf("dataset: %s is committed but its staged writes could not all be discarded: %w", dir, err)
	}
	return nil
}

// abortOutput discards every staged write under dir after a failed or cancelled job. It
// writes _ABORTED first: an attempt still running that stages its part after the sweep
// listed finds the marker and discards its own write (storage.Writable.Stage), as _SUCCESS
// does after a commit, so no staged write outlives the failed job either.
func abortOutput(ctx context.Context, w storage.Writable, dir string) error {
	var errs []error
	f, err := w.Create(ctx, storage.Join(dir, storage.AbortMarker))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("dataset: mark output %s aborted: %w", dir, err))
	}
	if err := w.AbortStaged(ctx, dir); err != nil {
		errs = append(errs, fmt.Errorf("dataset: clean up output %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// writePart stages partition p's lines at path and returns the staged write.
func writePart[T any](tc *taskContext, ds Dataset[T], path string, c codec.Codec, p int,
	write func(io.Writer, func(func([]T) error) error) error) (storage.Pending, error) {
	ctx := tc.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := storage.WritableFor(ctx, framework.TaskConfig(ctx), path)
	if err != nil {
		return storage.Pending{}, fmt.Errorf("dataset: write output: %w", err)
	}
	st, err := w.Stage(ctx, path)
	if err != nil {
		if storage.Scheme(path) == "file" && errors.Is(err, storage.ErrNotExist) {
			// the driver made the directory: this executor does not see the driver's files
			return storage.Pending{}, unreadableInput(filepath.Dir(path), err)
		}
		return storage.Pending{}, fmt.Errorf("dataset: write output: %w", err)
	}
	err = writeCompressed(st, c, func(dst io.Writer) error {
		return write(dst, func(each func([]T) error) error { return ds.n.run(tc, p, each) })
	})
	if err != nil {
		st.Abort()
		return storage.Pending{}, fmt.Errorf("dataset: write %s: %w", path, err)
	}
	return st.Finish()
}

// writeCompressed runs write on dst, compressed with c when it has a writer.
func writeCompressed(dst io.Writer, c codec.Codec, write func(io.Writer) error) error {
	if c.NewWriter == nil {
		return write(dst)
	}
	cw, err := c.NewWriter(dst)
	if err != nil {
		return err
	}
	err = write(cw)
	if cerr := cw.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeLines writes a partition's lines into dst.
func writeLines(dst io.Writer, part func(func([]string) error) error) error {
	bw := bufio.NewWriterSize(dst, 256<<10)
	err := part(func(lines []string) error {
		for _, l := range lines {
			bw.WriteString(l)
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	return err
}
