package dataset_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

type accArgs struct {
	N     int64
	Parts int
	// FailPartition's first attempt (of the result stage, or with
	// FailInMap of the map stage) adds its updates, then fails.
	FailPartition int64
	FailInMap     bool
}

type accResult struct {
	Records, Evens, MapRecords int64
	Max                        int64
	Digits                     map[string]int64
	Count                      int64
}

var (
	accOut      atomic.Pointer[accResult]
	accFailed   atomic.Int32 // attempts that failed on purpose
	accFailOnce atomic.Bool
)

// A job counting in a map stage (before ReduceByKey) and in the action's
// stage, with a counter, a max and a map accumulator.
var accJob = dataset.Job("test.accumulators", func(b *dataset.Builder, a accArgs) error {
	records := dataset.Counter(b, "records")
	evens := dataset.Counter(b, "evens")
	mapRecords := dataset.Counter(b, "map records")
	maxSeen := dataset.NewAccumulator(b, "max", int64(-1), func(x, y int64) int64 { return max(x, y) })
	digits := dataset.NewAccumulator(b, "last digits", map[string]int64(nil), func(x, y map[string]int64) map[string]int64 {
		out := maps.Clone(x)
		if out == nil {
			out = map[string]int64{}
		}
		for k, v := range y {
			out[k] += v
		}
		return out
	})
	failing := func(stageIsMap bool, x int64) {
		if stageIsMap == a.FailInMap && x == a.FailPartition && accFailOnce.CompareAndSwap(false, true) {
			accFailed.Add(1)
			panic("failing once on purpose, after the updates")
		}
	}
	nums := dataset.Range(b, 0, a.N, a.Parts)
	keyed := dataset.Map(nums, func(x int64) dataset.KV[int64, int64] {
		mapRecords.Add(1)
		return dataset.KV[int64, int64]{Key: x % 10, Value: x}
	})
	// the last record of a map partition triggers the failure: the
	// attempt has added all its updates by then
	keyed = dataset.Filter(keyed, func(kv dataset.KV[int64, int64]) bool { failing(true, kv.Value); return true })
	summed := dataset.ReduceByKey(keyed, func(x, y int64) int64 { return x + y }, a.Parts)
	values := dataset.Values(summed)
	counted := dataset.Map(nums, func(x int64) int64 {
		records.Add(1)
		if x%2 == 0 {
			evens.Add(1)
		}
		maxSeen.Add(x)
		digits.Add(map[string]int64{string(rune('0' + x%10)): 1})
		failing(false, x)
		return x
	})
	n, err := dataset.Count(counted)
	if err != nil {
		return err
	}
	if _, err := dataset.Collect(values); err != nil {
		return err
	}
	if b.Driver() {
		accOut.Store(&accResult{Records: records.Value(), Evens: evens.Value(), MapRecords: mapRecords.Value(),
			Max: maxSeen.Value(), Digits: digits.Value(), Count: n})
	}
	return nil
})

func TestAccumulatorsExactlyOnceUnderRetries(t *testing.T) {
	const n = 10000
	wantDigits := map[string]int64{}
	for x := int64(0); x < n; x++ {
		wantDigits[string(rune('0'+x%10))]++
	}
	for _, tc := range []struct {
		name string
		args accArgs
	}{
		{"result stage", accArgs{N: n, Parts: 4, FailPartition: n - 1}},
		{"map stage", accArgs{N: n, Parts: 4, FailPartition: n/4 - 1, FailInMap: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accFailed.Store(0)
			accFailOnce.Store(false)
			fc := localContext(t, "flint.master", "local[2,4]") // 4 attempts per task
			if _, err := accJob.Run(context.Background(), fc, tc.args); err != nil {
				t.Fatal(err)
			}
			if accFailed.Load() != 1 {
				t.Fatalf("%d attempts failed, want 1 (the test must exercise a retry)", accFailed.Load())
			}
			got := accOut.Load()
			if got.Count != n || got.Records != n || got.Evens != n/2 || got.Max != n-1 || !maps.Equal(got.Digits, wantDigits) {
				t.Fatalf("accumulators %+v, want records %d, evens %d, max %d, digits %v", got, n, n/2, n-1, wantDigits)
			}
			// the map stage's retry also counts once: a failed attempt's
			// updates never reach the driver
			if got.MapRecords != n {
				t.Fatalf("map records = %d, want %d", got.MapRecords, n)
			}
		})
	}
}

var accMismatchJob = dataset.Job("test.accumulator-mismatch", func(b *dataset.Builder, _ struct{}) error {
	name := "driver's"
	if !b.Driver() {
		name = "executor's"
	}
	c := dataset.Counter(b, name)
	_, err := dataset.Count(dataset.Map(dataset.Range(b, 0, 10, 2), func(x int64) int64 { c.Add(1); return x }))
	return err
})

func TestAccumulatorMismatchFailsTheAction(t *testing.T) {
	fc := localContext(t)
	_, err := accMismatchJob.Run(context.Background(), fc, struct{}{})
	if !errors.Is(err, dataset.ErrGraphMismatch) || !strings.Contains(err.Error(), `accumulator 0 ("executor's" int64)`) {
		t.Fatalf("err = %v, want a graph mismatch naming the executor's accumulator", err)
	}
}
