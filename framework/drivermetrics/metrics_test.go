package drivermetrics

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flint-mesos/flint/framework/event"
)

func TestListenerCountsByState(t *testing.T) {
	l := NewListener()
	for _, e := range []event.Event{
		event.ExecutorAdded{ExecutorID: "1"}, event.ExecutorAdded{ExecutorID: "2"},
		event.JobStart{JobID: 0}, event.StageSubmitted{StageID: 0},
		event.TaskStart{TaskID: 1}, event.TaskStart{TaskID: 2}, event.TaskStart{TaskID: 3}, event.TaskStart{TaskID: 4},
		event.TaskEnd{TaskID: 1, State: "FINISHED", RunTime: 3 * time.Millisecond, ResultSize: 100, ShuffleWriteBytes: 7},
		event.TaskEnd{TaskID: 2, State: "KILLED"},
		event.TaskEnd{TaskID: 3, State: "LOST"},
		event.ExecutorRemoved{ExecutorID: "2"},
		event.ExecutorRemoved{ExecutorID: "never-up"},
		event.ExecutorAdded{ExecutorID: "1"}, // again: not a second executor
		event.StageCompleted{StageID: 0, FailureReason: "lost"},
		event.JobEnd{JobID: 0, Err: errors.New("lost")},
	} {
		l.OnEvent(e)
	}
	for name, c := range map[string]struct{ got, want float64 }{
		"tasks finished":   {testutil.ToFloat64(l.tasksEnded.WithLabelValues("finished")), 1},
		"tasks killed":     {testutil.ToFloat64(l.tasksEnded.WithLabelValues("killed")), 1},
		"tasks lost":       {testutil.ToFloat64(l.tasksEnded.WithLabelValues("lost")), 1},
		"tasks running":    {testutil.ToFloat64(l.tasksRunning), 1},
		"stages failed":    {testutil.ToFloat64(l.stagesEnded.WithLabelValues("failed")), 1},
		"jobs failed":      {testutil.ToFloat64(l.jobsEnded.WithLabelValues("failed")), 1},
		"jobs running":     {testutil.ToFloat64(l.jobsRunning), 0},
		"executors":        {testutil.ToFloat64(l.executors), 1},
		"result bytes":     {testutil.ToFloat64(l.resultBytes), 100},
		"shuffle written":  {testutil.ToFloat64(l.shuffleWrite), 7},
		"durations logged": {float64(testutil.CollectAndCount(l.taskDuration)), 3},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
}
