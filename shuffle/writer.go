package shuffle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// Config is one map task's output.
type Config struct {
	Store                        *Store
	ShuffleID, MapIndex, Attempt int
	Partitions                   int
	Order                        Order
	// Combine merges the values of equal keys when sorted runs are merged
	// (map-side combine); it needs a sorted Order.
	Combine     Combine
	Compression shuffleblock.Compression
	FrameSize   int    // 0: shuffleblock.DefaultFrameSize
	Memory      *Grant // the task's share of the executor's shuffle memory
	// ChunkSize is the largest unit a partition's record bytes grow by
	// (from 1 KiB, doubling); 0 means 64 KiB, or an eighth of the pool for
	// small pools.
	ChunkSize int
	// Clock times the task's write; nil means time.Now.
	Clock func() time.Time
	// Generation orders the runs of an indeterminate map stage (its
	// stage attempt plus one; 0 for a determinate stage). The first
	// commit of a map output wins, as in Spark, except over an output
	// of an earlier generation: a rerun of an indeterminate stage may
	// write other records, and the driver dropped every output of the
	// earlier run, so the new one replaces it.
	Generation int
}

// WriteMetrics are a map task's shuffle write figures.
type WriteMetrics struct {
	RecordsWritten int64         // records added (before map-side combine)
	BytesWritten   int64         // bytes of the committed data file
	Spills         int64         // sorted runs spilled to disk
	SpillBytes     int64         // bytes written to spill files
	WriteTime      time.Duration // time spent sorting, spilling and writing files
}

// Result is a committed map output: the size of each reduce partition's
// block (0 for an empty one) and the task's metrics.
type Result struct {
	Sizes []uint64
	WriteMetrics
}

// run is a spilled, sorted run: its file and partition offsets.
type run struct {
	f       *os.File
	offsets []int64
}

// source is the in-memory part of a writer, sorted, streamed partition by
// partition in ascending order.
type source interface {
	stream(p int) Stream
}

// Writer is a map task's shuffle writer for encoded records. Add records,
// then Commit, or Abort on failure; either releases the task's memory.
type Writer struct {
	cfg     Config
	buf     buffer
	runs    []run
	dir     string
	metrics WriteMetrics
	done    bool
}

// NewWriter starts map output cfg.MapIndex of cfg.ShuffleID.
func NewWriter(cfg Config) (*Writer, error) {
	if cfg.Store == nil || cfg.Memory == nil || cfg.Partitions <= 0 || cfg.Partitions > shuffleblock.MaxPartitions {
		return nil, fmt.Errorf("shuffle: writer needs a store, a memory grant and 1..%d partitions (got %d)", shuffleblock.MaxPartitions, cfg.Partitions)
	}
	if cfg.Combine != nil && !cfg.Order.Sorted() {
		return nil, errors.New("shuffle: map-side combine needs a sorted order")
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = int(min(pooledChunk, max(cfg.Memory.pool.total/8, 4<<10)))
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	dir, err := cfg.Store.tempDir(cfg.ShuffleID)
	if err != nil {
		return nil, err
	}
	return &Writer{cfg: cfg, buf: newBuffer(cfg.ChunkSize, cfg.Partitions, cfg.Order.Sorted()), dir: dir}, nil
}

// Add buffers one record for reduce partition part, spilling first when
// the task's memory is used up. key and value are copied.
func (w *Writer) Add(part int, key, value []byte) error {
	if part < 0 || part >= w.cfg.Partitions {
		return fmt.Errorf("shuffle: partition %d of %d", part, w.cfg.Partitions)
	}
	w.metrics.RecordsWritten++
	if n := w.buf.need(part, len(key)+len(value)); n > 0 && !w.cfg.Memory.Grow(n) {
		if w.buf.records > 0 {
			if err := w.spillBuffer(); err != nil {
				return err
			}
		}
		if n = w.buf.need(part, len(key)+len(value)); n > 0 {
			// Beyond the share even when empty: hold it anyway (one
			// record must fit) and spill again at the next chance.
			if !w.cfg.Memory.Grow(n) {
				w.cfg.Memory.forceGrow(n)
			}
		}
	}
	w.buf.add(part, key, value)
	return nil
}

func (w *Writer) spillBuffer() error {
	start := w.cfg.Clock()
	w.buf.sort(w.cfg.Order)
	err := w.spill(bufferSource{&w.buf})
	w.buf.reset()
	w.metrics.WriteTime += w.cfg.Clock().Sub(start)
	return err
}

type bufferSource struct{ b *buffer }

func (s bufferSource) stream(p int) Stream { return s.b.stream(p) }

// spill writes src as a sorted run.
func (w *Writer) spill(src source) error {
	f, err := os.CreateTemp(w.dir, fmt.Sprintf(".%d-%d-spill-*", w.cfg.MapIndex, w.cfg.Attempt))
	if err != nil {
		return fmt.Errorf("shuffle: spill to %s: %w", w.dir, err)
	}
	w.runs = append(w.runs, run{f: f})
	offsets, err := w.writePartitions(f, func(p int) ([]Stream, error) { return []Stream{src.stream(p)}, nil }, nil)
	if err != nil {
		return fmt.Errorf("shuffle: spill to %s: %w", w.dir, err)
	}
	w.runs[len(w.runs)-1].offsets = offsets
	w.metrics.Spills++
	w.metrics.SpillBytes += offsets[len(offsets)-1]
	return nil
}

// writePartitions writes each partition's streams, merged, to f and
// returns the P+1 offsets.
func (w *Writer) writePartitions(f io.Writer, streams func(p int) ([]Stream, error), combine Combine) ([]int64, error) {
	fw := shuffleblock.NewWriter(f, w.cfg.Compression, w.cfg.FrameSize)
	offsets := make([]int64, w.cfg.Partitions+1)
	for p := range w.cfg.Partitions {
		ss, err := streams(p)
		if err != nil {
			return nil, err
		}
		var in Stream = ss[0]
		if len(ss) > 1 || combine != nil {
			if in, err = NewMerger(ss, w.cfg.Order, combine); err != nil {
				return nil, err
			}
		}
		if err := copyRecords(fw, in); err != nil {
			return nil, err
		}
		if err := fw.Flush(); err != nil {
			return nil, err
		}
		offsets[p+1] = fw.Written()
	}
	return offsets, nil
}

func copyRecords(fw *shuffleblock.Writer, in Stream) error {
	for {
		k, v, err := in.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fw.Append(k, v); err != nil {
			return err
		}
	}
}

// Commit writes the data and index files and returns the block sizes. If
// an earlier attempt of this map index already committed, its output is
// kept and its sizes returned.
func (w *Writer) Commit() (Result, error) {
	start := w.cfg.Clock()
	w.buf.sort(w.cfg.Order)
	res, err := w.commit(bufferSource{&w.buf})
	res.WriteTime += w.cfg.Clock().Sub(start)
	return res, err
}

func (w *Writer) commit(mem source) (Result, error) {
	if w.done {
		return Result{}, errors.New("shuffle: writer already committed or aborted")
	}
	defer w.Abort()
	f, err := os.CreateTemp(w.dir, fmt.Sprintf(".%d-%d-data-*", w.cfg.MapIndex, w.cfg.Attempt))
	if err != nil {
		return Result{}, fmt.Errorf("shuffle: write to %s: %w", w.dir, err)
	}
	offsets, err := w.writePartitions(f, func(p int) ([]Stream, error) { return w.partitionStreams(mem, p) }, w.cfg.Combine)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return Result{}, fmt.Errorf("shuffle: write to %s: %w", w.dir, err)
	}
	offsets, err = w.cfg.Store.commit(w.cfg.ShuffleID, w.cfg.MapIndex, w.cfg.Generation, f.Name(), offsets)
	if err != nil {
		os.Remove(f.Name())
		return Result{}, err
	}
	res := Result{Sizes: make([]uint64, w.cfg.Partitions), WriteMetrics: w.metrics}
	for p := range res.Sizes {
		res.Sizes[p] = uint64(offsets[p+1] - offsets[p])
	}
	res.BytesWritten = offsets[len(offsets)-1]
	return res, nil
}

// partitionStreams are partition p's spilled runs, then memory.
func (w *Writer) partitionStreams(mem source, p int) ([]Stream, error) {
	ss := make([]Stream, 0, len(w.runs)+1)
	for _, r := range w.runs {
		ss = append(ss, shuffleblock.NewReader(io.NewSectionReader(r.f, r.offsets[p], r.offsets[p+1]-r.offsets[p])))
	}
	return append(ss, mem.stream(p)), nil
}

// Metrics are the figures so far.
func (w *Writer) Metrics() WriteMetrics { return w.metrics }

// Abort deletes the writer's spills and releases its memory. Commit calls
// it; calling it again does nothing.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	for _, r := range w.runs {
		r.f.Close()
		os.Remove(r.f.Name())
	}
	w.runs = nil
	w.buf.recycle()
	w.cfg.Memory.Release()
}
