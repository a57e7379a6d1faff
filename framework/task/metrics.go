package task

import (
	"context"
	"sync"
	"time"
)

// ShuffleMetrics are a task attempt's shuffle figures: what a map task
// wrote and what a reduce task fetched (Spark's ShuffleWriteMetrics and
// ShuffleReadMetrics).
type ShuffleMetrics struct {
	RecordsWritten int64         // records added to the writer (before map-side combine)
	BytesWritten   int64         // bytes of the committed data files
	Spills         int64         // sorted runs spilled to disk
	SpillBytes     int64         // bytes written to spill files
	WriteTime      time.Duration // time spent sorting, spilling and writing files
	LocalBlocks    int64         // blocks read from this host's disk
	RemoteBlocks   int64         // blocks fetched from other executors
	LocalBytes     int64
	RemoteBytes    int64
	FetchWait      time.Duration // time the task waited for blocks
}

// ReadBytes are the bytes the task read, local and remote.
func (m ShuffleMetrics) ReadBytes() int64 { return m.LocalBytes + m.RemoteBytes }

func (m *ShuffleMetrics) add(o ShuffleMetrics) {
	m.RecordsWritten += o.RecordsWritten
	m.BytesWritten += o.BytesWritten
	m.Spills += o.Spills
	m.SpillBytes += o.SpillBytes
	m.WriteTime += o.WriteTime
	m.LocalBlocks += o.LocalBlocks
	m.RemoteBlocks += o.RemoteBlocks
	m.LocalBytes += o.LocalBytes
	m.RemoteBytes += o.RemoteBytes
	m.FetchWait += o.FetchWait
}

// Metrics collects the figures a task function reports while it runs; the
// executor runtime puts one in every task's context (WithMetrics) and
// sends its totals to the driver with the task's terminal update. It is
// safe for concurrent use; a nil *Metrics ignores what it is given.
type Metrics struct {
	mu      sync.Mutex
	shuffle ShuffleMetrics
	// input read from a data source (AddInput)
	inBytes, inRecords int64
	inSet              bool
}

// AddInput adds bytes and records the task read from its data source
// (Spark's InputMetrics). A task that calls it, even with zeros, reports
// these as its input instead of the size of its launch input.
func (m *Metrics) AddInput(bytes, records int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.inBytes += bytes
	m.inRecords += records
	m.inSet = true
	m.mu.Unlock()
}

// Input returns the input figures added so far, and whether AddInput was
// called.
func (m *Metrics) Input() (bytes, records int64, reported bool) {
	if m == nil {
		return 0, 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inBytes, m.inRecords, m.inSet
}

// AddShuffle adds s to the task's shuffle figures.
func (m *Metrics) AddShuffle(s ShuffleMetrics) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.shuffle.add(s)
	m.mu.Unlock()
}

// Shuffle returns the shuffle figures added so far.
func (m *Metrics) Shuffle() ShuffleMetrics {
	if m == nil {
		return ShuffleMetrics{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shuffle
}

type metricsKey struct{}

// WithMetrics returns ctx carrying m, where the task running under it
// reports its figures.
func WithMetrics(ctx context.Context, m *Metrics) context.Context {
	return context.WithValue(ctx, metricsKey{}, m)
}

// MetricsFrom returns the collector of the task running under ctx, or nil
// (whose methods do nothing) outside a task.
func MetricsFrom(ctx context.Context) *Metrics {
	m, _ := ctx.Value(metricsKey{}).(*Metrics)
	return m
}
