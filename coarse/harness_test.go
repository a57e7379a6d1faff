package coarse

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/backendharness"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// rig is a started coarse backend on a backendharness: a fake Mesos
// connection, fake executor streams and a fake driver record what it
// does; the test is the master, the executors, the driver loop and the
// clock.
type rig struct {
	t       *testing.T
	b       *Backend
	h       *backendharness.Harness
	streams *backendharness.Streams
	clock   *clock.Fake
}

// The harness backend's settings: executors of 2 cores and 64 + 32 MiB,
// at most one (flint.cores.max=2).
var rigConf = []string{
	"flint.master=mesos://127.0.0.1:5050", "flint.driver.host=127.0.0.1", "flint.executor.cores=2",
	"flint.cores.max=2", "flint.executor.memory=64m", "flint.mesos.executor.memoryOverhead=32m",
	"flint.mesos.coarse.noExecutorTimeout=10s", "flint.mesos.coarse.shutdownTimeout=30s",
}

func newRig(t *testing.T, conf ...string) *rig {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Conf: append(slices.Clone(rigConf), conf...)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := backend.ParseMaster(cfg.String("flint.master"))
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	r := &rig{t: t, h: backendharness.New(), streams: &backendharness.Streams{}, clock: clock.NewFake(time.Unix(1000, 0))}
	r.b, err = NewBackend(backend.Params{Master: m, Config: cfg, Logger: log}, WithDialer(r.h.Dial), WithClock(r.clock),
		WithStreams(func(ev gateway.Events) Streams { return r.streams.NewStreams(ev) }, "driver:2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.b.Start(context.Background(), r.h.Driver); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Cancelled: Stop waits for no executor's end on the fake clock.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = r.b.Stop(ctx)
	})
	r.h.Handler().Subscribed("fw-1", r.h.Conn.Master(), false)
	r.expect(nil, nil, nil)
	return r
}

// settle waits until the backend's owner handled everything queued and
// the death reports it started were handed to the driver.
func (r *rig) settle() {
	r.b.Flush()
	r.b.deaths.wait() // no input is queued: no report starts meanwhile
	r.b.Flush()
}

// expect compares what the backend called on the connection, on the
// executors' streams and on the driver since the last expect (nil: none).
func (r *rig) expect(conn, streams, driver []string) {
	r.t.Helper()
	r.settle()
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"connection", r.h.Conn.Script(), conn}, {"stream", r.streams.Script(), streams}, {"driver", r.h.Driver.Script(), driver}} {
		if !slices.Equal(c.got, c.want) {
			r.t.Fatalf("%s calls:\n  got  %q\n  want %q", c.what, c.got, c.want)
		}
	}
}

// up makes an offer from agent S0 become executor "0", which registers.
func (r *rig) up() {
	r.t.Helper()
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024, 0)})
	r.settle()
	r.h.Conn.Calls()
	r.streams.Events().ExecutorRegistered(gateway.ExecutorInfo{ID: "0", Host: "h0"})
	r.expect(nil, nil, []string{"up 0 h0 2"})
}

func launch(ids ...uint64) backend.Batch {
	var b backend.Batch
	for _, id := range ids {
		b.Launches = append(b.Launches, &backend.TaskDescription{TaskID: id, Attempt: 1, ExecutorID: "0", CPUs: 1})
	}
	return b
}

func mesosStatus(id string, st mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	agent := mesos.AgentID{Value: "S0"}
	return mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: st.Enum(), Reason: reason.Enum(),
		Source: mesos.SOURCE_MASTER.Enum(), AgentID: &agent, Message: proto.String(msg)}
}

// An offer becomes one executor of flint.executor.cores (the cap allows
// one): a Mesos task taking 2 cpus and 64 + 32 MiB, launched on the offer;
// demand is withdrawn, the cap reached. It registers over the gateway and
// is reported up with its cores.
func TestHarnessOfferLaunchesExecutor(t *testing.T) {
	r := newRig(t)
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024, 0)})
	r.settle()
	calls := r.h.Conn.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, c.String())
	}
	if !slices.Equal(got, []string{"launch o1 [0]", "demand off"}) {
		t.Fatalf("connection calls %q, want executor 0 launched on o1, then demand off", got)
	}
	ti := calls[0].Tasks[0]
	if cpus, mem := scalarOf(ti.Resources, "cpus"), scalarOf(ti.Resources, "mem"); cpus != 2 || mem != 96 {
		t.Fatalf("executor 0 takes cpus %g mem %g, want 2 and 64+32 MiB", cpus, mem)
	}
	r.expect(nil, nil, nil) // not up before it registered
	r.streams.Events().ExecutorRegistered(gateway.ExecutorInfo{ID: "0", Host: "h0"})
	r.expect(nil, nil, []string{"up 0 h0 2"})
	if got := r.b.Executors(); len(got) != 1 || got[0].ID != "0" || !got[0].Registered || got[0].Cores != 2 {
		t.Fatalf("Executors() = %+v, want executor 0 registered with 2 cores", got)
	}
	if n := r.b.DefaultParallelism(); n != 2 {
		t.Fatalf("DefaultParallelism() = %d, want the registered executor's 2 cores", n)
	}
	// A registration the backend did not launch is refused on its stream.
	r.streams.Events().ExecutorRegistered(gateway.ExecutorInfo{ID: "9", Host: "h9"})
	r.expect(nil, []string{"stop 9"}, nil)
}

// Launches go on the executor's stream; its status updates go to the
// driver in stream order (RUNNING, which the loop ignores, is dropped).
func TestHarnessStatusUpdates(t *testing.T) {
	r := newRig(t)
	r.up()
	r.b.Apply(launch(1, 2))
	r.expect(nil, []string{"launch 0 [1 2]"}, nil)
	ev := r.streams.Events()
	ev.StatusUpdate(&flintpb.StatusUpdate{TaskId: 1, Attempt: 1, ExecutorId: "0", State: flintpb.TaskState_TASK_RUNNING})
	ev.StatusUpdate(&flintpb.StatusUpdate{TaskId: 1, Attempt: 1, ExecutorId: "0", State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("ok")}}})
	ev.StatusUpdate(&flintpb.StatusUpdate{TaskId: 2, Attempt: 1, ExecutorId: "0", State: flintpb.TaskState_TASK_FAILED})
	r.expect(nil, nil, []string{"status 1 TASK_FINISHED", "status 2 TASK_FAILED"})
}

// A kill the driver makes after a launch reaches the executor's stream
// after that launch.
func TestHarnessKillAfterLaunch(t *testing.T) {
	r := newRig(t)
	r.up()
	r.b.Apply(launch(1))
	r.b.Apply(backend.Batch{Kills: []backend.Kill{{TaskID: 1, ExecutorID: "0", Reason: "job cancelled"}}})
	r.expect(nil, []string{"launch 0 [1]", "kill 0 1"}, nil)
	// A launch on an executor that went away meanwhile is reported lost
	// (retried by the driver), with the executor.
	r.streams.Break("0")
	r.b.Apply(launch(2))
	r.settle()
	if got := r.streams.Script(); !slices.Equal(got, []string{"launch 0 [2]"}) {
		t.Fatalf("stream calls %q, want the launch of task 2 tried", got)
	}
	ev := r.h.Driver.Events()
	if len(ev) != 2 || ev[0].String() != "status 2 TASK_LOST" || ev[1].String() != "lost 0" || ev[1].CausedByApp {
		t.Fatalf("driver calls %v, want task 2 lost, then executor 0 lost, not the application's fault", ev)
	}
}

// An agent lost with its executor: Mesos reports the executor's task
// LOST; the driver hears the executor lost, not by the application's
// fault (its tasks count toward no failure limit), the process is asked
// to stop and another executor is wanted.
func TestHarnessAgentLost(t *testing.T) {
	r := newRig(t)
	r.up()
	r.h.Handler().AgentLost(mesos.AgentID{Value: "S0"})
	r.h.Handler().Update(mesosStatus("0", mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED, "agent removed"))
	r.settle()
	if got := r.h.Conn.Script(); !slices.Equal(got, []string{"demand on"}) {
		t.Fatalf("connection calls %q, want demand on", got)
	}
	if got := r.streams.Script(); !slices.Equal(got, []string{"stop 0"}) {
		t.Fatalf("stream calls %q, want executor 0 stopped", got)
	}
	ev := r.h.Driver.Events()
	if len(ev) != 1 || ev[0].String() != "lost 0" || ev[0].CausedByApp ||
		!strings.Contains(ev[0].Reason, "TASK_LOST") || !strings.Contains(ev[0].Reason, "agent removed") {
		t.Fatalf("driver calls %v, want executor 0 lost (TASK_LOST, agent removed), not the application's fault", ev)
	}
	if got := r.b.Executors(); len(got) != 0 {
		t.Fatalf("Executors() = %+v after the loss, want none", got)
	}
	if ex := r.b.fails.exclusions(r.clock.Now()); len(ex) != 0 {
		t.Fatalf("an agent's loss excluded %v", ex)
	}
}

// A broken stream waits deathGrace (on the backend's clock) for the Mesos
// status that says how the executor ended; none comes, so it is killed
// through Mesos and reported lost without one — not a moment before.
func TestHarnessBrokenStreamDeathGrace(t *testing.T) {
	r := newRig(t)
	r.up()
	r.streams.Events().ExecutorLost("0", "stream broke")
	r.expect([]string{"demand off"}, nil, nil) // the lost executor's cores still count until Mesos ends it
	r.clock.Advance(deathGrace - time.Millisecond)
	r.expect(nil, nil, nil)
	r.clock.Advance(time.Millisecond)
	r.settle()
	if got := r.h.Conn.Script(); !slices.Equal(got, []string{"kill 0 on S0"}) {
		t.Fatalf("connection calls %q, want executor 0 killed through Mesos", got)
	}
	ev := r.h.Driver.Events()
	if len(ev) != 1 || ev[0].String() != "lost 0" || !ev[0].CausedByApp || !strings.Contains(ev[0].Reason, "stream broke") {
		t.Fatalf("driver calls %v, want executor 0 lost (stream broke)", ev)
	}
}

// A broken stream whose Mesos status comes within the grace is reported
// with it (the exit status says how the process ended); nothing is killed.
func TestHarnessBrokenStreamThenMesosStatus(t *testing.T) {
	r := newRig(t)
	r.up()
	r.streams.Events().ExecutorLost("0", "stream broke")
	r.h.Handler().Update(mesosStatus("0", mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, "Command exited with status 3"))
	r.settle()
	for _, c := range r.h.Conn.Calls() {
		if c.Op == "kill" {
			t.Fatalf("executor killed though Mesos reported its end: %v", c)
		}
	}
	r.streams.Script()
	ev := r.h.Driver.Events()
	if len(ev) != 1 || ev[0].String() != "lost 0" || !ev[0].CausedByApp || !strings.Contains(ev[0].Reason, "Command exited with status 3") {
		t.Fatalf("driver calls %v, want executor 0 lost with its exit status", ev)
	}
	r.clock.Advance(deathGrace) // the grace's timer was stopped: nothing more
	r.expect(nil, nil, nil)
}

// Tasks wait and no offer can hold an executor: after
// flint.mesos.coarse.noExecutorTimeout of ticks (not before) the backend
// aborts, naming what the offers lacked.
func TestHarnessNoExecutorAborts(t *testing.T) {
	r := newRig(t, "flint.executor.memory=4g")
	r.b.Apply(backend.Batch{Demand: &backend.Demand{Waiting: true}, Tick: true, Now: r.clock.Now()})
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024, 0)})
	r.expect([]string{"decline o1 (unfit)", "demand on"}, nil, nil)
	r.clock.Advance(10*time.Second - time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.expect(nil, nil, nil)
	r.clock.Advance(time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.settle()
	ev := r.h.Driver.Events()
	if len(ev) != 1 || ev[0].Op != "abort" {
		t.Fatalf("driver calls %v, want one abort", ev)
	}
	for _, want := range []string{"tasks waited 10s (flint.mesos.coarse.noExecutorTimeout)", "offers did not fit"} {
		if !strings.Contains(ev[0].Reason, want) {
			t.Fatalf("abort reason lacks %q: %s", want, ev[0].Reason)
		}
	}
}

// Stop withdraws demand, asks every executor to stop, waits for its Mesos
// task to end, and only then tears the framework down; batches after it
// are dropped.
func TestHarnessStop(t *testing.T) {
	r := newRig(t)
	r.up()
	stopped := make(chan error, 1)
	go func() { stopped <- r.b.Stop(context.Background()) }()
	waitfor.True(t, 30*time.Second, "executor 0 asked to stop", func() bool {
		r.b.Flush()
		return slices.Contains(r.streams.Script(), "stop 0")
	})
	if got := r.h.Conn.Script(); !slices.Equal(got, []string{"demand off"}) {
		t.Fatalf("connection calls %q before the executor ended, want demand off only", got)
	}
	r.streams.Events().ExecutorLost("0", "stopped")
	r.h.Handler().Update(mesosStatus("0", mesos.TASK_FINISHED, mesos.REASON_COMMAND_EXECUTOR_FAILED, ""))
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	r.b.Apply(launch(1))
	// The end's demand update (off while stopping), then the teardown.
	if got := r.h.Conn.Script(); !slices.Equal(got, []string{"demand off", "stop teardown"}) {
		t.Fatalf("connection calls %q, want demand kept off and the framework torn down", got)
	}
	// The Mesos end stops a process that might outlive its task; the
	// launch after Stop went nowhere.
	if got := r.streams.Script(); !slices.Equal(got, []string{"stop 0"}) {
		t.Fatalf("stream calls after the executor's end: %q, want only its stop", got)
	}
	if ev := r.h.Driver.Events(); len(ev) != 0 {
		t.Fatalf("driver calls while stopping: %v", ev)
	}
}

func scalarOf(rs mesos.Resources, name string) float64 {
	for _, r := range rs {
		if r.Name == name {
			return r.GetScalar().GetValue()
		}
	}
	return 0
}
