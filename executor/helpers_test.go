package executor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// fakeClock advances one millisecond per reading: distinct, ordered
// timestamps for the runtime's reports. It is not a timer source, so
// testing/synctest (whose clock stands still while goroutines run, giving
// equal readings) would not serve.
type fakeClock struct{ n atomic.Int64 }

func (c *fakeClock) Now() time.Time {
	return time.Unix(1_700_000_000, 0).Add(time.Duration(c.n.Add(1)) * time.Millisecond)
}

// collector records updates and signals terminal ones.
type collector struct {
	mu       sync.Mutex
	updates  []*flintpb.StatusUpdate
	terminal chan *flintpb.StatusUpdate
	running  chan uint64
}

func newCollector() *collector {
	return &collector{terminal: make(chan *flintpb.StatusUpdate, 1024), running: make(chan uint64, 1024)}
}

func (c *collector) report(u *flintpb.StatusUpdate) {
	c.mu.Lock()
	c.updates = append(c.updates, u)
	c.mu.Unlock()
	if u.State == flintpb.TaskState_TASK_RUNNING {
		c.running <- u.TaskId
	} else {
		c.terminal <- u
	}
}

func (c *collector) all() []*flintpb.StatusUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*flintpb.StatusUpdate(nil), c.updates...)
}

func (c *collector) waitTerminal(t *testing.T) *flintpb.StatusUpdate {
	t.Helper()
	select {
	case u := <-c.terminal:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a terminal update")
		return nil
	}
}

func (c *collector) waitRunning(t *testing.T, id uint64) {
	t.Helper()
	select {
	case got := <-c.running:
		if got != id {
			t.Fatalf("RUNNING for task %d, want %d", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for task %d RUNNING", id)
	}
}

// testRegistry registers the task functions the tests launch. release
// unblocks "stubborn".
func testRegistry(release <-chan struct{}) *task.Registry {
	r := task.NewRegistry()
	task.MustRegister(r, "bytes", func(_ context.Context, n int) ([]byte, error) {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i)
		}
		return b, nil
	}, nil)
	task.MustRegister(r, "panic", func(context.Context, int) (int, error) { panic("boom") }, nil)
	task.MustRegister(r, "fail", func(context.Context, int) (int, error) { return 0, errors.New("bad input") }, nil)
	task.MustRegister(r, "block", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, context.Cause(ctx)
	}, nil)
	task.MustRegister(r, "blockThenSucceed", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 1, nil
	}, nil)
	task.MustRegister(r, "stubborn", func(context.Context, int) (int, error) {
		<-release
		return 0, nil
	}, nil)
	task.MustRegister(r, "goexit", func(context.Context, int) (int, error) {
		runtime.Goexit()
		return 0, nil
	}, nil)
	task.MustRegister(r, "json", func(_ context.Context, s string) (string, error) { return s, nil }, codec.JSON)
	// diskFull writes to /dev/full, a real ENOSPC, and wraps the error
	// twice with the path, as a shuffle spill's error names its directory
	// and then its file.
	task.MustRegister(r, "fetchFailed", func(context.Context, int) (int, error) {
		return 0, fmt.Errorf("dataset: read: %w", &mapoutput.FetchFailure{ShuffleID: 3, MapIndex: 1, ReduceIndex: 2,
			ExecutorID: "exec-9", Host: "h9", Address: "https://h9:7337", Message: "connection refused"})
	}, nil)
	task.MustRegister(r, "diskFull", func(context.Context, int) (int, error) {
		err := os.WriteFile("/dev/full", []byte("x"), 0o644)
		return 0, fmt.Errorf("shuffle: spill to /dev/full: %w", fmt.Errorf("shuffleblock: write: %w", err))
	}, nil)
	return r
}

func newRuntime(t *testing.T, cfg executor.Config) (*executor.Runtime, *collector) {
	t.Helper()
	c := newCollector()
	if cfg.ExecutorID == "" {
		cfg.ExecutorID = "exec-1"
	}
	if cfg.Cores == 0 {
		cfg.Cores = 4
	}
	if cfg.Registry == nil {
		cfg.Registry = testRegistry(nil)
	}
	if cfg.Now == nil {
		cfg.Now = new(fakeClock).Now
	}
	r, err := executor.New(cfg, c.report)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r, c
}

func gobInput(t testing.TB, v any) []byte {
	t.Helper()
	b, err := codec.Gob.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func td(t testing.TB, id uint64, fn string, input any) *flintpb.TaskDescription {
	return &flintpb.TaskDescription{TaskId: id, Attempt: 1, Function: fn, Codec: "gob", Input: gobInput(t, input)}
}
