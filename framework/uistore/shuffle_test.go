package uistore

import (
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

// A task's shuffle figures reach its Spark-shaped metrics: local and
// remote reads apart, fetch wait in milliseconds, write time in
// nanoseconds, records written and bytes spilled.
func TestTaskMetricsCarryShuffleFigures(t *testing.T) {
	s := twoStageJob()
	s.OnEvent(event.TaskEnd{Time: at(40), StageID: 1, TaskID: 4, Index: 0, ExecutorID: "e1", State: "FINISHED",
		ShuffleReadBytes: 150, ShuffleRead: event.ShuffleReadMetrics{LocalBlocks: 1, RemoteBlocks: 2, LocalBytes: 100, RemoteBytes: 50, FetchWait: 3 * time.Millisecond}})
	ts, err := s.Tasks(StageKey{1, 0}, TaskQuery{Length: -1}, at(100))
	if err != nil || len(ts) != 1 || ts[0].TaskMetrics == nil {
		t.Fatalf("reduce stage tasks = %+v, %v", ts, err)
	}
	want := ShuffleReadMetrics{RemoteBlocksFetched: 2, LocalBlocksFetched: 1, FetchWaitTime: 3, RemoteBytesRead: 50, LocalBytesRead: 100}
	if got := ts[0].TaskMetrics.ShuffleReadMetrics; got != want {
		t.Fatalf("shuffle read metrics = %+v, want %+v", got, want)
	}

	s = New(Limits{})
	s.OnEvent(event.StageSubmitted{Time: at(1), StageID: 0, Name: "map", NumTasks: 1})
	s.OnEvent(event.TaskStart{Time: at(2), StageID: 0, TaskID: 1, ExecutorID: "e1", Host: "h1"})
	s.OnEvent(event.TaskEnd{Time: at(3), StageID: 0, TaskID: 1, ExecutorID: "e1", State: "FINISHED", ShuffleWriteBytes: 900,
		ShuffleWrite: event.ShuffleWriteMetrics{Records: 40, Spills: 2, SpillBytes: 700, WriteTime: 5 * time.Microsecond}})
	ts, err = s.Tasks(StageKey{0, 0}, TaskQuery{Length: -1}, at(100))
	if err != nil || len(ts) != 1 || ts[0].TaskMetrics == nil {
		t.Fatalf("map stage tasks = %+v, %v", ts, err)
	}
	m := ts[0].TaskMetrics
	if w := (ShuffleWriteMetrics{BytesWritten: 900, WriteTime: 5000, RecordsWritten: 40}); m.ShuffleWriteMetrics != w || m.DiskBytesSpilled != 700 {
		t.Fatalf("shuffle write metrics = %+v, spilled %d; want %+v, spilled 700", m.ShuffleWriteMetrics, m.DiskBytesSpilled, w)
	}
}
