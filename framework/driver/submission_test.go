package driver

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
)

func init() {
	stagetask.Register("driver-submit-test", stagetask.RunnerFunc(func(context.Context, *stagetask.Task, stagetask.Shuffle) (stagetask.Output, error) {
		panic("the test answers the tasks itself")
	}))
}

// A job of stages submitted with Submit on a loop stepped by hand is
// placed, its map outputs registered (InspectMapOutputs sees them) and its
// result read with Result, all on the caller's goroutine: nothing moves
// between steps.
func TestSubmitRunsAStageJobWithoutWaiting(t *testing.T) {
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
	d.ExecutorUp("e1", "h1", 4)
	spec := dagscheduler.JobSpec{Name: "driver-submit-test", Final: "reduce", Nodes: []dagscheduler.Node{
		{ID: "map", Partitions: 3},
		{ID: "reduce", Partitions: 2, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "map", ShuffleID: 0}}},
	}}
	sub, err := d.Submit(&StageJob{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Ended() {
		t.Fatal("the job ended before any step")
	}
	d.Step(false)
	maps := b.take()
	if len(maps) != 3 {
		t.Fatalf("%d map tasks launched, want 3", len(maps))
	}
	for _, td := range maps {
		st := decodeTask(t, td)
		if st.Kind != stagetask.Map {
			t.Fatalf("task %d is not a map task", td.TaskID)
		}
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: "e1", State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Sizes: []uint64{10, 20}, Location: mapoutput.Location{Host: "h1"}})})
	}
	d.Step(false)
	var registered int
	d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) {
		for m := range 3 {
			if loc, _, ok := tr.Output(0, m); ok && loc.ExecutorID == "e1" {
				registered++
			}
		}
	})
	if registered != 3 {
		t.Fatalf("%d map outputs registered on e1, want 3", registered)
	}
	reduces := b.take()
	if len(reduces) != 2 {
		t.Fatalf("%d reduce tasks launched, want 2", len(reduces))
	}
	for _, td := range reduces {
		st := decodeTask(t, td)
		if st.Kind != stagetask.Result || len(st.Reads) != 1 || st.Reads[0].ShuffleID != 0 || st.Reads[0].Reduce != st.Partition || len(st.Statuses) != 1 {
			t.Fatalf("reduce task %d reads %+v, want its partition of shuffle 0", td.TaskID, st.Reads)
		}
		// its executor cuts the 3 blocks of its partition from the
		// driver's statuses, at the epoch the task names or later
		statuses := stagetask.NewMapStatuses(d.StatusSource())
		statuses.Resolve(context.Background(), &st)
		if r := st.Reads[0]; r.Missing != nil || len(r.Groups) != 1 || len(r.Groups[0].Blocks) != 3 || r.Groups[0].Location.ExecutorID != "e1" {
			t.Fatalf("reduce task %d resolves its read to %+v", td.TaskID, r)
		}
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: "e1", State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Value: []byte{byte('a' + st.Partition)}})})
	}
	if sub.Ended() {
		t.Fatal("the job ended before the step that handles its results")
	}
	d.Step(false)
	out, err := sub.Result()
	if err != nil || !slices.EqualFunc(out, [][]byte{[]byte("a"), []byte("b")}, slices.Equal) {
		t.Fatalf("Result = %q, %v; want [a b]", out, err)
	}
}

func decodeTask(t *testing.T, td *backend.TaskDescription) stagetask.Task {
	t.Helper()
	var raw []byte
	if err := codec.Gob.Unmarshal(td.Input, &raw); err != nil {
		t.Fatal(err)
	}
	var st stagetask.Task
	if err := st.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	return st
}

func encodeOutput(t *testing.T, o stagetask.Output) []byte {
	t.Helper()
	raw, err := o.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	data, err := codec.Gob.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// recordBackend keeps the launches the loop applied (the test's own
// goroutine steps the loop: no lock needed).
type recordBackend struct{ launched []*backend.TaskDescription }

func (b *recordBackend) Start(context.Context, backend.Driver) error { return nil }
func (b *recordBackend) Apply(batch backend.Batch) {
	b.launched = append(b.launched, batch.Launches...)
}
func (b *recordBackend) FetchResult(context.Context, string, string) ([]byte, error) {
	return nil, io.EOF
}
func (b *recordBackend) DefaultParallelism() int      { return 4 }
func (b *recordBackend) Stop(_ context.Context) error { return nil }
func (b *recordBackend) take() []*backend.TaskDescription {
	out := b.launched
	b.launched = nil
	return out
}
