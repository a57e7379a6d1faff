package dataset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

// streamedParts: each partition of Range(0, 4000, 2) is read by
// MapPartitions three ways — its first 3 records, then all of it, then
// all of it again — and summarised as [first three..., count, count].
var streamedParts = dataset.JobResult("test.mappartitions-streamed", func(b *dataset.Builder, _ int) ([][]int64, error) {
	parts := dataset.MapPartitions(dataset.Range(b, 0, 4000, 2), func(_ int, records func(func(int64) bool), yield func([]int64)) error {
		var out []int64
		records(func(x int64) bool { out = append(out, x); return len(out) < 3 })
		for range 2 {
			var n int64
			records(func(int64) bool { n++; return true })
			out = append(out, n)
		}
		yield(out)
		return nil
	})
	return dataset.Collect(parts)
})

// MapPartitions streams its input: an iteration that stops early ends
// there (the next records are not passed), and each iteration sees the
// whole partition (it is computed again, in batches of more than the
// 1,024 records one batch holds).
func TestMapPartitionsStreamsAndRestarts(t *testing.T) {
	fc := localContext(t)
	got, err := streamedParts.Run(context.Background(), fc, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{0, 1, 2, 2000, 2000}, {2000, 2001, 2002, 2000, 2000}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int64]) {
		t.Fatalf("partitions = %v, want %v", got, want)
	}
}

// failingInput fails in its parent (a Map past record 1500) while
// MapPartitions iterates: the job fails with the parent's error, not
// with what fn made of the truncated input.
var failingInput = dataset.JobResult("test.mappartitions-failing", func(b *dataset.Builder, _ int) ([]int64, error) {
	in := dataset.Map(dataset.Range(b, 0, 3000, 1), func(x int64) int64 {
		if x == 1500 {
			panic(fmt.Sprintf("record %d is bad", x))
		}
		return x
	})
	counted := dataset.MapPartitions(in, func(_ int, records func(func(int64) bool), yield func(int64)) error {
		var n int64
		records(func(int64) bool { n++; return true })
		if n != 3000 {
			return fmt.Errorf("fn saw %d records", n)
		}
		yield(n)
		return nil
	})
	return dataset.Collect(counted)
})

func TestMapPartitionsReportsItsInputsFailure(t *testing.T) {
	fc := localContext(t, "flint.task.maxFailures", "1")
	_, err := failingInput.Run(context.Background(), fc, 0)
	if err == nil {
		t.Fatal("the job succeeded; want the input's failure")
	}
	if msg := err.Error(); !strings.Contains(msg, "record 1500 is bad") || strings.Contains(msg, "fn saw") {
		t.Fatalf("error %q, want the input's panic (record 1500 is bad), not fn's error", msg)
	}
}

// firstThree takes the first 3 records of an input whose record 1500
// would fail: a streaming MapPartitions never computes it.
var firstThree = dataset.JobResult("test.mappartitions-first-three", func(b *dataset.Builder, _ int) ([]int64, error) {
	in := dataset.Map(dataset.Range(b, 0, 3000, 1), func(x int64) int64 {
		if x == 1500 {
			panic(fmt.Sprintf("record %d was computed", x))
		}
		return x
	})
	return dataset.Collect(dataset.MapPartitions(in, func(_ int, records func(func(int64) bool), yield func(int64)) error {
		n := 0
		records(func(x int64) bool { yield(x); n++; return n < 3 })
		return nil
	}))
})

func TestMapPartitionsComputesOnlyWhatItReads(t *testing.T) {
	fc := localContext(t, "flint.task.maxFailures", "1")
	got, err := firstThree.Run(context.Background(), fc, 0)
	if err != nil {
		t.Fatalf("the job failed (its input was computed past what fn read): %v", err)
	}
	if want := []int64{0, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("records = %v, want %v", got, want)
	}
}
