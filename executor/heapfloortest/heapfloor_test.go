package heapfloortest

import (
	"runtime/metrics"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/gcfloor"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// executorMemory makes a floor (32 MiB) that a task's process would not reach without one:
// its live heap is a few MiB, so GOGC=100 or 200 alone gives a goal of about 4–15 MiB.
const executorMemory = 512 << 20

func TestMain(m *testing.M) {
	threemode.Configure("flint.executor.memory=512m")
	threemode.Main(m)
}

// gcState is what a task saw of its process's collector.
type gcState struct {
	Percent int64 // /gc/gogc:percent
	Goal    int64 // /gc/heap/goal:bytes
}

// gcJob reads, in each of n tasks, the collector's state of the process the task runs in.
var gcJob = dataset.JobResult("heapfloortest.gc", func(b *dataset.Builder, n int) ([]gcState, error) {
	return dataset.Collect(dataset.Map(dataset.Range(b, 0, int64(n), n), func(int64) gcState { return readGC() }))
})

func readGC() gcState {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(m)
	return gcState{Percent: int64(m[0].Value.Uint64()), Goal: int64(m[1].Value.Uint64())}
}

// Every task, in every mode, runs in a process whose heap goal is at least the floor: the
// collector gets room however little is live (docs/benchmarks.md, issue 25).
func TestTasksRunUnderTheHeapFloorInEveryMode(t *testing.T) {
	floor := gcfloor.ForMemory(executorMemory)
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := gcJob.Run(t.Context(), fc, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Fatalf("%d tasks answered, want 4", len(got))
		}
		for i, s := range got {
			if s.Goal < floor || s.Percent <= 100 {
				t.Errorf("task %d ran with GC percent %d and a heap goal of %.1f MiB; want the goal ≥ the %d MiB floor (and the percent raised to reach it)",
					i, s.Percent, float64(s.Goal)/(1<<20), floor>>20)
			}
		}
	})
}
