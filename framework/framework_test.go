package framework_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	square = framework.Register("test.square", func(_ context.Context, x int) (int, error) { return x * x, nil })
	fail   = framework.Register("test.fail", func(_ context.Context, x int) (int, error) {
		return 0, fmt.Errorf("input %d is cursed", x)
	})
	boom = framework.Register("test.panic", func(_ context.Context, x int) (int, error) {
		var m map[string]int
		m["x"] = x // nil map write panics
		return 0, nil
	})
	block = framework.Register("test.block", func(ctx context.Context, x int) (int, error) {
		started.Add(1)
		<-ctx.Done()
		killed.Add(1)
		return 0, ctx.Err()
	})
	big = framework.Register("test.big", func(_ context.Context, n int) ([]byte, error) {
		return bytes.Repeat([]byte{byte(n)}, n), nil
	})
	flaky = framework.Register("test.flaky", func(_ context.Context, x int) (int, error) {
		if flakyCalls.Add(1) <= 2 {
			return 0, errors.New("transient")
		}
		return x + 1, nil
	})
	started, killed, flakyCalls atomic.Int64
)

func newContext(t *testing.T, conf ...string) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	for _, kv := range conf {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fc.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return fc
}

func ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestMapReturnsResultsInTaskOrder(t *testing.T) {
	fc := newContext(t, "flint.master=local[4]")
	out, err := framework.Map(context.Background(), fc, square, ints(200))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != i*i {
			t.Fatalf("result %d = %d, want %d", i, v, i*i)
		}
	}
}

func TestTaskErrorAbortsJobWithLastError(t *testing.T) {
	fc := newContext(t, "flint.master=local[2,3]")
	_, err := framework.Map(context.Background(), fc, fail, []int{7})
	var je *framework.JobError
	if !errors.As(err, &je) || !errors.Is(err, framework.ErrJobAborted) {
		t.Fatalf("err = %v, want a *JobError wrapping ErrJobAborted", err)
	}
	if je.TaskIndex != 0 || je.Attempt != 2 || !strings.Contains(je.Message, "input 7 is cursed") {
		t.Fatalf("JobError = %+v, want task 0 attempt 2 with the task's message", je)
	}
	if !strings.Contains(err.Error(), "input 7 is cursed") {
		t.Fatalf("error text %q lacks the task's error", err)
	}
}

func TestRetriedTaskSucceeds(t *testing.T) {
	flakyCalls.Store(0)
	fc := newContext(t, "flint.master=local[1,4]")
	out, err := framework.Map(context.Background(), fc, flaky, []int{41})
	if err != nil || out[0] != 42 {
		t.Fatalf("got %v, %v; want [42] after two failed attempts", out, err)
	}
	if n := flakyCalls.Load(); n != 3 {
		t.Fatalf("function ran %d times, want 3", n)
	}
}

func TestPanicCarriesStack(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	_, err := framework.Map(context.Background(), fc, boom, []int{1})
	var je *framework.JobError
	if !errors.As(err, &je) {
		t.Fatalf("err = %v, want *JobError", err)
	}
	if !strings.Contains(je.Message, "assignment to entry in nil map") || !strings.Contains(je.Stack, "framework_test") {
		t.Fatalf("panic failure lacks message or stack: %+v", je)
	}
}

func TestUnknownFunctionRejectedBeforeLaunch(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	_, err := fc.RunJob(context.Background(), &framework.Job{Name: "bad", Tasks: []framework.Task{{Function: "no.such.fn", Codec: "gob"}}})
	if !errors.Is(err, framework.ErrInvalidJob) || !strings.Contains(err.Error(), "no.such.fn") {
		t.Fatalf("err = %v, want ErrInvalidJob naming the function", err)
	}
}

func TestUndecodableInputFailsAtOnce(t *testing.T) {
	fc := newContext(t, "flint.master=local[2,4]")
	tk := framework.Task{Function: square.Name(), Codec: "gob", Input: []byte("not gob")}
	_, err := fc.RunJob(context.Background(), &framework.Job{Name: "garbage", Tasks: []framework.Task{tk}})
	var je *framework.JobError
	if !errors.As(err, &je) || je.Attempt != 0 || !strings.Contains(strings.ToLower(je.Message), "decode") {
		t.Fatalf("err = %v (%+v), want a decode failure on the first attempt, without retries", err, je)
	}
}

func TestResultLargerThanMaxResultSizeFailsClearly(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]", "flint.driver.maxResultSize=1k")
	_, err := framework.Map(context.Background(), fc, big, []int{4096})
	if err == nil || !strings.Contains(err.Error(), "flint.driver.maxResultSize") {
		t.Fatalf("err = %v, want a failure naming flint.driver.maxResultSize", err)
	}
}

func TestLargeResultsAreFetchedFromTheExecutor(t *testing.T) {
	fc := newContext(t, "flint.master=local[3]", "flint.task.maxDirectResultSize=1k")
	sizes := []int{10, 5000, 200000}
	out, err := framework.Map(context.Background(), fc, big, sizes)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range out {
		if len(b) != sizes[i] || (len(b) > 0 && b[len(b)-1] != byte(sizes[i])) {
			t.Fatalf("result %d has %d bytes, want %d", i, len(b), sizes[i])
		}
	}
}

func TestCancellationKillsRunningTasks(t *testing.T) {
	started.Store(0)
	killed.Store(0)
	fc := newContext(t, "flint.master=local[3]")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := framework.Map(ctx, fc, block, ints(10)); errc <- err }()
	waitFor(t, func() bool { return started.Load() == 3 })
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !errors.Is(err, framework.ErrJobAborted) {
		t.Fatalf("err = %v, want cancellation", err)
	}
	waitFor(t, func() bool { return killed.Load() == 3 })
	if started.Load() != 3 {
		t.Fatalf("%d tasks started after cancellation, want none beyond the first 3", started.Load()-3)
	}
}

func TestFailingJobDoesNotDisturbAnother(t *testing.T) {
	fc := newContext(t, "flint.master=local[4]")
	var wg sync.WaitGroup
	var goodErr, badErr error
	var good []int
	wg.Add(2)
	go func() { defer wg.Done(); good, goodErr = framework.Map(context.Background(), fc, square, ints(500)) }()
	go func() { defer wg.Done(); _, badErr = framework.Map(context.Background(), fc, fail, ints(5)) }()
	wg.Wait()
	if goodErr != nil || len(good) != 500 || good[499] != 499*499 {
		t.Fatalf("good job: %v (%d results)", goodErr, len(good))
	}
	if !errors.Is(badErr, framework.ErrJobAborted) {
		t.Fatalf("bad job err = %v", badErr)
	}
}

func TestListenerSeesJobAndTaskEvents(t *testing.T) {
	var mu sync.Mutex
	counts := map[string]int{}
	l := event.ListenerFunc(func(e event.Event) {
		mu.Lock()
		counts[fmt.Sprintf("%T", e)]++
		mu.Unlock()
	})
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(l))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := framework.Map(context.Background(), fc, square, ints(20)); err != nil {
		t.Fatal(err)
	}
	if err := fc.Stop(context.Background()); err != nil { // Stop drains the bus
		t.Fatal(err)
	}
	want := map[string]int{"event.ExecutorAdded": 1, "event.JobStart": 1, "event.StageSubmitted": 1,
		"event.TaskStart": 20, "event.TaskEnd": 20, "event.StageCompleted": 1, "event.JobEnd": 1}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s posted %d times, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
}

// With no listener the driver skips building events; a listener added
// later gets every event of the jobs submitted after it, and the progress
// counters never depend on listeners.
func TestListenerAddedLaterSeesLaterJobs(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	if _, err := framework.Map(context.Background(), fc, square, ints(10)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	fc.AddListener(event.ListenerFunc(func(e event.Event) {
		mu.Lock()
		counts[fmt.Sprintf("%T", e)]++
		mu.Unlock()
	}))
	if _, err := framework.Map(context.Background(), fc, square, ints(30)); err != nil {
		t.Fatal(err)
	}
	if err := fc.Stop(context.Background()); err != nil { // Stop drains the bus
		t.Fatal(err)
	}
	want := map[string]int{"event.JobStart": 1, "event.StageSubmitted": 1,
		"event.TaskStart": 30, "event.TaskEnd": 30, "event.StageCompleted": 1, "event.JobEnd": 1}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s posted %d times, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
}

func TestStopFailsRunningJobs(t *testing.T) {
	started.Store(0)
	fc := newContext(t, "flint.master=local[2]")
	errc := make(chan error, 1)
	go func() { _, err := framework.Map(context.Background(), fc, block, ints(4)); errc <- err }()
	waitFor(t, func() bool { return started.Load() == 2 })
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, framework.ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
	if _, err := framework.Map(context.Background(), fc, square, ints(1)); !errors.Is(err, framework.ErrStopped) {
		t.Fatalf("RunJob after Stop: %v, want ErrStopped", err)
	}
}

func TestBadMasterIsRejected(t *testing.T) {
	cfg := framework.NewConfig()
	err := cfg.Set("flint.master", "yarn") // config validation may already refuse it
	if err == nil {
		_, err = framework.NewContext(context.Background(), cfg)
	}
	if err == nil || !strings.Contains(err.Error(), `"yarn"`) {
		t.Fatalf("master yarn accepted or unclear error: %v", err)
	}
}

func TestMesosMasterWithoutBackendIsAClearError(t *testing.T) {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "mesos://127.0.0.1:5050"); err != nil {
		t.Fatal(err)
	}
	_, err := framework.NewContext(context.Background(), cfg)
	if !errors.Is(err, framework.ErrNoBackend) {
		t.Fatalf("err = %v, want ErrNoBackend", err)
	}
}

func TestEmptyJob(t *testing.T) {
	fc := newContext(t, "flint.master=local[1]")
	out, err := framework.Map(context.Background(), fc, square, nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("empty job: %v, %v", out, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitfor.True(t, 10*time.Second, "the condition", cond)
}

// Each ended stage is reported once with its final counts, however many
// end between two polls (issue 23, item 7: stages evicted unreported were
// printed as "ended, 0/1 tasks done").
func TestEndedStagesReportFinalCounts(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	if _, err := framework.Map(context.Background(), fc, square, ints(12)); err != nil {
		t.Fatal(err)
	}
	st := fc.ActiveStages()
	if len(st) != 1 || !st[0].Ended || !st[0].Succeeded || st[0].Completed != 12 || st[0].NumTasks != 12 || st[0].Active != 0 {
		t.Fatalf("stages after the job = %+v, want stage 0 ended with 12/12 done", st)
	}
	if again := fc.ActiveStages(); len(again) != 0 {
		t.Fatalf("stages reported again: %+v", again)
	}
	for i := 0; i < 10; i++ {
		if _, err := framework.Map(context.Background(), fc, square, ints(1)); err != nil {
			t.Fatal(err)
		}
	}
	st = fc.ActiveStages()
	if len(st) != 10 {
		t.Fatalf("%d stages reported after 10 more jobs, want each of the 10 ended ones", len(st))
	}
	for _, s := range st {
		if !s.Ended || !s.Succeeded || s.Completed != 1 {
			t.Errorf("stage %+v, want ended, succeeded, 1/1", s)
		}
	}
}

// RunJob fills in the default pool for the driver without writing to the
// caller's Job: the same Job can be run again, concurrently too.
func TestRunJobLeavesTheCallersJobAsItWas(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]", "flint.scheduler.pool=etl")
	var tasks []framework.Task
	for i := range 3 {
		task, err := square.Task(i)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	job := &framework.Job{Name: "squares", Tasks: tasks}
	want := *job
	want.Tasks = append([]framework.Task(nil), tasks...)
	res, err := fc.RunJob(context.Background(), job)
	if err != nil || len(res) != 3 {
		t.Fatalf("RunJob: %d results, %v", len(res), err)
	}
	if job.Name != want.Name || job.Pool != "" || len(job.Tasks) != len(want.Tasks) {
		t.Fatalf("job after RunJob: %+v, want %+v", *job, want)
	}
	for i := range job.Tasks {
		if job.Tasks[i].Function != want.Tasks[i].Function || !bytes.Equal(job.Tasks[i].Input, want.Tasks[i].Input) {
			t.Fatalf("task %d changed: %+v, want %+v", i, job.Tasks[i], want.Tasks[i])
		}
	}
}
