package dataset

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/klauspost/compress/s2"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/framework/storage"
)

// ErrNoCheckpointDir: Checkpoint was called with no checkpoint directory
// set (flint.checkpoint.dir, Builder.SetCheckpointDir).
var ErrNoCheckpointDir = errors.New("dataset: checkpoint directory not set (set flint.checkpoint.dir or call Builder.SetCheckpointDir)")

// checkpointState is a dataset marked by Checkpoint: where its partitions
// go, and whether they are written.
type checkpointState struct {
	dir     string
	writing bool // its checkpoint job is running (its own action must not start another)
	done    bool // written: the node reads its files and has no lineage
	write   func() error
}

// SetCheckpointDir sets the directory Checkpoint writes under for this
// run of the job, instead of flint.checkpoint.dir (Spark's
// SparkContext.setCheckpointDir). Call it in the body before Checkpoint;
// like every other call in the body it runs again on executors replaying
// it, so dir must be the same there (a constant or an argument).
func (b *Builder) SetCheckpointDir(dir string) { b.checkpointDir = dir }

// Checkpoint marks ds to be saved to reliable storage and its lineage
// truncated, as Spark's RDD.checkpoint(). Nothing is written when it is
// called: after the next action whose job computes ds ends, a separate
// job (its own job, named like that action) computes every partition of
// ds again and writes it, encoded with the record codec, to
// <checkpoint dir>/<job>-<run>/<dataset id>/part-NNNNN through package
// storage (any writable scheme: a local directory every executor shares,
// s3://, …), committed as SaveAsTextFile's output (staged, published by
// the driver, _SUCCESS last). From then on, in that run, ds reads those
// files: later actions, and any recomputation after a lost executor or a
// fetch failure, read them instead of computing ds's parents, whose
// shuffles are no longer part of any job. Persist ds first to avoid
// computing it twice (as Spark advises): the checkpoint job then reads
// the persisted partitions. ds keeps its Partitioner.
//
// The files are kept after the run (Spark keeps checkpoint files unless
// told to clean them); a later run writes its own. The checkpoint
// directory is flint.checkpoint.dir or the body's SetCheckpointDir; when
// neither is set the next action fails with ErrNoCheckpointDir. A
// relative local directory is resolved against the driver's working
// directory; executors must see it (a shared file system) or use object
// storage. A marked dataset whose parents are also marked is written
// first; its parents are then not checkpointed by that action (Spark
// without spark.checkpoint.checkpointAllMarkedAncestors).
//
// A dataset whose records depend on its input's order after a shuffle
// (Repartition, Sample, …) may hold other records when the checkpoint
// job computes it again than the action before saw: persist it first.
func Checkpoint[T any](ds Dataset[T]) Dataset[T] {
	in := ds.n.info()
	if in.checkpoint != nil {
		return ds
	}
	b := in.b
	var dir string
	if b.Driver() || b.replay.captured == nil {
		b.freeze("checkpoint:"+string(in.id), func() any { return b.checkpointPath(in) }, &dir)
	}
	if dir == "" && b.Driver() {
		b.fail(fmt.Errorf("%w: Checkpoint of %s at %s", ErrNoCheckpointDir, in.op, in.site))
	}
	st := &checkpointState{dir: dir}
	st.write = func() error { return writeCheckpoint(ds, st) }
	in.checkpoint = st
	return ds
}

// IsCheckpointed reports whether the dataset's checkpoint is written, so
// that it reads its files instead of its lineage (Spark's
// isCheckpointed).
func (d Dataset[T]) IsCheckpointed() bool {
	return d.n.checkpoint != nil && d.n.checkpoint.done
}

// checkpointPath is where the driver puts node in's checkpoint ("" when no
// directory is set).
func (b *Builder) checkpointPath(in *nodeInfo) string {
	base := b.checkpointDir
	if base == "" && b.config() != nil {
		base = b.config().String("flint.checkpoint.dir")
	}
	if base == "" {
		return ""
	}
	run := "local"
	if b.run != nil {
		run = b.run.runID
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '#' || r == ':' || r == '\\' {
			return '-'
		}
		return r
	}, string(in.id))
	return storage.Join(absInputs([]string{base})[0], b.job+"-"+run+"/"+safe)
}

// checkpointAfter writes, after an action over final, the checkpoint of
// every marked dataset the action computed: walking from final, the
// first marked one on each path (Spark's doCheckpoint).
func (b *Builder) checkpointAfter(final node) error {
	seen := map[node]bool{}
	var marked []*checkpointState
	var walk func(n node)
	walk = func(n node) {
		if seen[n] {
			return
		}
		seen[n] = true
		in := n.info()
		if st := in.checkpoint; st != nil {
			if !st.done && !st.writing && st.dir != "" {
				marked = append(marked, st)
			}
			return
		}
		for _, p := range in.parents {
			walk(p)
		}
	}
	walk(final)
	for _, st := range marked {
		if err := st.write(); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckpoint runs ds's checkpoint job and, once its files are
// committed, makes ds read them (on the driver, and on an executor
// replaying the body past it).
func writeCheckpoint[T any](ds Dataset[T], st *checkpointState) error {
	b := ds.n.b
	var w storage.Writable
	if b.Driver() {
		var err error
		if w, err = prepareOutput(b.config(), st.dir, false); err != nil {
			return fmt.Errorf("dataset: checkpoint: %w", err)
		}
	}
	st.writing = true
	pending, err := runAction(ds, "checkpoint", nil, func(tc *taskContext, p int) (storage.Pending, error) {
		return writeCheckpointPart(tc, ds, storage.Join(st.dir, fmt.Sprintf("part-%05d", p)), p)
	})
	st.writing = false
	if b.Driver() {
		ctx := context.WithoutCancel(b.Context())
		if err != nil {
			return errors.Join(err, abortOutput(ctx, w, st.dir))
		}
		if err := commitOutput(ctx, w, st.dir, pending); err != nil {
			return fmt.Errorf("dataset: checkpoint: %w", err)
		}
	}
	if err != nil {
		return err
	}
	files := make([]storage.FileInfo, len(pending))
	for p, pd := range pending {
		files[p] = storage.FileInfo{Path: pd.Path, Size: pd.Size}
	}
	ds.n.compute = func(tc *taskContext, p int, emit func([]T) error) error {
		return readCheckpointPart(tc, files[p], emit)
	}
	st.done = true
	return nil
}

// writeCheckpointPart stages partition p at path: each record a uvarint
// length and its record-codec encoding, in an s2 stream (checksummed
// blocks).
func writeCheckpointPart[T any](tc *taskContext, ds Dataset[T], path string, p int) (storage.Pending, error) {
	ctx := tc.ctx
	w, err := storage.WritableFor(ctx, framework.TaskConfig(ctx), path)
	if err != nil {
		return storage.Pending{}, fmt.Errorf("dataset: checkpoint: %w", err)
	}
	st, err := w.Stage(ctx, path)
	if err != nil {
		return storage.Pending{}, fmt.Errorf("dataset: checkpoint %s: %w", path, err)
	}
	z := s2.NewWriter(st, s2.WriterConcurrency(1))
	bw := bufio.NewWriterSize(z, 64<<10)
	codec := recordcodec.For[T]()
	var buf []byte
	err = ds.n.run(tc, p, func(recs []T) error {
		for _, r := range recs {
			var err error
			if buf, err = codec.Append(buf[:0], r); err != nil {
				return err
			}
			var hdr [binary.MaxVarintLen64]byte
			bw.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(buf)))])
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if zerr := z.Close(); err == nil {
		err = zerr
	}
	if err != nil {
		st.Abort()
		return storage.Pending{}, fmt.Errorf("dataset: checkpoint %s: %w", path, err)
	}
	return st.Finish()
}

// readCheckpointPart emits the records of a checkpointed partition.
func readCheckpointPart[T any](tc *taskContext, f storage.FileInfo, emit func([]T) error) error {
	ctx := tc.ctx
	fs, err := storage.For(ctx, framework.TaskConfig(ctx), f.Path)
	if err != nil {
		return fmt.Errorf("dataset: read checkpoint: %w", err)
	}
	rc, err := fs.Open(ctx, f, 0, -1)
	if err != nil {
		return fmt.Errorf("dataset: read checkpoint: %w", err)
	}
	defer rc.Close()
	return decodeRecords(tc, bufio.NewReaderSize(s2.NewReader(rc), 64<<10), f.Path, emit)
}

// decodeRecords emits, in batches, the records r holds as uvarint lengths
// and record-codec encodings; name says where they come from in errors.
func decodeRecords[T any](tc *taskContext, r *bufio.Reader, name string, emit func([]T) error) error {
	codec := recordcodec.For[T]()
	batch := make([]T, 0, batchSize)
	var buf []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			break
		}
		if err == nil {
			buf = slices.Grow(buf[:0], int(n))[:n]
			_, err = io.ReadFull(r, buf)
		}
		var v T
		if err == nil {
			v, err = codec.Decode(buf)
		}
		if err != nil {
			return fmt.Errorf("dataset: read records from %s: %w", name, err)
		}
		if batch = append(batch, v); len(batch) == batchSize {
			if err := emit(batch); err != nil {
				return err
			}
			batch = batch[:0]
			if err := tc.ctx.Err(); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 {
		return emit(batch)
	}
	return nil
}
