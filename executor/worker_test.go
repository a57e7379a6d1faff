package executor

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// goid is the running goroutine's id, parsed from its stack header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	n, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return n
}

type workerRig struct {
	r        *Runtime
	terminal chan *flintpb.StatusUpdate
	release  chan struct{}
	// onTerminal, if set, runs in the reporter before the update is queued.
	onTerminal func(*flintpb.StatusUpdate)
}

// newWorkerRig runs a Runtime whose "gid" task returns its goroutine id,
// "block" waits for its context, "wait" for rig.release and "goexit" calls
// runtime.Goexit.
func newWorkerRig(t *testing.T, cores int) *workerRig {
	t.Helper()
	reg := task.NewRegistry()
	rig := &workerRig{terminal: make(chan *flintpb.StatusUpdate, 1024), release: make(chan struct{})}
	task.MustRegister(reg, "gid", func(context.Context, int) (uint64, error) { return goid(), nil }, nil)
	task.MustRegister(reg, "block", func(ctx context.Context, _ int) (uint64, error) {
		<-ctx.Done()
		return goid(), context.Cause(ctx)
	}, nil)
	task.MustRegister(reg, "wait", func(context.Context, int) (uint64, error) {
		<-rig.release
		return goid(), nil
	}, nil)
	task.MustRegister(reg, "goexit", func(context.Context, int) (uint64, error) {
		runtime.Goexit()
		return 0, nil
	}, nil)
	r, err := New(Config{ExecutorID: "e", Cores: cores, Registry: reg}, func(u *flintpb.StatusUpdate) {
		if u.State != flintpb.TaskState_TASK_RUNNING {
			if rig.onTerminal != nil {
				rig.onTerminal(u)
			}
			rig.terminal <- u
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	rig.r = r
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return rig
}

func (w *workerRig) launch(t *testing.T, id uint64, fn string) {
	t.Helper()
	in, err := codec.Gob.Marshal(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.r.Launch(&flintpb.TaskDescription{TaskId: id, Function: fn, Input: in}); err != nil {
		t.Fatal(err)
	}
}

func (w *workerRig) wait(t *testing.T) *flintpb.StatusUpdate {
	t.Helper()
	select {
	case u := <-w.terminal:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a terminal update")
		return nil
	}
}

// settle waits until idle workers are parked and all others have returned.
func (w *workerRig) settle(t *testing.T, idle int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.r.mu.Lock()
		n, active := len(w.r.idle), w.r.active
		w.r.mu.Unlock()
		if n == idle && active == idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers parked, %d alive; want %d of each", n, active, idle)
		}
		runtime.Gosched()
	}
}

func gidOf(t *testing.T, u *flintpb.StatusUpdate) uint64 {
	t.Helper()
	if u.State != flintpb.TaskState_TASK_FINISHED && u.State != flintpb.TaskState_TASK_KILLED {
		t.Fatalf("task %d: %v %v", u.TaskId, u.State, u.Failure)
	}
	if u.State == flintpb.TaskState_TASK_KILLED {
		return 0
	}
	var id uint64
	if err := codec.Gob.Unmarshal(u.GetResult().GetInline(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Sequential tasks run on the same parked worker goroutine.
func TestWorkerReused(t *testing.T) {
	w := newWorkerRig(t, 2)
	var first uint64
	for i := range uint64(20) {
		w.launch(t, i+1, "gid")
		g := gidOf(t, w.wait(t))
		w.settle(t, 1)
		if i == 0 {
			first = g
		} else if g != first {
			t.Fatalf("task %d ran on goroutine %d, task 1 on %d", i+1, g, first)
		}
	}
}

// A killed task on a reused worker is reported KILLED; the worker's next
// task gets a fresh, live context.
func TestWorkerReuseAfterKill(t *testing.T) {
	w := newWorkerRig(t, 1)
	w.launch(t, 1, "gid")
	g := gidOf(t, w.wait(t))
	w.settle(t, 1)
	w.launch(t, 2, "block")
	if !w.r.Kill(2, "stop") {
		t.Fatal("Kill(2) found no task")
	}
	if u := w.wait(t); u.State != flintpb.TaskState_TASK_KILLED || u.Failure.GetMessage() != "stop" {
		t.Fatalf("task 2: %v %v", u.State, u.Failure)
	}
	w.settle(t, 1)
	w.launch(t, 3, "gid")
	if got := gidOf(t, w.wait(t)); got != g {
		t.Errorf("task 3 on goroutine %d, want the reused %d", got, g)
	}
}

// At most Cores workers stay parked; the others return.
func TestIdleWorkersBounded(t *testing.T) {
	const cores = 3
	w := newWorkerRig(t, cores)
	for i := range uint64(cores) {
		w.launch(t, i+1, "wait")
	}
	close(w.release)
	for range cores {
		w.wait(t)
	}
	w.settle(t, cores)

	// One core, two workers: task 10's worker launches task 11 from its
	// reporter (a new worker, none is parked) and returns only once that
	// one has parked, so it finds the idle list full and exits.
	w1 := newWorkerRig(t, 1)
	w1.onTerminal = func(u *flintpb.StatusUpdate) {
		if u.TaskId != 10 {
			return
		}
		w1.launch(t, 11, "gid")
		for {
			w1.r.mu.Lock()
			n := len(w1.r.idle)
			w1.r.mu.Unlock()
			if n == 1 {
				return
			}
			runtime.Gosched()
		}
	}
	w1.launch(t, 10, "gid")
	gids := map[uint64]uint64{}
	for range 2 {
		u := w1.wait(t)
		gids[u.TaskId] = gidOf(t, u)
	}
	g10, g11 := gids[10], gids[11]
	if g10 == g11 {
		t.Fatalf("tasks 10 and 11 on the same goroutine %d", g10)
	}
	w1.settle(t, 1)
	w1.launch(t, 12, "gid")
	if g := gidOf(t, w1.wait(t)); g != g11 {
		t.Errorf("task 12 on goroutine %d, want the parked %d", g, g11)
	}
}

// A task calling runtime.Goexit ends its worker after its terminal update.
func TestWorkerGoexit(t *testing.T) {
	w := newWorkerRig(t, 1)
	w.launch(t, 1, "gid")
	w.wait(t)
	w.settle(t, 1)
	w.launch(t, 2, "goexit")
	if u := w.wait(t); u.State != flintpb.TaskState_TASK_FAILED || u.Failure.GetKind() != flintpb.FailureKind_PANIC {
		t.Fatalf("task 2: %v %v", u.State, u.Failure)
	}
	w.settle(t, 0)
	w.launch(t, 3, "gid")
	gidOf(t, w.wait(t))
	w.settle(t, 1)
}

// Close kills running tasks and ends busy and parked workers alike.
func TestCloseEndsParkedWorkers(t *testing.T) {
	w := newWorkerRig(t, 2)
	w.launch(t, 1, "gid")
	w.wait(t)
	w.settle(t, 1)
	w.launch(t, 2, "block") // takes the parked worker
	w.launch(t, 3, "gid")
	w.wait(t)
	if err := w.r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if u := w.wait(t); u.TaskId != 2 || u.State != flintpb.TaskState_TASK_KILLED {
		t.Fatalf("task %d: %v", u.TaskId, u.State)
	}
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	if w.r.active != 0 || len(w.r.idle) != 0 {
		t.Errorf("after Close: %d workers alive, %d parked", w.r.active, len(w.r.idle))
	}
}
