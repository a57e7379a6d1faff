package uistore

import (
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

// BenchmarkFoldTask folds one task's events (TaskStart and TaskEnd) into a
// store holding a stage of 100,000 tasks: the UI listener's cost per task.
func BenchmarkFoldTask(b *testing.B) {
	const n = 100_000
	s := New(Limits{})
	s.OnEvent(event.ExecutorAdded{ExecutorID: "e", Host: "h", Cores: 8})
	stage := 0
	newStage := func() {
		s.OnEvent(event.JobStart{Time: t0, JobID: int64(stage), StageIDs: []int{stage}, NumTasks: n})
		s.OnEvent(event.StageSubmitted{Time: t0, JobID: int64(stage), StageID: stage, NumTasks: n})
	}
	newStage()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%n == 0 {
			stage++
			newStage()
		}
		id := uint64(i)
		s.OnEvent(event.TaskStart{Time: t0, StageID: stage, TaskID: id, Index: i % n, ExecutorID: "e", Host: "h", Locality: "PROCESS_LOCAL"})
		s.OnEvent(event.TaskEnd{Time: t0.Add(time.Millisecond), StageID: stage, TaskID: id, Index: i % n, ExecutorID: "e", State: "FINISHED",
			RunTime: time.Millisecond, ResultSize: 8})
	}
}
