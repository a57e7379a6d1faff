package runcases_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// unfrozenJob hands Parallelize numbers drawn from a source seeded
// differently on the driver and on executors, as a body drawing from
// rand, time.Now or the environment without dataset.Value would.
var unfrozenJob = dataset.JobResult("runcases.replay.unfrozen", func(b *dataset.Builder, _ struct{}) (int64, error) {
	seed := uint64(1)
	if !b.Driver() {
		seed = 2
	}
	r := rand.New(rand.NewPCG(seed, 7))
	xs := make([]int64, 100)
	for i := range xs {
		xs[i] = r.Int64N(1000)
	}
	return dataset.Fold(dataset.Parallelize(b, xs, 4), 0, func(x, y int64) int64 { return x + y })
})

// The same numbers frozen with dataset.Value: every process gets the
// driver's.
var frozenJob = dataset.JobResult("runcases.replay.frozen", func(b *dataset.Builder, _ struct{}) (int64, error) {
	seed := uint64(1)
	if !b.Driver() {
		seed = 2
	}
	xs := dataset.Value(b, "xs", func() []int64 {
		r := rand.New(rand.NewPCG(seed, 7))
		xs := make([]int64, 100)
		for i := range xs {
			xs[i] = r.Int64N(1000)
		}
		return xs
	})
	return dataset.Fold(dataset.Parallelize(b, xs, 4), 0, func(x, y int64) int64 { return x + y })
})

// Deviation 8 of issue 22: data handed to Parallelize that differs
// between the driver and an executor replaying the body is part of the
// graph's fingerprint, so the job fails at once (not retried) with
// ErrGraphMismatch naming the parallelize node instead of summing the executor's numbers (on main it
// returned another sum with no error). Local mode replays the body too.
// Frozen with Value, the same job gives the driver's sum.
func TestUnfrozenParallelizeDataIsAGraphMismatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 7))
	var want int64
	for range 100 {
		want += r.Int64N(1000)
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := unfrozenJob.Run(t.Context(), fc, struct{}{})
		if err == nil {
			t.Fatalf("sum %d and no error; want the graph-mismatch error", got)
		}
		// the task's error reaches the driver as its message
		for _, s := range []string{"graph mismatch", "retrying cannot fix it", "parallelize@runcases/replay_test.go:", "data="} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not name %q", err, s)
			}
		}
		if got, err := frozenJob.Run(t.Context(), fc, struct{}{}); err != nil || got != want {
			t.Errorf("frozen with Value: sum %d, %v; want %d", got, err, want)
		}
	})
}

// unseededSplitJob hands RandomSplit a seed that differs between the
// driver and an executor replaying the body (drawn from the clock, say).
var unseededSplitJob = dataset.JobResult("runcases.replay.split", func(b *dataset.Builder, _ struct{}) (int64, error) {
	seed := uint64(1)
	if !b.Driver() {
		seed = 2
	}
	splits := dataset.RandomSplit(dataset.Range(b, 0, 1000, 4), []float64{0.5, 0.5}, seed)
	return dataset.Count(splits[0])
})

// A sampler's seed decides its records like Parallelize's data: a seed
// that differs on replay is the graph-mismatch error naming the split,
// not a count of other records.
func TestUnfrozenSamplerSeedIsAGraphMismatch(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := unseededSplitJob.Run(t.Context(), fc, struct{}{})
		if err == nil {
			t.Fatalf("count %d and no error; want the graph-mismatch error", got)
		}
		for _, s := range []string{"graph mismatch", "randomSplit@runcases/replay_test.go:", "data="} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not name %q", err, s)
			}
		}
	})
}
