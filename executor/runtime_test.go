package executor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func decodeBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var b []byte
	if err := codec.Gob.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSuccessInline(t *testing.T) {
	r, c := newRuntime(t, executor.Config{})
	desc := td(t, 7, "bytes", 10)
	if err := r.Launch(desc); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	if u.State != flintpb.TaskState_TASK_FINISHED || u.Failure != nil {
		t.Fatalf("update = %v", u)
	}
	if got := decodeBytes(t, u.Result.GetInline()); len(got) != 10 || got[9] != 9 {
		t.Errorf("inline result = %v", got)
	}
	all := c.all()
	if len(all) != 2 || all[0].State != flintpb.TaskState_TASK_RUNNING {
		t.Fatalf("updates = %v, want RUNNING then FINISHED", all)
	}
	for _, x := range all {
		if x.TaskId != 7 || x.Attempt != 1 || x.ExecutorId != "exec-1" || len(x.Uuid) != 16 || x.TimestampUnixNano == 0 {
			t.Errorf("bad update header: %v", x)
		}
	}
	if bytes.Equal(all[0].Uuid, all[1].Uuid) {
		t.Error("two updates share a uuid")
	}
	m := u.Metrics
	if m.InputSize != int64(len(desc.Input)) || m.ResultSize != int64(len(u.Result.GetInline())) {
		t.Errorf("sizes in metrics = %v", m)
	}
	if !(m.LaunchTimeUnixNano > 0 && m.LaunchTimeUnixNano < m.StartTimeUnixNano && m.StartTimeUnixNano < m.FinishTimeUnixNano) {
		t.Errorf("times out of order: %v", m)
	}
	// The fake clock ticks 1ms per reading: decode, run and encode each span one tick.
	if m.DecodeNanos != int64(time.Millisecond) || m.RunTimeNanos != int64(time.Millisecond) || m.EncodeNanos != int64(time.Millisecond) {
		t.Errorf("durations = %v", m)
	}
	if r.FreeCores() != 4 || len(r.Running()) != 0 {
		t.Errorf("after finish: free %d, running %v", r.FreeCores(), r.Running())
	}
}

func TestSuccessIndirectFetchRelease(t *testing.T) {
	r, c := newRuntime(t, executor.Config{MaxDirectResultSize: 100})
	if err := r.Launch(td(t, 3, "bytes", 1000)); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	ind := u.Result.GetIndirect()
	if u.State != flintpb.TaskState_TASK_FINISHED || ind == nil {
		t.Fatalf("update = %v, want an indirect result", u)
	}
	data, err := r.FetchResult(ind.BlockId)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if ind.Size_ != int64(len(data)) || ind.Sha256 != hex.EncodeToString(sum[:]) || ind.ExecutorId != "exec-1" {
		t.Errorf("indirect = %v for %d bytes", ind, len(data))
	}
	if got := decodeBytes(t, data); len(got) != 1000 {
		t.Errorf("fetched result decodes to %d bytes", len(got))
	}
	r.ReleaseResult(ind.BlockId)
	if _, err := r.FetchResult(ind.BlockId); !errors.Is(err, executor.ErrResultNotFound) {
		t.Errorf("FetchResult after release = %v, want ErrResultNotFound", err)
	}
}

func TestResultAtDirectLimitIsInline(t *testing.T) {
	size := int64(len(gobInput(t, make([]byte, 50))))
	r, c := newRuntime(t, executor.Config{MaxDirectResultSize: size, MaxResultSize: size})
	if err := r.Launch(td(t, 1, "bytes", 50)); err != nil {
		t.Fatal(err)
	}
	if u := c.waitTerminal(t); u.Result.GetInline() == nil {
		t.Errorf("result of exactly MaxDirectResultSize = %v, want inline", u)
	}
}

func TestFailures(t *testing.T) {
	cases := []struct {
		name    string
		desc    *flintpb.TaskDescription
		kind    flintpb.FailureKind
		message []string
	}{
		{"error", td(t, 1, "fail", 0), flintpb.FailureKind_EXCEPTION, []string{"bad input"}},
		{"panic", td(t, 2, "panic", 0), flintpb.FailureKind_PANIC, []string{"task 2", `"panic"`, "boom"}},
		{"unknown function", td(t, 3, "nope", 0), flintpb.FailureKind_UNKNOWN_FUNCTION,
			[]string{"task 3", `"nope"`, "bytes", "panic"}},
		{"decode error", &flintpb.TaskDescription{TaskId: 4, Function: "bytes", Input: []byte("junk")},
			flintpb.FailureKind_DECODE_ERROR, []string{`"bytes"`, "gob", "4 bytes"}},
		{"codec mismatch", &flintpb.TaskDescription{TaskId: 5, Function: "json", Codec: "gob", Input: []byte(`"x"`)},
			flintpb.FailureKind_DECODE_ERROR, []string{"task 5", `"gob"`, `"json"`}},
		{"goexit", td(t, 6, "goexit", 0), flintpb.FailureKind_PANIC, []string{"runtime.Goexit"}},
		// a full disk names the file once (the error named it twice), for
		// the scheduler to retry on other executors only
		{"disk full", td(t, 7, "diskFull", 0), flintpb.FailureKind_DISK_FULL,
			[]string{"the file system is full: write /dev/full: no space left on device", "flint.local.dir"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, c := newRuntime(t, executor.Config{})
			if err := r.Launch(tc.desc); err != nil {
				t.Fatal(err)
			}
			u := c.waitTerminal(t)
			if u.State != flintpb.TaskState_TASK_FAILED || u.Failure.GetKind() != tc.kind || u.Result != nil {
				t.Fatalf("update = %v, want TASK_FAILED %v", u, tc.kind)
			}
			for _, want := range tc.message {
				if !strings.Contains(u.Failure.Message, want) {
					t.Errorf("message %q lacks %q", u.Failure.Message, want)
				}
			}
			if n := strings.Count(u.Failure.Message, "/dev/full"); tc.kind == flintpb.FailureKind_DISK_FULL && n != 1 {
				t.Errorf("message %q names /dev/full %d times, want once", u.Failure.Message, n)
			}
			if r.FreeCores() != 4 {
				t.Errorf("free cores = %d after failure", r.FreeCores())
			}
		})
	}
}

func TestExceptionMessageIsErrorText(t *testing.T) {
	r, c := newRuntime(t, executor.Config{})
	if err := r.Launch(td(t, 1, "fail", 0)); err != nil {
		t.Fatal(err)
	}
	if u := c.waitTerminal(t); u.Failure.Message != "bad input" {
		t.Errorf("message = %q, want the function's err.Error()", u.Failure.Message)
	}
}

func TestPanicCarriesStack(t *testing.T) {
	r, c := newRuntime(t, executor.Config{})
	if err := r.Launch(td(t, 1, "panic", 0)); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	for _, want := range []string{"goroutine", "panic(", "executor_test.testRegistry"} {
		if !strings.Contains(u.Failure.Stack, want) {
			t.Errorf("stack lacks %q:\n%s", want, u.Failure.Stack)
		}
	}
}

func TestResultTooLarge(t *testing.T) {
	r, c := newRuntime(t, executor.Config{MaxResultSize: 1 << 20})
	if err := r.Launch(td(t, 7, "bytes", 3<<20)); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	want := "task 7: result of 3.0 MiB exceeds flint.driver.maxResultSize (1.0 MiB)"
	if u.State != flintpb.TaskState_TASK_FAILED || u.Failure.GetKind() != flintpb.FailureKind_RESULT_TOO_LARGE ||
		u.Failure.Message != want || u.Result != nil {
		t.Fatalf("update = %v, want RESULT_TOO_LARGE %q", u, want)
	}
	if u.Metrics.ResultSize <= 3<<20 {
		t.Errorf("metrics result size = %d", u.Metrics.ResultSize)
	}
	if _, err := r.FetchResult("taskresult_7"); !errors.Is(err, executor.ErrResultNotFound) {
		t.Errorf("oversized result was stored: %v", err)
	}
}

func TestKillMidTask(t *testing.T) {
	for _, fn := range []string{"block", "blockThenSucceed"} {
		t.Run(fn, func(t *testing.T) {
			r, c := newRuntime(t, executor.Config{})
			if err := r.Launch(td(t, 9, fn, 0)); err != nil {
				t.Fatal(err)
			}
			c.waitRunning(t, 9)
			if r.FreeCores() != 3 || len(r.Running()) != 1 {
				t.Errorf("while running: free %d, running %v", r.FreeCores(), r.Running())
			}
			if !r.Kill(9, "speculative copy finished") {
				t.Fatal("Kill of a running task returned false")
			}
			r.Kill(9, "second reason")
			u := c.waitTerminal(t)
			if u.State != flintpb.TaskState_TASK_KILLED || u.Failure.GetKind() != flintpb.FailureKind_KILLED ||
				u.Failure.Message != "speculative copy finished" || u.Result != nil {
				t.Fatalf("update = %v", u)
			}
			if r.Kill(9, "again") {
				t.Error("Kill of a finished task returned true")
			}
		})
	}
}

func TestKillUnknownTask(t *testing.T) {
	r, _ := newRuntime(t, executor.Config{})
	if r.Kill(42, "x") {
		t.Error("Kill of an unknown task returned true")
	}
}

func TestKilledContextCause(t *testing.T) {
	reg := testRegistry(nil)
	causes := make(chan error, 1)
	task.MustRegister(reg, "cause", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return 0, nil
	}, nil)
	r, c := newRuntime(t, executor.Config{Registry: reg})
	if err := r.Launch(td(t, 1, "cause", 0)); err != nil {
		t.Fatal(err)
	}
	c.waitRunning(t, 1)
	r.Kill(1, "stop now")
	c.waitTerminal(t)
	if err := <-causes; !errors.Is(err, executor.ErrTaskKilled) || !strings.Contains(err.Error(), "stop now") {
		t.Errorf("context cause = %v, want ErrTaskKilled with the reason", err)
	}
}

func TestCloseKillsRunningTasks(t *testing.T) {
	r, c := newRuntime(t, executor.Config{MaxDirectResultSize: 10})
	if err := r.Launch(td(t, 1, "bytes", 100)); err != nil {
		t.Fatal(err)
	}
	c.waitRunning(t, 1)
	stored := c.waitTerminal(t).Result.GetIndirect()
	for id := uint64(2); id <= 3; id++ {
		if err := r.Launch(td(t, id, "block", 0)); err != nil {
			t.Fatal(err)
		}
		c.waitRunning(t, id)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		u := c.waitTerminal(t)
		if u.State != flintpb.TaskState_TASK_KILLED || u.Failure.Message != "executor closed" {
			t.Errorf("update after Close = %v", u)
		}
	}
	if _, err := r.FetchResult(stored.BlockId); !errors.Is(err, executor.ErrResultNotFound) {
		t.Errorf("stored result survived Close: %v", err)
	}
	if err := r.Launch(td(t, 4, "bytes", 1)); !errors.Is(err, executor.ErrClosed) {
		t.Errorf("Launch after Close = %v, want ErrClosed", err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if len(c.all()) != 6 {
		t.Errorf("%d updates, want 6", len(c.all()))
	}
}

func TestCloseHonoursContext(t *testing.T) {
	release := make(chan struct{})
	r, c := newRuntime(t, executor.Config{Registry: testRegistry(release)})
	if err := r.Launch(td(t, 1, "stubborn", 0)); err != nil {
		t.Fatal(err)
	}
	c.waitRunning(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := r.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 task goroutines") {
		t.Fatalf("Close with a stubborn task = %v", err)
	}
	close(release)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if u := c.waitTerminal(t); u.State != flintpb.TaskState_TASK_KILLED {
		t.Errorf("stubborn task ended %v, want KILLED", u.State)
	}
}

func TestSlotsAndDuplicates(t *testing.T) {
	r, c := newRuntime(t, executor.Config{Cores: 4, TaskCPUs: 2})
	if err := r.Launch(td(t, 1, "block", 0)); err != nil { // TaskCPUs: 2
		t.Fatal(err)
	}
	if err := r.Launch(td(t, 1, "block", 0)); !errors.Is(err, executor.ErrDuplicateTask) {
		t.Errorf("duplicate Launch = %v", err)
	}
	big := td(t, 2, "block", 0)
	big.Cpus = 3
	if err := r.Launch(big); !errors.Is(err, executor.ErrNoFreeSlot) || !strings.Contains(err.Error(), "needs 3 cpus, 2 of 4 free") {
		t.Errorf("Launch over capacity = %v", err)
	}
	big.Cpus = 2
	if err := r.Launch(big); err != nil {
		t.Fatal(err)
	}
	if r.FreeCores() != 0 {
		t.Errorf("free = %d, want 0", r.FreeCores())
	}
	if got := r.Running(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("Running() = %v", got)
	}
	neg := td(t, 5, "block", 0)
	neg.Cpus = -1
	if err := r.Launch(neg); err == nil {
		t.Error("Launch with negative cpus succeeded")
	}
	if err := r.Launch(nil); err == nil {
		t.Error("Launch(nil) succeeded")
	}
	r.Kill(1, "x")
	r.Kill(2, "x")
	c.waitTerminal(t)
	c.waitTerminal(t)
	if r.FreeCores() != 4 {
		t.Errorf("free = %d after kills, want 4", r.FreeCores())
	}
}

// The slot is free before the terminal update is reported: a reporter that
// launches the next task from the update always finds room.
func TestSlotFreedBeforeTerminalReport(t *testing.T) {
	const chain = 50
	var r *executor.Runtime
	done := make(chan error, 1)
	report := func(u *flintpb.StatusUpdate) {
		if u.State == flintpb.TaskState_TASK_RUNNING {
			return
		}
		if u.TaskId == chain {
			done <- nil
			return
		}
		if err := r.Launch(td(t, u.TaskId+1, "bytes", 1)); err != nil {
			done <- err
		}
	}
	var err error
	r, err = executor.New(executor.Config{ExecutorID: "e", Cores: 1, Registry: testRegistry(nil)}, report)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if err := r.Launch(td(t, 1, "bytes", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("relaunch from the reporter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chain stalled")
	}
}

func TestConfigValidation(t *testing.T) {
	_, err := executor.New(executor.Config{Cores: -1, TaskCPUs: -2, MaxResultSize: -1, MaxDirectResultSize: -1}, nil)
	for _, want := range []string{"ExecutorID", "Cores", "TaskCPUs", "MaxResultSize", "MaxDirectResultSize", "Reporter"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
	_, err = executor.New(executor.Config{ExecutorID: "e", Cores: 2, TaskCPUs: 3}, func(*flintpb.StatusUpdate) {})
	if err == nil || !strings.Contains(err.Error(), "exceeds Cores") {
		t.Errorf("TaskCPUs > Cores: %v", err)
	}
	r, err := executor.New(executor.Config{ExecutorID: "e", Cores: 2}, func(*flintpb.StatusUpdate) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type baseKey struct{}

func TestTasksDeriveTheirContextFromBaseContext(t *testing.T) {
	reg := testRegistry(nil)
	task.MustRegister(reg, "fromBase", func(ctx context.Context, _ int) (string, error) {
		v, _ := ctx.Value(baseKey{}).(string)
		return v, nil
	}, nil)
	r, c := newRuntime(t, executor.Config{Registry: reg, BaseContext: func() context.Context {
		return context.WithValue(context.Background(), baseKey{}, "the executor's shuffle")
	}})
	if err := r.Launch(td(t, 1, "fromBase", 0)); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	var got string
	if err := codec.Gob.Unmarshal(u.Result.GetInline(), &got); err != nil || got != "the executor's shuffle" {
		t.Fatalf("task saw %q (%v) from its context", got, err)
	}
}
