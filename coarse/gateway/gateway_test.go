package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func TestRegisterAndRunTasks(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	reg := testRegistry(nil)
	startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry = reg })
	info := rec.waitRegistered(t)
	if info.ID != "exec-1" || info.Host != "localhost" || info.Cores != 4 || info.AgentID != "agent-1" {
		t.Fatalf("registered %+v", info)
	}
	if got := gw.Executors(); len(got) != 1 || got[0].ID != "exec-1" {
		t.Fatalf("Executors() = %+v", got)
	}

	// Inline result.
	td := encodeInt(t, reg, "bytes", 100)
	td.TaskId = 1
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	// (Its RUNNING update may be superseded by FINISHED on the executor.)
	u := rec.waitState(t, 1, flintpb.TaskState_TASK_FINISHED)
	if got := u.Result.GetInline(); len(got) == 0 || u.ExecutorId != "exec-1" {
		t.Fatalf("inline result: %v", u)
	}

	// Indirect result of several MiB (above the 64 KiB direct limit the
	// gateway's properties set), fetched in chunks.
	const size = 5<<20 + 123
	td = encodeInt(t, reg, "bytes", size)
	td.TaskId = 2
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	u = rec.waitState(t, 2, flintpb.TaskState_TASK_FINISHED)
	ind := u.Result.GetIndirect()
	if ind == nil || ind.Size_ < size {
		t.Fatalf("want an indirect result of %d bytes, got %v", size, u.Result)
	}
	data, err := gw.FetchResult(context.Background(), "exec-1", ind.BlockId)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != ind.Size_ || hex.EncodeToString(sum[:]) != ind.Sha256 {
		t.Fatalf("fetched %d bytes with sha %x, want %d bytes with sha %s", len(data), sum, ind.Size_, ind.Sha256)
	}
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	var decoded []byte
	e, _ := reg.Lookup("bytes")
	if err := e.Codec().Unmarshal(data, &decoded); err != nil || !bytes.Equal(decoded, want) {
		t.Fatalf("fetched result does not decode to the function's output (err %v)", err)
	}
	gw.ReleaseResult("exec-1", ind.BlockId)
	if _, err := gw.FetchResult(context.Background(), "exec-1", ind.BlockId); !errors.Is(err, gateway.ErrFetch) {
		t.Fatalf("fetch after release: %v, want ErrFetch", err)
	}
	if _, err := gw.FetchResult(context.Background(), "nobody", "b"); !errors.Is(err, gateway.ErrUnknownExecutor) {
		t.Fatalf("fetch from an unknown executor: %v", err)
	}
	if err := gw.Launch("nobody", td); !errors.Is(err, gateway.ErrUnknownExecutor) {
		t.Fatalf("launch on an unknown executor: %v", err)
	}
}

func TestKillAndFailuresPropagate(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	reg := testRegistry(nil)
	startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry = reg })
	rec.waitRegistered(t)

	td := encodeInt(t, reg, "block", 0)
	td.TaskId = 10
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	rec.waitState(t, 10, flintpb.TaskState_TASK_RUNNING)
	if err := gw.Kill("exec-1", 10, "speculative copy won"); err != nil {
		t.Fatal(err)
	}
	u := rec.waitState(t, 10, flintpb.TaskState_TASK_KILLED)
	if u.Failure.GetKind() != flintpb.FailureKind_KILLED || u.Failure.GetMessage() != "speculative copy won" {
		t.Fatalf("killed: %v", u.Failure)
	}

	for i, c := range []struct {
		fn   string
		kind flintpb.FailureKind
		text string
	}{
		{"panic", flintpb.FailureKind_PANIC, "boom"},
		{"fail", flintpb.FailureKind_EXCEPTION, "bad input"},
		{"missing", flintpb.FailureKind_UNKNOWN_FUNCTION, "missing"},
	} {
		td := encodeInt(t, reg, "noop", 0)
		td.Function, td.TaskId = c.fn, uint64(20+i)
		if err := gw.Launch("exec-1", td); err != nil {
			t.Fatal(err)
		}
		u := rec.waitState(t, td.TaskId, flintpb.TaskState_TASK_FAILED)
		if u.Failure.GetKind() != c.kind || !strings.Contains(u.Failure.GetMessage(), c.text) {
			t.Fatalf("%s: failure %v", c.fn, u.Failure)
		}
		if c.kind == flintpb.FailureKind_PANIC && !strings.Contains(u.Failure.GetStack(), "goroutine") {
			t.Fatalf("panic without a stack: %v", u.Failure)
		}
	}
}

func TestTaskCPUsFromPropertiesAndLaunchFailure(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, func(c *gateway.Config) { c.Settings = &flintpb.ExecutorSettings{TaskCpus: 2} })
	reg := testRegistry(nil)
	startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.Cores = reg, 2 })
	rec.waitRegistered(t)
	for id := uint64(1); id <= 2; id++ {
		td := encodeInt(t, reg, "block", 0)
		td.TaskId = id
		if err := gw.Launch("exec-1", td); err != nil {
			t.Fatal(err)
		}
	}
	// Task 1 takes both cores (flint.task.cpus=2), so task 2 cannot start.
	u := rec.waitState(t, 2, flintpb.TaskState_TASK_FAILED)
	if u.Failure.GetKind() != flintpb.FailureKind_LAUNCH_FAILED {
		t.Fatalf("second task: %v", u.Failure)
	}
}

// A wrong token is refused for good: the executor gives up without a
// retry. Its reconnection clock is a clock.Fake the test never advances,
// so a retry (which waits on that clock first) would never return.
func TestWrongSecretRefused(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	clk := newFakeClock()
	run := startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Token, c.Clock = "not-the-secret", clk })
	err := run.wait(t, 30*time.Second)
	if !errors.Is(err, coarseexec.ErrRefused) || strings.Contains(err.Error(), "not-the-secret") {
		t.Fatalf("Run with a wrong secret: %v", err)
	}
	if p := clk.Pending(); len(p) != 0 {
		t.Fatalf("timers left armed after the refusal: %v", p)
	}

	raw := dialRaw(t, gw.Addr().String())
	if _, err := raw.register("exec-raw", "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("raw registration with a wrong token: %v", err)
	}
	// Neither another executor's token nor the application secret itself
	// registers an executor: each has its own.
	for token, what := range map[string]string{tokenFor("exec-other"): "another executor's token", secret: "the application secret"} {
		raw := dialRaw(t, gw.Addr().String())
		if _, err := raw.register("exec-raw", token); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("registration with %s: %v", what, err)
		}
	}
	if got := gw.Executors(); len(got) != 0 {
		t.Fatalf("registered despite a wrong token: %+v", got)
	}
	select {
	case info := <-rec.registered:
		t.Fatalf("ExecutorRegistered for %+v", info)
	default:
	}
}

func TestDuplicateExecutorIDRefused(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	first := dialRaw(t, gw.Addr().String())
	if m, err := first.register("dup", tokenFor("dup")); err != nil || m.GetRegistered() == nil {
		t.Fatalf("first registration: %v %v", m, err)
	}
	rec.waitRegistered(t)
	second := dialRaw(t, gw.Addr().String())
	_, err := second.register("dup", tokenFor("dup"))
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second registration of a live id: %v", err)
	}
	if got := gw.Executors(); len(got) != 1 || got[0].Host != "raw" {
		t.Fatalf("Executors() = %+v", got)
	}
	select {
	case l := <-rec.lost:
		t.Fatalf("a refused duplicate made %v lost", l)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestStreamBreakLosesExecutor(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	raw := dialRaw(t, gw.Addr().String())
	if _, err := raw.register("e1", tokenFor("e1")); err != nil {
		t.Fatal(err)
	}
	rec.waitRegistered(t)
	raw.close()
	if l := rec.waitLost(t); l[0] != "e1" {
		t.Fatalf("lost %v", l)
	}
	if err := gw.Launch("e1", &flintpb.TaskDescription{TaskId: 1}); !errors.Is(err, gateway.ErrUnknownExecutor) {
		t.Fatalf("launch on a lost executor: %v", err)
	}
}

func TestHeartbeatTimeout(t *testing.T) {
	rec := newRecorder()
	clock := newFakeClock()
	gw := startGateway(t, rec, func(c *gateway.Config) {
		c.Clock, c.Timeout, c.HeartbeatInterval, c.CheckInterval = clock, 30*time.Second, 10*time.Second, time.Second
	})
	raw := dialRaw(t, gw.Addr().String())
	if _, err := raw.register("silent", tokenFor("silent")); err != nil {
		t.Fatal(err)
	}
	rec.waitRegistered(t)
	// Heartbeats within the timeout keep it alive. A stream's messages are
	// handled in order: once the status update sent after a heartbeat
	// arrives, the heartbeat has been heard before the next advance.
	for i := range 5 {
		clock.Advance(20 * time.Second)
		raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Heartbeat{Heartbeat: &flintpb.Heartbeat{ExecutorId: "silent"}}})
		uuid := make([]byte, 16)
		uuid[0] = byte(i + 1)
		id := uint64(1000 + i)
		raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
			ExecutorId: "silent", TaskId: id, State: flintpb.TaskState_TASK_RUNNING, Uuid: uuid}}})
		rec.waitState(t, id, flintpb.TaskState_TASK_RUNNING)
	}
	select {
	case l := <-rec.lost:
		t.Fatalf("lost while heartbeating: %v", l)
	default:
	}
	// Then silence: advance until the checker notices.
	var lost [2]string
	for deadline := time.Now().Add(10 * time.Second); lost[0] == "" && time.Now().Before(deadline); {
		clock.Advance(11 * time.Second)
		select {
		case lost = <-rec.lost:
		case <-time.After(20 * time.Millisecond):
		}
	}
	if lost[0] != "silent" || !strings.Contains(lost[1], "no heartbeat") {
		t.Fatalf("lost = %v", lost)
	}
	for {
		_, err := raw.stream.Recv()
		if err != nil {
			if status.Code(err) != codes.DeadlineExceeded {
				t.Fatalf("stream ended with %v, want DeadlineExceeded", err)
			}
			break
		}
	}
}

func TestDuplicateUpdatesDeliveredOnce(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	uuid := bytes.Repeat([]byte{7}, 16)
	update := &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
		TaskId: 5, ExecutorId: "e1", State: flintpb.TaskState_TASK_FINISHED, Uuid: uuid}}}
	for round := range 2 {
		raw := dialRaw(t, gw.Addr().String())
		if _, err := raw.register("e1", tokenFor("e1")); err != nil {
			t.Fatal(err)
		}
		rec.waitRegistered(t)
		raw.send(t, update) // the second round resends it as after a lost ack
		for {
			m, err := raw.stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if a := m.GetAck(); a != nil {
				if !bytes.Equal(a.Uuid, uuid) || a.TaskId != 5 {
					t.Fatalf("round %d: ack %v", round, a)
				}
				break
			}
		}
		raw.close()
		rec.waitLost(t)
	}
	if got := rec.all(); len(got) != 1 {
		t.Fatalf("delivered %d times, want once", len(got))
	}
}

func TestUnackedUpdatesResentAfterReconnect(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	px := startProxy(t, gw.Addr().String())
	release := make(chan struct{})
	reg := testRegistry(release)
	startExecutor(t, px.addr(), func(c *coarseexec.Config) { c.Registry = reg })
	rec.waitRegistered(t)
	td := encodeInt(t, reg, "gate", 0)
	td.TaskId = 42
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	toExec := px.forwarded(toExecutor)
	rec.waitState(t, 42, flintpb.TaskState_TASK_RUNNING)
	// The RUNNING ack is the gateway's next message to the executor.
	waitfor.True(t, 10*time.Second, "the RUNNING ack to reach the executor", func() bool { return px.forwarded(toExecutor) > toExec })
	px.drop.Store(true) // the network eats everything from now on
	close(release)      // FINISHED is sent into the void
	waitfor.True(t, 10*time.Second, "FINISHED to be dropped", func() bool { return px.dropped(toGateway) > 0 })
	px.breakAll()
	px.drop.Store(false)
	if l := rec.waitLost(t); l[0] != "exec-1" {
		t.Fatalf("lost %v", l)
	}
	rec.waitRegistered(t) // the executor came back under the same id
	u := rec.waitState(t, 42, flintpb.TaskState_TASK_FINISHED)
	if u.Result.GetInline() == nil {
		t.Fatalf("resent update lost its result: %v", u)
	}
	// No event is delivered once Close has begun: the list is final.
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, u := range rec.all() {
		seen[string(u.Uuid)]++
		if seen[string(u.Uuid)] > 1 {
			t.Fatalf("update %x delivered twice", u.Uuid)
		}
	}
	if n := len(rec.all()); n != 2 {
		t.Fatalf("delivered %d updates, want RUNNING and FINISHED once each", n)
	}
}

func TestStopExecutorEndsRun(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	reg := testRegistry(nil)
	run := startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry = reg })
	rec.waitRegistered(t)
	td := encodeInt(t, reg, "block", 0)
	td.TaskId = 3
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	rec.waitState(t, 3, flintpb.TaskState_TASK_RUNNING)
	if err := gw.StopExecutor("exec-1", "application finished"); err != nil {
		t.Fatal(err)
	}
	if err := run.wait(t, 5*time.Second); err != nil {
		t.Fatalf("Run after StopExecutor: %v", err)
	}
	if l := rec.waitLost(t); l[0] != "exec-1" || !strings.Contains(l[1], "application finished") {
		t.Fatalf("lost %v", l)
	}
	// The running task was killed on the way out and its update delivered.
	u := rec.waitState(t, 3, flintpb.TaskState_TASK_KILLED)
	if u.Failure.GetKind() != flintpb.FailureKind_KILLED {
		t.Fatalf("task on a stopped executor: %v", u)
	}
}

// An executor whose driver went away retries with backoff and gives up
// exactly when Timeout has passed on its clock (a clock.Fake the test
// advances through the retries, so slowness cannot shift the deadline).
func TestDriverGoneEndsRun(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	const timeout = time.Second
	clk := newFakeClock()
	run := startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Timeout, c.Clock = timeout, clk })
	rec.waitRegistered(t)
	start := clk.Now()
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	// startExecutor's backoff: 10 ms doubling to 100 ms.
	waits := retrySchedule(10*time.Millisecond, 100*time.Millisecond, timeout)
	for i, d := range waits {
		waitfor.True(t, 30*time.Second, fmt.Sprintf("retry %d to wait %s", i+1, d), func() bool { return clk.HasPending(d) })
		select {
		case err := <-run.done:
			t.Fatalf("Run returned after %d of %d waits: %v", i, len(waits), err)
		default:
		}
		clk.Advance(d)
	}
	err := run.wait(t, 30*time.Second)
	if !errors.Is(err, coarseexec.ErrDriverUnreachable) {
		t.Fatalf("Run after the driver left: %v", err)
	}
	if d := clk.Now().Sub(start); d != timeout {
		t.Fatalf("Run gave up at start+%s on its clock, want %s", d, timeout)
	}
}

// retrySchedule is the backoff an executor's reconnection loop waits
// between attempts: doubling from lo to at most hi, the last wait cut to
// end at total.
func retrySchedule(lo, hi, total time.Duration) []time.Duration {
	var out []time.Duration
	for sum, w := time.Duration(0), lo; sum < total; w = min(2*w, hi) {
		d := min(w, total-sum)
		out = append(out, d)
		sum += d
	}
	return out
}

func TestConfigValidation(t *testing.T) {
	if _, err := gateway.New(gateway.Config{}); err == nil || !strings.Contains(err.Error(), "Secret") || !strings.Contains(err.Error(), "Events") {
		t.Fatalf("New(empty): %v", err)
	}
	_, err := gateway.New(gateway.Config{Secret: "s", Events: gateway.EventFuncs{}, Timeout: time.Second, HeartbeatInterval: 2 * time.Second})
	if err == nil {
		t.Fatal("a timeout below the heartbeat interval was accepted")
	}
	a, b := gateway.NewSecret(), gateway.NewSecret()
	if a == b || len(a) < 40 {
		t.Fatalf("NewSecret: %q %q", a, b)
	}
}

// coarse.Main, the executor role, configures itself from the environment.
func TestExecutorRoleFromEnv(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	t.Setenv(contract.EnvDriverURL, gw.Addr().String())
	t.Setenv(contract.EnvExecutorID, "env-exec")
	t.Setenv(contract.EnvCores, "3")
	t.Setenv(contract.EnvToken, tokenFor("env-exec"))
	t.Setenv(contract.EnvAgentID, "agent-9")
	t.Setenv(contract.EnvLogLevel, "error")
	done := make(chan error, 1)
	go func() { done <- coarseexec.Main(context.Background()) }()
	info := rec.waitRegistered(t)
	if info.ID != "env-exec" || info.Cores != 3 || info.AgentID != "agent-9" {
		t.Fatalf("registered %+v", info)
	}
	if err := gw.StopExecutor("env-exec", "done"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Main: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not return after StopExecutor")
	}
}

func TestSecretNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.TraceLevel)
	rec := newRecorder()
	gw := startGateway(t, rec, func(c *gateway.Config) { c.Logger = log })
	raw := dialRaw(t, gw.Addr().String())
	if _, err := raw.register("e1", "wrong-token-value"); status.Code(err) != codes.Unauthenticated {
		t.Fatal(err)
	}
	ok := dialRaw(t, gw.Addr().String())
	if _, err := ok.register("e2", tokenFor("e2")); err != nil {
		t.Fatal(err)
	}
	rec.waitRegistered(t)
	ok.close()
	rec.waitLost(t)
	out := buf.String()
	if !strings.Contains(out, "authentication failed") || !strings.Contains(out, "executor registered") {
		t.Fatalf("expected log lines missing:\n%s", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, "wrong-token-value") || strings.Contains(out, tokenFor("e2")) {
		t.Fatalf("a token was logged:\n%s", out)
	}
}
