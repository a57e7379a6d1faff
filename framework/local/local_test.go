package local_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	running, peak atomic.Int64
	hold          = framework.Register("local.test.hold", func(ctx context.Context, d time.Duration) (int, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select { // the task's work takes d
		case <-time.After(d):
		case <-ctx.Done():
		}
		running.Add(-1)
		return int(n), nil
	})
	noop = framework.Register("local.test.noop", func(_ context.Context, x int) (int, error) { return x, nil })
	wait = framework.Register("local.test.wait", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
)

func newContext(tb testing.TB, conf map[string]string) (*framework.Context, error) {
	tb.Helper()
	cfg := framework.NewConfig()
	for k, v := range conf {
		if err := cfg.Set(k, v); err != nil {
			return nil, err
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	return framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
}

func mustContext(tb testing.TB, conf map[string]string) *framework.Context {
	tb.Helper()
	fc, err := newContext(tb, conf)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = fc.Stop(context.Background()) })
	return fc
}

func peakConcurrency(t *testing.T, master, taskCPUs string) int64 {
	t.Helper()
	running.Store(0)
	peak.Store(0)
	fc := mustContext(t, map[string]string{"flint.master": master, "flint.task.cpus": taskCPUs})
	in := make([]time.Duration, 24)
	for i := range in {
		in[i] = 20 * time.Millisecond
	}
	if _, err := framework.Map(context.Background(), fc, hold, in); err != nil {
		t.Fatal(err)
	}
	return peak.Load()
}

func TestSlotsBoundConcurrency(t *testing.T) {
	if p := peakConcurrency(t, "local[3]", "1"); p != 3 {
		t.Fatalf("local[3] ran %d tasks at once, want exactly 3", p)
	}
	if p := peakConcurrency(t, "local[4]", "2"); p != 2 {
		t.Fatalf("local[4] with task.cpus=2 ran %d tasks at once, want exactly 2", p)
	}
}

func TestTaskCPUsAboveSlotsIsRejected(t *testing.T) {
	_, err := newContext(t, map[string]string{"flint.master": "local[2]", "flint.task.cpus": "3"})
	if err == nil || !strings.Contains(err.Error(), "flint.task.cpus=3") {
		t.Fatalf("err = %v, want an error naming flint.task.cpus", err)
	}
}

func TestDefaultParallelismIsThreadCount(t *testing.T) {
	fc := mustContext(t, map[string]string{"flint.master": "local[*]"})
	if got := fc.DefaultParallelism(); got != runtime.NumCPU() {
		t.Fatalf("DefaultParallelism = %d, want %d", got, runtime.NumCPU())
	}
}

var shuffleDir = framework.Register("local.test.shuffleDir", func(ctx context.Context, _ int) (string, error) {
	env, ok := shuffleenv.FromContext(ctx)
	if !ok {
		return "", errors.New("no shuffle in the task's context")
	}
	w, err := env.Writer(1, 0, 0, 2, shuffle.ByteOrder)
	if err != nil {
		return "", err
	}
	if err := w.Add(1, []byte("k"), []byte("v")); err != nil {
		return "", err
	}
	if _, err := w.Commit(); err != nil {
		return "", err
	}
	return env.Dir(), nil
})

// Tasks in local mode find the in-process executor's shuffle in their
// context; its directory is under flint.local.dir and gone after Stop.
func TestLocalTasksHaveAShuffle(t *testing.T) {
	local := t.TempDir()
	fc, err := newContext(t, map[string]string{"flint.master": "local[2]", "flint.local.dir": local})
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := framework.Map(context.Background(), fc, shuffleDir, []int{0})
	if err != nil {
		fc.Stop(context.Background())
		t.Fatal(err)
	}
	if filepath.Dir(dirs[0]) != local {
		t.Errorf("shuffle directory %s is not under flint.local.dir %s", dirs[0], local)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "shuffle_1", "0.index")); err != nil {
		t.Errorf("the task's output: %v", err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(local); len(left) != 0 {
		t.Fatalf("left in flint.local.dir after Stop: %v", left)
	}
}

// readGC is the process's GC percent and heap goal.
func readGC() (percent int, goal int64) {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(m)
	return int(int64(m[0].Value.Uint64())), int64(m[1].Value.Uint64())
}

// The tasks run in this process, so it gets an executor's room for garbage (internal/gcfloor):
// a heap goal of at least 1/16 of flint.executor.memory, at most 256 MiB, while the Context
// runs, the process's own setting back when it stops.
func TestTheProcessGetsAnExecutorsGCRoomWhileTheContextRuns(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test; unset, the process has not chosen its pacing
	os.Unsetenv("GOGC")
	for _, c := range []struct {
		memory      string
		floor, over int64 // the goal is at least floor, under over
	}{
		{"2g", 128 << 20, 256 << 20},
		{"8g", 256 << 20, 512 << 20}, // 1/16 would be 512 MiB: capped
	} {
		runtime.GC()
		base, goal := readGC()
		if goal >= c.floor {
			t.Fatalf("the test process's heap goal is already %d MiB, not below %d MiB", goal>>20, c.floor>>20)
		}
		fc, err := newContext(t, map[string]string{"flint.master": "local[2]", "flint.executor.memory": c.memory})
		if err != nil {
			t.Fatal(err)
		}
		if _, goal := readGC(); goal < c.floor || goal >= c.over {
			fc.Stop(context.Background())
			t.Fatalf("with a local Context of flint.executor.memory=%s running, the heap goal is %d MiB, want %d MiB up to under %d",
				c.memory, goal>>20, c.floor>>20, c.over>>20)
		}
		if err := fc.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		if p, goal := readGC(); p != base || goal >= c.floor {
			t.Fatalf("after Stop: GC percent %d, heap goal %d MiB; want the base %d and a goal under %d MiB", p, goal>>20, base, c.floor>>20)
		}
	}
}
