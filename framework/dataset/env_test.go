package dataset_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// isolation is what isolatedCache's body sees and leaves, by key: the
// other Context (read by the driver's run of the body only) and the
// persisted closure's count after each of the two actions.
var isolation = map[string]*isolationRun{}

type isolationRun struct {
	other    *framework.Context
	computed []int64
}

// isolatedCache persists a dataset and counts it, lets another Context
// in this process run a job that caches partitions of its own under a
// storage budget too small for them (so it must evict to make room) and
// stop, then counts the dataset again.
var isolatedCache = dataset.Job("test.env-isolated-cache", func(b *dataset.Builder, key string) error {
	computed := dataset.Counter(b, "computed")
	ds := dataset.Cache(dataset.Map(dataset.Range(b, 0, 64, 4), func(x int64) int64 {
		computed.Add(1)
		return x
	}))
	if _, err := dataset.Count(ds); err != nil {
		return err
	}
	run := isolation[key]
	if b.Driver() {
		run.computed = append(run.computed, computed.Value())
		if _, err := squeezedCache.Run(context.Background(), run.other, ""); err != nil {
			return fmt.Errorf("the other Context's job: %w", err)
		}
		if err := run.other.Stop(context.Background()); err != nil {
			return fmt.Errorf("stopping the other Context: %w", err)
		}
	}
	if _, err := dataset.Count(ds); err != nil {
		return err
	}
	if b.Driver() {
		run.computed = append(run.computed, computed.Value())
	}
	return nil
})

// squeezedCache caches partitions larger than its Context's storage
// budget: each must evict whatever else the cache holds in memory.
var squeezedCache = dataset.Job("test.env-squeezed-cache", func(b *dataset.Builder, _ string) error {
	_, err := dataset.Count(dataset.Cache(dataset.Range(b, 0, 1<<14, 4)))
	return err
})

// Two local Contexts in one process keep their cached partitions apart
// (issue 24: one runtime environment per Context): the other Context's
// storage budget, its evictions and its Stop leave this Context's cached
// dataset where it was, so the second action reads it instead of
// computing it again.
func TestContextsDoNotShareCachedPartitions(t *testing.T) {
	fc := localContext(t, "flint.storage.memory", "64m")
	run := &isolationRun{other: localContext(t, "flint.storage.memory", "1k")}
	isolation[t.Name()] = run
	if _, err := isolatedCache.Run(context.Background(), fc, t.Name()); err != nil {
		t.Fatal(err)
	}
	if len(run.computed) != 2 || run.computed[0] != 64 {
		t.Fatalf("the persisted closure ran %v times after the two actions, want 64 after the first", run.computed)
	}
	if run.computed[1] != 64 {
		t.Errorf("the persisted closure ran %d times after the second action, want 64 (read from this Context's cache, untouched by the other's)", run.computed[1])
	}
}
