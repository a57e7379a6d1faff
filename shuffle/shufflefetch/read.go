package shufflefetch

import (
	"context"

	"github.com/flint-mesos/flint/shuffle"
)

// Reader is a reduce partition's records, merged: sorted by key when the
// order is, with equal keys combined when combine is set. Close it.
type Reader struct {
	*shuffle.Merged
	fetched *Fetched
}

// Read fetches req's blocks and merges them.
func Read(ctx context.Context, cfg Config, req Request, order shuffle.Order, combine shuffle.Combine) (*Reader, error) {
	cfg = withDefaults(cfg)
	f, err := Fetch(ctx, cfg, req)
	if err != nil {
		return nil, err
	}
	m, err := shuffle.ExternalMerge(f.Streams(), order, combine, cfg.FanIn, cfg.SpillDir, cfg.Compression)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Metrics.MergePasses, f.Metrics.MergeBytes = int64(m.Passes), m.Bytes
	return &Reader{Merged: m, fetched: f}, nil
}

// Metrics are the task's read figures.
func (r *Reader) Metrics() ReadMetrics { return r.fetched.Metrics }

// Close deletes spills and merge runs and releases the memory.
func (r *Reader) Close() error {
	r.Merged.Close()
	r.fetched.Close()
	return nil
}
