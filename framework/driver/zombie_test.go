package driver

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// A result stage resubmitted after a fetch failure can be completed by
// its first attempt's late success (a zombie's task, whose result the DAG
// core accepts) while its second attempt still has the same partition
// pending: the stage and the job end, and the second attempt's task set
// must launch nothing more — it is no task set of the driver's any more.
// The driver used to forget it while the task core kept it, and the free
// cores launched its pending task: "scheduler launched task of unknown
// task set" (found by the simulation, fine seed 189). Spark kills a
// finished result stage's remaining attempts ("Stage finished").
func TestStageCompletedByAnEarlierAttemptLaunchesNoMore(t *testing.T) {
	sched, err := scheduler.New(scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	bus := event.NewBus(0)
	defer bus.Close()
	virtual := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := New(Config{Sched: sched, Now: func() time.Time { return virtual }, Bus: bus, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	b := &recordBackend{}
	d.SetBackend(b)
	d.ExecutorUp("e1", "h1", 2)
	spec := dagscheduler.JobSpec{Name: "driver-submit-test", Final: "reduce", Nodes: []dagscheduler.Node{
		{ID: "map", Partitions: 1},
		{ID: "reduce", Partitions: 2, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "map", ShuffleID: 0}}},
	}}
	sub, err := d.Submit(&StageJob{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	mapDone := func(td *backend.TaskDescription) {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: "e1", State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Sizes: []uint64{10, 20}, Location: mapoutput.Location{Host: "h1"}})})
	}
	one := func(what string) *backend.TaskDescription {
		t.Helper()
		got := b.take()
		if len(got) != 1 {
			t.Fatalf("%s: %d launches, want 1", what, len(got))
		}
		return got[0]
	}
	d.Step(false)
	mapDone(one("the map task"))
	d.Step(false)
	reduces := b.take() // attempt 0 of the reduce stage: both partitions, both cores
	if len(reduces) != 2 {
		t.Fatalf("%d reduce tasks launched, want 2", len(reduces))
	}
	slices.SortFunc(reduces, func(x, y *backend.TaskDescription) int { return x.Index - y.Index })
	// partition 0 fails to fetch map 0: the map stage runs again on the
	// freed core, while partition 1's first attempt keeps running
	d.StatusUpdate(&backend.StatusUpdate{TaskID: reduces[0].TaskID, ExecutorID: "e1", State: scheduler.Failed,
		Failure:     &scheduler.Failure{Kind: scheduler.FetchFailed, Message: "gone"},
		FetchFailed: &mapoutput.FetchFailure{ShuffleID: 0, MapIndex: 0, ReduceIndex: 0, ExecutorID: "e1", Host: "h1", Message: "gone"}})
	d.Step(false)
	virtual = virtual.Add(time.Second) // the DAG core resubmits failed stages on a later tick
	d.Step(true)
	mapDone(one("the map task again"))
	d.Step(false)
	// attempt 1 of the reduce stage: partition 0 on the free core, partition 1 pending
	r0 := one("attempt 1 of the reduce stage")
	if r0.Index != 0 || r0.TaskSetID == reduces[1].TaskSetID {
		t.Fatalf("launched %s/%d, want partition 0 of the reduce stage's second attempt", r0.TaskSetID, r0.Index)
	}
	result := func(td *backend.TaskDescription, v string) {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: "e1", State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Value: []byte(v)})})
	}
	// in one step: partition 0's second attempt and partition 1's first
	// (a late success) finish — the stage and the job end with both cores
	// free and partition 1 still pending in the second attempt
	result(r0, "a")
	result(reduces[1], "b")
	d.Step(false)
	if got := b.take(); len(got) != 0 {
		t.Fatalf("the job ended, yet %s/%d was launched", got[0].TaskSetID, got[0].Index)
	}
	out, err := sub.Result()
	if err != nil || !slices.EqualFunc(out, [][]byte{[]byte("a"), []byte("b")}, slices.Equal) {
		t.Fatalf("Result = %q, %v; want [a b]", out, err)
	}
	var r Retained
	d.InspectRetained(func(x Retained) { r = x })
	if r.Attempts != 0 || r.TaskCoreAttempts != 0 || r.TaskSets != 0 || r.Jobs != 0 {
		t.Fatalf("after the job: %+v, want no attempt, task set nor job kept", r)
	}
	if sched.WantsOffers() {
		t.Fatal("the task core still wants offers: the ended stage's task set kept its pending task")
	}
}
