package runcases_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// pattern is n bytes every process computes alike.
func pattern(n int) []byte {
	out := make([]byte, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x)
	}
	return out
}

type bigPayloadOut struct {
	Parts  int   // pieces the first action returned
	Sum    int64 // the second action's fold
	Second int64 // the third action's count
}

// The job's tasks carry a frozen value of size bytes and, from its second
// action on, the first action's result of the same size.
var bigPayloadJob = dataset.JobResult("runcases.payload.big", func(b *dataset.Builder, size int) (bigPayloadOut, error) {
	var o bigPayloadOut
	big := dataset.Value(b, "big", func() []byte { return pattern(size) })
	idx := dataset.Parallelize(b, []int{0, 1, 2, 3}, 4)
	pieces, err := dataset.Collect(dataset.Map(idx, func(i int) []byte { return big[i*len(big)/4 : (i+1)*len(big)/4] }))
	if err != nil {
		return o, err
	}
	o.Parts = len(pieces)
	nums := dataset.Parallelize(b, []int{0, 1, 2, 3, 4, 5, 6, 7}, 4)
	o.Sum, err = dataset.Fold(dataset.Map(nums, func(i int) int64 {
		return int64(big[i*1000]) + int64(pieces[i%4][i])
	}), 0, func(x, y int64) int64 { return x + y })
	if err != nil {
		return o, err
	}
	o.Second, err = dataset.Count(dataset.Filter(nums, func(i int) bool { return pieces[i%4][0] == big[(i%4)*len(big)/4] }))
	return o, err
})

// Deviation 6 of issue 22: a task no longer carries every frozen value
// and earlier action result. An 8 MiB frozen value and an 8 MiB earlier
// result (fine mode's LAUNCH record holds 4 MiB) reach every task: large
// parts of the payload go to the executors as broadcast files, fetched
// once per executor, as Spark broadcasts its task binaries.
func TestLargeFrozenValueAndEarlierResultReachTheTasks(t *testing.T) {
	const size = 8 << 20
	big := pattern(size)
	want := bigPayloadOut{Parts: 4, Second: 8}
	for i := range 8 {
		want.Sum += int64(big[i*1000]) + int64(big[(i%4)*size/4+i])
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := bigPayloadJob.Run(t.Context(), fc, size)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}

// hugeGraphJob builds a graph whose fingerprint alone, sent with every
// task, is over fine mode's 4 MiB LAUNCH record.
var hugeGraphJob = dataset.JobResult("runcases.payload.hugegraph", func(b *dataset.Builder, nodes int) (int64, error) {
	ds := dataset.Parallelize(b, []int{1, 2, 3}, 1)
	for range nodes {
		ds = dataset.Map(ds, func(x int) int { return x })
	}
	return dataset.Count(ds)
})

// A task payload no file can shrink (here the graph's fingerprint, which
// every task checks) fails the action at once — before any task runs, so
// never retried — with one error naming the limit and what is large,
// instead of killing fine-mode executors four times over.
func TestTaskPayloadOverTheBackendsLimitFailsAtOnce(t *testing.T) {
	threemode.RunIn(t, []threemode.Mode{threemode.Fine}, func(t *testing.T, fc *framework.Context) {
		_, err := hugeGraphJob.Run(t.Context(), fc, 60000)
		if !errors.Is(err, framework.ErrTaskTooLarge) {
			t.Fatalf("error %v, want one wrapping framework.ErrTaskTooLarge", err)
		}
		for _, want := range []string{"runcases.payload.hugegraph", "4 MiB", "fingerprint", "60001 nodes"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
}
