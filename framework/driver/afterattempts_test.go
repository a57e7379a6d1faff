package driver

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// AfterAttemptsEnd waits for exactly the attempts launched before it: an
// attempt still running holds it back (the job it belongs to may have
// ended), attempts launched after it do not, and Drain runs what is left
// when the driver stopped first.
func TestAfterAttemptsEndWaitsForTheAttemptsLaunchedBeforeIt(t *testing.T) {
	virtual := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, b := steppedDriver(t, func() time.Time { return virtual })
	launched := func() []uint64 {
		b.mu.Lock()
		defer b.mu.Unlock()
		var ids []uint64
		for id := range b.launched {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	stepUntilLaunched := func(n int) []uint64 {
		for len(launched()) < n {
			d.Step(false)
			runtime.Gosched()
		}
		return launched()
	}
	finish := func(id uint64) {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: id, ExecutorID: "e1", State: scheduler.Finished, Result: []byte{1}})
		d.Step(false)
	}
	waiting := func() int {
		n := -1
		d.query(func(c *driverCore, _ time.Time) { n = len(c.afters) })
		return n
	}
	first := make(chan error, 1)
	go func() {
		_, err := d.RunJob(context.Background(), &Job{Name: "first", Tasks: make([]Task, 2)})
		first <- err
	}()
	ids := stepUntilLaunched(2)

	ran1 := make(chan struct{})
	d.AfterAttemptsEnd(func() { close(ran1) })
	d.Step(false)
	if n := waiting(); n != 1 {
		t.Fatalf("%d callbacks wait after the registering step, want 1 (two attempts run)", n)
	}
	finish(ids[0])
	if n := waiting(); n != 1 {
		t.Fatalf("%d callbacks wait with attempt %d still running, want 1", n, ids[1])
	}
	// A later job's attempt does not hold the callback back.
	second := make(chan error, 1)
	go func() {
		_, err := d.RunJob(context.Background(), &Job{Name: "second", Tasks: make([]Task, 1)})
		second <- err
	}()
	later := stepUntilLaunched(3)[2]
	finish(ids[1])
	<-ran1 // released by the step that saw the last earlier attempt end
	if n := waiting(); n != 0 {
		t.Fatalf("%d callbacks wait after every earlier attempt ended, want 0", n)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	// The driver stops with attempt `later` running: Drain runs the callback.
	ran2 := make(chan struct{})
	d.AfterAttemptsEnd(func() { close(ran2) })
	d.Step(false)
	if n := waiting(); n != 1 {
		t.Fatalf("%d callbacks wait with attempt %d running, want 1", n, later)
	}
	d.Abort("test ends")
	d.Step(false)
	if err := <-second; err == nil {
		t.Fatal("the second job succeeded after Abort")
	}
	d.Stop()
	ran3 := make(chan struct{}) // registered after the loop ended: Drain runs it
	d.AfterAttemptsEnd(func() { close(ran3) })
	d.Drain()
	for name, ch := range map[string]chan struct{}{"waiting": ran2, "late": ran3} {
		select {
		case <-ch:
		default:
			t.Errorf("Drain returned before the %s callback ran", name)
		}
	}
	ran4 := make(chan struct{}) // after Drain: runs at once
	d.AfterAttemptsEnd(func() { close(ran4) })
	<-ran4
}
