package driver

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// A driver that is not started runs no goroutine of its own: the caller
// steps it (Step) at the injected clock's time — how a simulation drives
// the whole driver on virtual time. A job submitted from another goroutine
// is placed, finished and answered only by the steps the caller takes.
func TestStepDrivesTheLoopWithoutAGoroutine(t *testing.T) {
	virtual := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, b := steppedDriver(t, func() time.Time { return virtual })
	type res struct {
		out []Result
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := d.RunJob(context.Background(), &Job{Name: "stepped", Tasks: make([]Task, 2)})
		done <- res{out, err}
	}()
	// Nothing moves until the caller steps: step until both tasks are out.
	for {
		d.Step(false)
		b.mu.Lock()
		n := len(b.launched)
		b.mu.Unlock()
		if n == 2 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the job ended before its tasks were launched: %v", r.err)
		default:
		}
		runtime.Gosched()
	}
	for id := range b.launched {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: id, ExecutorID: "e1", State: scheduler.Finished, Result: []byte{byte(id)}})
	}
	select {
	case <-done:
		t.Fatal("the job ended before the step that handles its results")
	default:
	}
	virtual = virtual.Add(time.Minute)
	d.Step(true)
	r := <-done
	if r.err != nil || len(r.out) != 2 || r.out[0].Output == nil || r.out[1].Output == nil {
		t.Fatalf("RunJob = %+v, %v; want both results", r.out, r.err)
	}
	if stopped := d.Step(false); stopped {
		t.Fatal("the core stopped without Stop")
	}
}

// steppedDriver is a driver that is not started (its caller steps it) on
// the clock now, with an orderBackend started on it.
func steppedDriver(t *testing.T, now func() time.Time) (*Driver, *orderBackend) {
	t.Helper()
	sched, err := scheduler.New(scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	bus := event.NewBus(0)
	t.Cleanup(bus.Close)
	d, err := New(Config{Sched: sched, DAG: dagscheduler.Config{}, Now: now, Bus: bus, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	b := &orderBackend{launched: map[uint64]bool{}}
	d.SetBackend(b)
	if err := b.Start(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d, b
}
