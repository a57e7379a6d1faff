package executor_test

import (
	"context"
	"testing"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// BenchmarkRuntimeEmptyTasks measures launch → terminal update throughput
// of a task that does nothing, keeping every core busy.
func BenchmarkRuntimeEmptyTasks(b *testing.B) {
	const cores = 16
	reg := task.NewRegistry()
	task.MustRegister(reg, "noop", func(_ context.Context, n int) (int, error) { return n, nil }, nil)
	done := make(chan struct{}, cores)
	report := func(u *flintpb.StatusUpdate) {
		if u.State != flintpb.TaskState_TASK_RUNNING {
			done <- struct{}{}
		}
	}
	r, err := executor.New(executor.Config{ExecutorID: "bench", Cores: cores, Registry: reg}, report)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	input := gobInput(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	inFlight := 0
	for i := range b.N {
		if inFlight == cores {
			<-done
			inFlight--
		}
		if err := r.Launch(&flintpb.TaskDescription{TaskId: uint64(i), Function: "noop", Input: input}); err != nil {
			b.Fatal(err)
		}
		inFlight++
	}
	for ; inFlight > 0; inFlight-- {
		<-done
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
