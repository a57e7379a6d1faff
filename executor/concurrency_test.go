package executor_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Many goroutines launch, kill and finish tasks of 1–3 cpus at once: the
// cpus in use never exceed the cores, every task gets RUNNING then exactly
// one terminal update, and all cores are free at the end.
func TestSlotAccountingUnderConcurrency(t *testing.T) {
	const cores, workers, perWorker = 8, 16, 40
	var inUse atomic.Int64
	var overcommit atomic.Bool
	cpusOf := func(id uint64) int64 { return int64(id%3) + 1 }
	reg := task.NewRegistry()
	task.MustRegister(reg, "work", func(ctx context.Context, id uint64) (uint64, error) {
		if inUse.Add(cpusOf(id)) > cores {
			overcommit.Store(true)
		}
		defer inUse.Add(-cpusOf(id))
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(id%4) * 100 * time.Microsecond):
		}
		if id%5 == 0 {
			return 0, errors.New("odd failure")
		}
		return id, nil
	}, nil)

	var mu sync.Mutex
	running := map[uint64]int{}
	terminal := map[uint64]int{}
	report := func(u *flintpb.StatusUpdate) {
		mu.Lock()
		defer mu.Unlock()
		if u.State == flintpb.TaskState_TASK_RUNNING {
			running[u.TaskId]++
			return
		}
		if running[u.TaskId] != 1 {
			t.Errorf("task %d: terminal %v before RUNNING", u.TaskId, u.State)
		}
		terminal[u.TaskId]++
	}
	r, err := executor.New(executor.Config{ExecutorID: "e", Cores: cores, Registry: reg}, report)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				id := uint64(w*perWorker + i + 1)
				d := &flintpb.TaskDescription{TaskId: id, Function: "work", Cpus: int32(cpusOf(id)), Input: gobInput(t, id)}
				for {
					err := r.Launch(d)
					if err == nil {
						break
					}
					if !errors.Is(err, executor.ErrNoFreeSlot) {
						t.Errorf("Launch(%d): %v", id, err)
						return
					}
					if free := r.FreeCores(); free < 0 || free > cores {
						t.Errorf("FreeCores() = %d", free)
					}
					runtime.Gosched() // let a running task end and free its slot
				}
				if id%7 == 0 {
					r.Kill(id, "test kill")
				}
			}
		})
	}
	wg.Wait()
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if overcommit.Load() {
		t.Error("cpus in use exceeded the cores")
	}
	if got := r.FreeCores(); got != cores {
		t.Errorf("FreeCores() = %d after Close, want %d", got, cores)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(terminal) != workers*perWorker {
		t.Errorf("%d tasks ended, want %d", len(terminal), workers*perWorker)
	}
	for id, n := range terminal {
		if n != 1 {
			t.Errorf("task %d: %d terminal updates", id, n)
		}
	}
}
