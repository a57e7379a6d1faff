package stagetask

import (
	"context"
	"errors"
	"fmt"

	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// WriteSpec says how to write one map output.
type WriteSpec struct {
	ShuffleID, MapIndex int
	Partitions          int    // reduce partitions
	Attempt             uint64 // the attempt writing; the first to commit wins
	// Compare orders records by key within a partition; nil keeps them
	// unordered. Combine merges the values of equal keys (map-side
	// combine); it needs Compare.
	Compare func(a, b []byte) int
	Combine func(dst, a, b []byte) ([]byte, error)
}

// Shuffle is an executor's shuffle service as a stage task uses it.
// Runners that need typed writers or memory grants use the executor's
// shuffleenv.Env directly (shuffleenv.FromContext); this is the byte-level
// view of the same store.
type Shuffle interface {
	// Create opens a map output for writing.
	Create(ctx context.Context, spec WriteSpec) (MapWriter, error)
	// Open returns the records of a Read's blocks, merged (sorted by key
	// and combined when compare and combine are set, else in no
	// particular order); a block that cannot be read is a
	// *mapoutput.FetchFailure.
	Open(ctx context.Context, r Read, compare func(a, b []byte) int, combine func(dst, a, b []byte) ([]byte, error)) (Stream, error)
}

// MapWriter writes one map output.
type MapWriter interface {
	Add(part int, key, value []byte) error
	// Commit makes the output visible and returns each reduce partition's
	// block size in bytes (the first attempt to commit wins: a later one
	// gets the first one's sizes).
	Commit() ([]uint64, error)
	Abort()
}

// Stream is a reduce partition's records: Next returns them in order,
// each valid until the following call, then io.EOF. Close releases the
// memory and files the read holds.
type Stream interface {
	Next() (key, value []byte, err error)
	Close() error
}

// EnvShuffle is the Shuffle of an executor's shuffleenv.Env: map outputs
// go to its store (served to other hosts by coarse and fine executors,
// read from disk on the same host, as in local mode).
func EnvShuffle(env *shuffleenv.Env) Shuffle { return envShuffle{env} }

type envShuffle struct{ env *shuffleenv.Env }

func orderOf(compare func(a, b []byte) int) shuffle.Order {
	if compare == nil {
		return shuffle.Unordered
	}
	return shuffle.CustomOrder(compare)
}

func (e envShuffle) Create(ctx context.Context, spec WriteSpec) (MapWriter, error) {
	switch {
	case spec.Partitions < 0:
		return nil, fmt.Errorf("stagetask: map output %d of shuffle %d with %d partitions", spec.MapIndex, spec.ShuffleID, spec.Partitions)
	case spec.Combine != nil && spec.Compare == nil:
		return nil, errors.New("stagetask: map-side combine needs an order")
	}
	cfg := e.env.WriterConfig(spec.ShuffleID, spec.MapIndex, int(spec.Attempt), spec.Partitions, orderOf(spec.Compare))
	cfg.Combine = spec.Combine
	w, err := shuffle.NewWriter(cfg)
	if err != nil {
		cfg.Memory.Release()
		return nil, fmt.Errorf("stagetask: %w", err)
	}
	return &envWriter{ctx: ctx, w: w}, nil
}

type envWriter struct {
	ctx context.Context
	w   *shuffle.Writer
}

func (w *envWriter) Add(part int, key, value []byte) error { return w.w.Add(part, key, value) }
func (w *envWriter) Abort()                                { w.w.Abort() }
func (w *envWriter) Commit() ([]uint64, error) {
	res, err := w.w.Commit()
	if err != nil {
		return nil, err
	}
	task.MetricsFrom(w.ctx).AddShuffle(task.ShuffleMetrics{RecordsWritten: res.RecordsWritten, BytesWritten: res.BytesWritten,
		Spills: res.Spills, SpillBytes: res.SpillBytes, WriteTime: res.WriteTime})
	return res.Sizes, nil
}

func (e envShuffle) Open(ctx context.Context, r Read, compare func(a, b []byte) int, combine func(dst, a, b []byte) ([]byte, error)) (Stream, error) {
	if r.Missing != nil {
		return nil, r.Missing
	}
	if combine != nil && compare == nil {
		return nil, errors.New("stagetask: combining on read needs an order")
	}
	rd, err := e.env.ReadBlocks(ctx, r.ShuffleID, r.Reduce, r.Groups, orderOf(compare), combine)
	if err != nil {
		return nil, err
	}
	m := rd.Metrics()
	task.MetricsFrom(ctx).AddShuffle(task.ShuffleMetrics{LocalBlocks: m.LocalBlocks, RemoteBlocks: m.RemoteBlocks,
		LocalBytes: m.LocalBytes, RemoteBytes: m.RemoteBytes, FetchWait: m.FetchWait})
	return rd, nil
}
