package uistore

import (
	"errors"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// twoStageJob folds a job of a map stage (2 tasks, one retried) and a
// result stage (1 task) into a new store.
func twoStageJob() *Store {
	s := New(Limits{})
	for _, e := range []event.Event{
		event.ApplicationStart{Time: at(0), AppID: "app-1", Name: "demo", User: "ann", Version: "v1"},
		event.ExecutorAdded{Time: at(1), ExecutorID: "e1", Host: "h1", Cores: 2},
		event.JobStart{Time: at(10), JobID: 0, Name: "count", StageIDs: []int{0, 1}, NumTasks: 3, Stages: []event.StageInfo{
			{StageID: 0, Name: "map", NumTasks: 2}, {StageID: 1, Name: "reduce", NumTasks: 1, ParentIDs: []int{0}}}},
		event.StageSubmitted{Time: at(11), JobID: 0, StageID: 0, Name: "map", NumTasks: 2},
		event.TaskStart{Time: at(12), StageID: 0, TaskID: 1, Index: 0, ExecutorID: "e1", Host: "h1", Locality: "ANY"},
		event.TaskStart{Time: at(12), StageID: 0, TaskID: 2, Index: 1, ExecutorID: "e1", Host: "h1", Locality: "ANY"},
		event.TaskEnd{Time: at(20), StageID: 0, TaskID: 1, Index: 0, ExecutorID: "e1", State: "FINISHED", RunTime: 7 * time.Millisecond, ResultSize: 5, ShuffleWriteBytes: 100},
		event.TaskEnd{Time: at(22), StageID: 0, TaskID: 2, Index: 1, ExecutorID: "e1", State: "FAILED", Reason: "boom"},
		event.TaskStart{Time: at(23), StageID: 0, TaskID: 3, Index: 1, Attempt: 1, ExecutorID: "e1", Host: "h1", Locality: "ANY"},
		event.TaskEnd{Time: at(30), StageID: 0, TaskID: 3, Index: 1, Attempt: 1, ExecutorID: "e1", State: "FINISHED", RunTime: 6 * time.Millisecond, ResultSize: 4, ShuffleWriteBytes: 50},
		event.StageCompleted{Time: at(31), JobID: 0, StageID: 0},
		event.StageSubmitted{Time: at(32), JobID: 0, StageID: 1, Name: "reduce", NumTasks: 1, ParentIDs: []int{0}},
		event.TaskStart{Time: at(33), StageID: 1, TaskID: 4, Index: 0, ExecutorID: "e1", Host: "h1", Locality: "NODE_LOCAL"},
	} {
		s.OnEvent(e)
	}
	return s
}

func TestStoreFoldsAMultiStageJob(t *testing.T) {
	s := twoStageJob()
	j, err := s.Job(0)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != JobRunning || j.NumTasks != 3 || j.NumCompletedTasks != 2 || j.NumFailedTasks != 1 || j.NumActiveTasks != 1 ||
		j.NumCompletedIndices != 2 || j.NumCompletedStages != 1 || j.NumActiveStages != 1 {
		t.Fatalf("job = %+v", j)
	}
	m, _ := s.Stage(StageKey{0, 0}, true, at(100))
	if m.Status != StageComplete || m.NumCompleteTasks != 2 || m.NumFailedTasks != 1 || m.NumCompletedIndices != 2 ||
		m.ResultSize != 9 || m.ExecutorRunTime != 13 || m.ShuffleWriteBytes != 150 || len(m.Tasks) != 3 ||
		m.ExecutorSummary["e1"].SucceededTasks != 2 || m.ExecutorSummary["e1"].FailedTasks != 1 || m.ExecutorSummary["e1"].TaskTime != 8+10+7 {
		t.Fatalf("map stage = %+v", m)
	}
	if d := *m.Tasks["2"].Duration; d != 10 || m.Tasks["2"].ErrorMessage != "boom" || m.Tasks["2"].Status != TaskFailed {
		t.Fatalf("failed task = %+v", m.Tasks["2"])
	}
	r, _ := s.Stage(StageKey{1, 0}, false, at(100))
	if r.Status != StageActive || len(r.ParentIDs) != 1 || r.ParentIDs[0] != 0 || r.NumActiveTasks != 1 {
		t.Fatalf("reduce stage = %+v", r)
	}
	ts, err := s.Tasks(StageKey{1, 0}, TaskQuery{Length: -1}, at(40))
	if err != nil || len(ts) != 1 || *ts[0].Duration != 7 || ts[0].Status != TaskRunning {
		t.Fatalf("running tasks = %+v, %v", ts, err)
	}
	x, _ := s.Executor("e1")
	if x.ActiveTasks != 1 || x.CompletedTasks != 2 || x.FailedTasks != 1 || x.TotalTasks != 3 || x.TotalShuffleWrite != 150 {
		t.Fatalf("executor = %+v", x)
	}
	if p := s.PendingIndices(StageKey{1, 0}); len(p) != 0 {
		t.Fatalf("pending = %v with the only task running", p)
	}
}

func TestStoreEndsJobsAndSkipsUnrunStages(t *testing.T) {
	s := New(Limits{})
	s.OnEvent(event.JobStart{Time: at(0), JobID: 3, Name: "j", StageIDs: []int{5, 6}, Stages: []event.StageInfo{{StageID: 5, NumTasks: 4}, {StageID: 6, NumTasks: 2}}})
	s.OnEvent(event.StageSubmitted{Time: at(1), JobID: 3, StageID: 6, NumTasks: 2})
	if p := s.PendingIndices(StageKey{6, 0}); len(p) != 2 || p[0] != 0 || p[1] != 1 {
		t.Fatalf("pending = %v", p)
	}
	s.OnEvent(event.StageCompleted{Time: at(2), JobID: 3, StageID: 6, FailureReason: "lost"})
	s.OnEvent(event.JobEnd{Time: at(3), JobID: 3, Err: errors.New("job failed: lost")})
	j, _ := s.Job(3)
	if j.Status != JobFailed || j.NumSkippedStages != 1 || j.NumSkippedTasks != 4 || j.NumFailedStages != 1 || j.FailureReason != "job failed: lost" {
		t.Fatalf("job = %+v", j)
	}
	if st := s.Stages(StageSkipped); len(st) != 1 || st[0].StageID != 5 {
		t.Fatalf("skipped = %+v", st)
	}
}

func TestStoreForgetsOldestFinishedBeyondLimits(t *testing.T) {
	s := New(Limits{Jobs: 2, Stages: 2})
	for i := 0; i < 5; i++ {
		s.OnEvent(event.JobStart{Time: at(i), JobID: int64(i), StageIDs: []int{i}})
		s.OnEvent(event.StageSubmitted{Time: at(i), JobID: int64(i), StageID: i, NumTasks: 1})
		if i < 4 { // the last job keeps running
			s.OnEvent(event.StageCompleted{Time: at(i), JobID: int64(i), StageID: i})
			s.OnEvent(event.JobEnd{Time: at(i), JobID: int64(i)})
		}
	}
	jobs := s.Jobs()
	if len(jobs) != 2 || jobs[0].JobID != 4 || jobs[1].JobID != 3 {
		t.Fatalf("jobs = %+v", jobs)
	}
	if st := s.Stages(); len(st) != 2 || st[0].StageID != 4 || st[1].StageID != 3 {
		t.Fatalf("stages = %+v", st)
	}
}

func TestTaskQuery(t *testing.T) {
	s := twoStageJob()
	k := StageKey{0, 0}
	ts, err := s.Tasks(k, TaskQuery{SortBy: "-runtime", Length: 2}, at(100))
	if err != nil || len(ts) != 2 || ts[0].TaskID != 2 || ts[1].TaskID != 1 {
		t.Fatalf("by -runtime = %+v, %v", ts, err)
	}
	if ts, _ := s.Tasks(k, TaskQuery{Status: TaskFailed, Length: -1}, at(100)); len(ts) != 1 || ts[0].TaskID != 2 {
		t.Fatalf("failed = %+v", ts)
	}
	if _, err := s.Tasks(k, TaskQuery{SortBy: "size"}, at(100)); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("bad sortBy: %v", err)
	}
	if _, err := s.Tasks(StageKey{9, 0}, TaskQuery{}, at(100)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown stage: %v", err)
	}
}

func TestDateIsSparksFormat(t *testing.T) {
	b, _ := Date{time.Date(2026, 2, 3, 16, 42, 59, 720e6, time.FixedZone("x", 3600))}.MarshalJSON()
	if string(b) != `"2026-02-03T15:42:59.720GMT"` {
		t.Fatalf("date = %s", b)
	}
	var d Date
	if err := d.UnmarshalJSON(b); err != nil || !d.Equal(time.Date(2026, 2, 3, 15, 42, 59, 720e6, time.UTC)) {
		t.Fatalf("round trip = %v, %v", d, err)
	}
}

func TestApplicationRunningAndCompleted(t *testing.T) {
	s := twoStageJob()
	a := s.Application(at(1000))
	if a.ID != "app-1" || a.Name != "demo" || a.Attempts[0].Completed || a.Attempts[0].Duration != 1000 || *a.CoresGranted != 2 ||
		a.Attempts[0].SparkUser != "ann" || a.Attempts[0].EndTimeEpoch != 0 {
		t.Fatalf("running app = %+v", a)
	}
	s.OnEvent(event.ApplicationEnd{Time: at(500)})
	a = s.Application(at(1000))
	if !a.Attempts[0].Completed || a.Attempts[0].Duration != 500 || a.Attempts[0].EndTimeEpoch != at(500).UnixMilli() {
		t.Fatalf("completed app = %+v", a)
	}
}

func TestStoreForgetsOldestEndedTasksOfAStageButKeepsItsCounts(t *testing.T) {
	s := New(Limits{Tasks: 8})
	s.OnEvent(event.JobStart{Time: at(0), JobID: 0, StageIDs: []int{0}, NumTasks: 40})
	s.OnEvent(event.StageSubmitted{Time: at(0), JobID: 0, StageID: 0, NumTasks: 40})
	s.OnEvent(event.TaskStart{Time: at(0), StageID: 0, TaskID: 1000, Index: 39, ExecutorID: "e"}) // runs throughout
	for i := 0; i < 39; i++ {
		s.OnEvent(event.TaskStart{Time: at(i), StageID: 0, TaskID: uint64(i), Index: i, ExecutorID: "e"})
		s.OnEvent(event.TaskEnd{Time: at(i + 1), StageID: 0, TaskID: uint64(i), Index: i, ExecutorID: "e", State: "FINISHED", ResultSize: 1})
	}
	st, _ := s.Stage(StageKey{0, 0}, true, at(100))
	if len(st.Tasks) > 9 || st.NumCompleteTasks != 39 || st.NumCompletedIndices != 39 || st.ResultSize != 39 || st.NumActiveTasks != 1 {
		t.Fatalf("stage keeps %d tasks, counts %+v", len(st.Tasks), st)
	}
	if _, ok := st.Tasks["1000"]; !ok {
		t.Fatal("the running task was forgotten")
	}
	if _, ok := st.Tasks["38"]; !ok {
		t.Fatal("the newest ended task was forgotten")
	}
	if p := s.PendingIndices(StageKey{0, 0}); len(p) != 0 {
		t.Fatalf("pending %v: forgotten successful tasks count as pending", p)
	}
	s.OnEvent(event.TaskEnd{Time: at(50), StageID: 0, TaskID: 1000, Index: 39, ExecutorID: "e", State: "FINISHED"})
	if j, _ := s.Job(0); j.NumCompletedTasks != 40 || j.NumActiveTasks != 0 {
		t.Fatalf("job %+v", j)
	}
}

func TestTaskSummaryQuantiles(t *testing.T) {
	s := New(Limits{})
	s.OnEvent(event.JobStart{Time: at(0), JobID: 0, StageIDs: []int{0}, NumTasks: 5})
	s.OnEvent(event.StageSubmitted{Time: at(0), JobID: 0, StageID: 0, NumTasks: 5})
	// Run times 10, 20, 30, 40 ms succeed; one task fails and is left out.
	for i, ms := range []int{30, 10, 40, 20} {
		s.OnEvent(event.TaskStart{Time: at(0), StageID: 0, TaskID: uint64(i), Index: i})
		s.OnEvent(event.TaskEnd{Time: at(ms), StageID: 0, TaskID: uint64(i), Index: i, State: "FINISHED",
			RunTime: time.Duration(ms) * time.Millisecond, ResultSize: int64(ms) * 100})
	}
	s.OnEvent(event.TaskStart{Time: at(0), StageID: 0, TaskID: 9, Index: 4})
	s.OnEvent(event.TaskEnd{Time: at(900), StageID: 0, TaskID: 9, Index: 4, State: "FAILED", RunTime: 900 * time.Millisecond})
	d, ok, err := s.TaskSummary(StageKey{0, 0}, nil)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Spark's index: min(q·n, n-1) of the sorted values, n = 4.
	want := []float64{10, 20, 30, 40, 40}
	for i := range want {
		if d.ExecutorRunTime[i] != want[i] || d.Duration[i] != want[i] || d.ResultSize[i] != want[i]*100 {
			t.Fatalf("distributions %+v, want run times %v", d, want)
		}
	}
	if _, _, err := s.TaskSummary(StageKey{0, 0}, []float64{1.5}); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("quantile 1.5: %v", err)
	}
	s.OnEvent(event.StageSubmitted{Time: at(0), JobID: 0, StageID: 1, NumTasks: 1})
	if _, ok, err := s.TaskSummary(StageKey{1, 0}, nil); ok || err != nil {
		t.Fatalf("no finished task: ok %v, %v", ok, err)
	}
}
