package driver

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// What the core retains follows the attempts and the job: two launched
// attempts of one job's one stage are kept (by the driver core, the task
// core and their cores' slots) until their updates end them; then nothing
// of the job is kept but its stage's ended status.
func TestRetainedFollowsAttemptsAndJobs(t *testing.T) {
	virtual := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, b := steppedDriver(t, func() time.Time { return virtual })
	retained := func() (r Retained) {
		d.InspectRetained(func(x Retained) { r = x })
		return r
	}
	if r := retained(); r != (Retained{}) {
		t.Fatalf("before any job: %+v, want nothing retained", r)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.RunJob(context.Background(), &Job{Name: "retained", Tasks: make([]Task, 2)})
		done <- err
	}()
	for {
		d.Step(false)
		b.mu.Lock()
		n := len(b.launched)
		b.mu.Unlock()
		if n == 2 {
			break
		}
		runtime.Gosched()
	}
	want := Retained{Attempts: 2, TaskCoreAttempts: 2, SlotUses: 2, TaskSets: 1, Jobs: 1, Stages: 1}
	if r := retained(); r != want {
		t.Fatalf("two attempts running: %+v, want %+v", r, want)
	}
	for id := range b.launched {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: id, ExecutorID: "e1", State: scheduler.Finished, Result: []byte{byte(id)}})
	}
	d.Step(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want = Retained{Stages: 1, EndedStages: 1}
	if r := retained(); r != want {
		t.Fatalf("the job ended: %+v, want %+v", r, want)
	}
}
