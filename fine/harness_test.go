package fine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/backendharness"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// rig is a started fine backend on a backendharness: a fake Mesos
// connection and a fake driver record what it does; the test is the
// master and the driver loop, and its clock.
type rig struct {
	t     *testing.T
	b     *Backend
	h     *backendharness.Harness
	clock *clock.Fake
}

// The harness backend's settings: executors take 0.5 cpus and 64 + 32 MiB,
// tasks 1 cpu; offers are held 1 s.
var rigConf = []string{
	"flint.master=mesos://127.0.0.1:5050", "flint.mesos.coarse=false", "flint.driver.host=127.0.0.1",
	"flint.executor.memory=64m", "flint.mesos.executor.memoryOverhead=32m", "flint.mesos.mesosExecutor.cores=0.5",
	"flint.mesos.fine.offerHoldTime=1s", "flint.mesos.fine.noFitTimeout=10s",
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
	r := &rig{t: t, h: backendharness.New(), clock: clock.NewFake(time.Time{})}
	r.b, err = NewBackend(backend.Params{Master: m, Config: cfg, Logger: log}, WithDialer(r.h.Dial), WithClock(r.clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.b.Start(context.Background(), r.h.Driver); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.b.Stop(context.Background()) })
	r.h.Handler().Subscribed("fw-1", r.h.Conn.Master(), false)
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	return r
}

// settle waits until the backend's owner handled everything queued.
func (r *rig) settle() { r.b.Flush() }

// expect compares what the backend called on the connection and on the
// driver since the last expect (a nil want expects none).
func (r *rig) expect(conn, driver []string) {
	r.t.Helper()
	r.settle()
	if got := r.h.Conn.Script(); !slices.Equal(got, conn) {
		r.t.Fatalf("connection calls:\n  got  %q\n  want %q", got, conn)
	}
	if got := r.h.Driver.Script(); !slices.Equal(got, driver) {
		r.t.Fatalf("driver calls:\n  got  %q\n  want %q", got, driver)
	}
}

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func offer(id, agent string, cpus, mem float64) mesos.Offer {
	return mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: agent}, Hostname: "h-" + agent,
		Resources: mesos.Resources{scalar("cpus", cpus), scalar("mem", mem)}}
}

func launches(exec string, ids ...uint64) backend.Batch {
	var b backend.Batch
	for _, id := range ids {
		b.Launches = append(b.Launches, &backend.TaskDescription{TaskID: id, Attempt: 1, ExecutorID: exec, CPUs: 1})
	}
	return b
}

func update(id string, st mesos.TaskState, src mesos.TaskStatus_Source, data []byte) mesos.TaskStatus {
	agent, exec := mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}
	return mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: st.Enum(), Source: src.Enum(), AgentID: &agent, ExecutorID: &exec, Data: data}
}

// An offer becomes the capacity of the agent's executor; tasks the driver
// places there are launched in one ACCEPT of the offer, each taking 1 cpu
// and naming the agent's new executor, which brings its own 0.5 cpus and
// 96 MiB.
func TestHarnessOfferBecomesCapacityAndLaunch(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	// 4 cpus: the executor's 0.5, three 1-cpu tasks and a fourth on the
	// 0.5 the executor's share leaves of its slot (package doc): 4 slots.
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024)})
	r.expect([]string{"demand off"}, []string{"up " + e + " h-S0 4"})

	r.b.Apply(launches(e, 1, 2))
	r.settle()
	// The offer is used up: the executor's capacity is its live tasks'.
	if got, want := r.h.Driver.Script(), []string{"up " + e + " h-S0 2"}; !slices.Equal(got, want) {
		t.Fatalf("driver calls %q, want %q", got, want)
	}
	calls := r.h.Conn.Calls()
	if len(calls) != 1 || calls[0].String() != "launch o1 [1 2]" {
		t.Fatalf("connection calls %v, want one launch of tasks 1 and 2 on o1", calls)
	}
	for _, ti := range calls[0].Tasks {
		if got := mesosconn.Scalar(ti.Resources, "cpus"); got != 1 {
			t.Fatalf("task %s takes %g cpus, want 1", ti.TaskID.Value, got)
		}
		if ti.Executor == nil || ti.Executor.ExecutorID.Value != e {
			t.Fatalf("task %s names executor %v, want %s", ti.TaskID.Value, ti.Executor, e)
		}
		if cpus, mem := mesosconn.Scalar(ti.Executor.Resources, "cpus"), mesosconn.Scalar(ti.Executor.Resources, "mem"); cpus != 0.5 || mem != 96 {
			t.Fatalf("the new executor takes cpus %g mem %g, want 0.5 and 64+32 MiB", cpus, mem)
		}
	}
}

// A task's terminal update reaches the driver after the capacity its end
// takes away: the loop never sees a slot no offer holds. The executor's
// RUNNING is passed on; duplicates of the terminal update are ignored.
func TestHarnessStatusUpdatesFollowTheCapacity(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024)})
	r.b.Apply(launches(e, 1, 2))
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()

	done, err := (&flintpb.StatusUpdate{TaskId: 1, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("ok")}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h := r.h.Handler()
	h.Update(update("1", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil))
	h.Update(update("1", mesos.TASK_FINISHED, mesos.SOURCE_EXECUTOR, done))
	h.Update(update("1", mesos.TASK_FINISHED, mesos.SOURCE_EXECUTOR, done))
	r.expect(nil, []string{"status 1 TASK_RUNNING", "up " + e + " h-S0 1", "status 1 TASK_FINISHED"})
	h.Update(update("2", mesos.TASK_FAILED, mesos.SOURCE_AGENT, nil))
	r.expect(nil, []string{"up " + e + " h-S0 0", "status 2 TASK_FAILED"})
}

// A kill the driver makes after a launch reaches Mesos after that launch,
// naming the task's agent.
func TestHarnessKillAfterLaunch(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024)})
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	r.b.Apply(launches(e, 1))
	r.b.Apply(backend.Batch{Kills: []backend.Kill{{TaskID: 1, ExecutorID: e, Reason: "job cancelled"}}})
	r.expect([]string{"launch o1 [1]", "kill 1 on S0"}, []string{"up " + e + " h-S0 1"})
	r.h.Handler().Update(update("1", mesos.TASK_KILLED, mesos.SOURCE_EXECUTOR, nil))
	r.expect(nil, []string{"up " + e + " h-S0 0", "status 1 TASK_KILLED"})
}

// An agent lost: its held offers are declined at once; its tasks end
// through Mesos' own LOST updates (retried by the driver, not counted);
// its executor, with no live task left, is reported lost only when Mesos
// reports it gone.
func TestHarnessAgentLost(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024)})
	r.b.Apply(launches(e, 1))
	o2 := offer("o2", "S0", 1, 512)
	o2.ExecutorIDs = []mesos.ExecutorID{{Value: e}} // made while the executor runs
	r.h.Handler().Offers([]mesos.Offer{o2})
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()

	r.h.Handler().AgentLost(mesos.AgentID{Value: "S0"})
	r.expect([]string{"decline o2 (unfit)"}, []string{"up " + e + " h-S0 1"})
	r.h.Handler().Update(update("1", mesos.TASK_LOST, mesos.SOURCE_MASTER, nil))
	r.settle()
	ev := r.h.Driver.Events()
	// Mesos sends no FAILURE for the executors of a removed agent: the
	// executor is reported lost once its last task ended, so the driver
	// drops the map outputs it served (found by the simulation, seed 43:
	// every reducer failed fetching them until the job aborted).
	if len(ev) != 3 || ev[0].String() != "up "+e+" h-S0 0" || ev[1].String() != "status 1 TASK_LOST" ||
		ev[1].Update.Failure == nil || ev[1].Update.Failure.Kind != scheduler.ExecutorLost || ev[2].String() != "lost "+e {
		t.Fatalf("driver calls after the LOST update: %v, want the capacity gone, task 1 LOST (EXECUTOR_LOST), then the executor lost", ev)
	}
	r.h.Handler().ExecutorLost(mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: e}, 9)
	r.expect(nil, nil) // reported once
}

// Offers nobody wants are held for flint.mesos.fine.offerHoldTime (the
// loop's ticks time it), then declined with the no-demand filter.
func TestHarnessHeldOffersExpireOnTicks(t *testing.T) {
	r := newRig(t)
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 2, 1024)})
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	r.clock.Advance(999 * time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.expect(nil, nil)
	r.clock.Advance(time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.expect([]string{"decline o1 (no demand)"}, []string{"up " + executorID("S0") + " h-S0 0"})
}

// Tasks wait, none is live, and no offer fits one: after
// flint.mesos.fine.noFitTimeout of ticks (not before) the backend aborts,
// naming what each agent's offers lacked; nothing is launched.
func TestHarnessNoFitAborts(t *testing.T) {
	r := newRig(t, "flint.task.cpus=5")
	r.b.Apply(backend.Batch{Demand: &backend.Demand{Waiting: true}, Tick: true, Now: r.clock.Now()})
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024), offer("o2", "S1", 4, 1024)})
	r.expect([]string{"demand on", "decline o1,o2 (unfit)", "demand on"}, nil)
	r.clock.Advance(10*time.Second - time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.expect(nil, nil)
	r.clock.Advance(time.Millisecond)
	r.b.Apply(backend.Batch{Tick: true, Now: r.clock.Now()})
	r.settle()
	ev := r.h.Driver.Events()
	if len(ev) != 1 || ev[0].Op != "abort" {
		t.Fatalf("driver calls: %v, want one abort", ev)
	}
	for _, want := range []string{"flint.mesos.fine.noFitTimeout", "no offer fits a task",
		"cpus 4.0 < 5.5 needed (flint.task.cpus + flint.mesos.mesosExecutor.cores)", "agent S0 (h-S0)", "agent S1 (h-S1)"} {
		if !strings.Contains(ev[0].Reason, want) {
			t.Fatalf("abort reason lacks %q: %s", want, ev[0].Reason)
		}
	}
	if calls := r.h.Conn.Calls(); len(calls) != 0 {
		t.Fatalf("connection calls after the abort: %v", calls)
	}
}

// Stop declines the held offers, withdraws demand and tears the framework
// down; batches after it are dropped.
func TestHarnessStop(t *testing.T) {
	r := newRig(t)
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 2, 1024)})
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	if err := r.b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.b.Apply(launches(executorID("S0"), 1))
	if got, want := r.h.Conn.Script(), []string{"decline o1 (shutting down)", "demand off", "stop teardown"}; !slices.Equal(got, want) {
		t.Fatalf("connection calls: %q, want %q", got, want)
	}
}

// A shuffle release reaches the executors of the agents in agent order,
// whatever the order of the backend's maps: the same inputs make the same
// calls (a simulation replays a seed from them).
func TestHarnessShuffleReleasesInAgentOrder(t *testing.T) {
	r := newRig(t)
	var want []string
	for _, a := range []string{"S3", "S0", "S4", "S1", "S2"} {
		r.h.Handler().Offers([]mesos.Offer{offer("o-"+a, a, 2, 1024)})
		r.b.Apply(launches(executorID(a), uint64(len(a)+int(a[1]))))
	}
	for _, a := range []string{"S0", "S1", "S2", "S3", "S4"} {
		want = append(want, "message "+executorID(a)+" on "+a)
	}
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	for range 5 { // five times: a map's order would differ at least once
		r.b.Apply(backend.Batch{ShuffleReleases: []backend.ShuffleRelease{{ShuffleID: 3}}})
		r.settle()
		if got := r.h.Conn.Script(); !slices.Equal(got, want) {
			t.Fatalf("release calls %q, want %q", got, want)
		}
	}
}

// flint.cores.max holds at the launch, not only in the capacity reported:
// each agent's capacity is a report of its own, so the driver may launch
// into capacities of two plans whose sum is over the cap (it did: the
// master saw 4 cpus under flint.cores.max=3 in TestCoresMaxInFineMode).
// Here the driver launches two tasks on each agent while the cap leaves
// room for an executor and two tasks on one of them (0.5 + 2 of 3 cpus):
// S0's launch takes them, S1's tasks are LOST (retried, not counted) and
// its offer stays held.
func TestHarnessCoresMaxHoldsAtTheLaunch(t *testing.T) {
	r := newRig(t, "flint.cores.max=3")
	e0, e1 := executorID("S0"), executorID("S1")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 4, 1024), offer("o2", "S1", 4, 1024)})
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()

	b := launches(e0, 1, 2)
	b.Launches = append(b.Launches, launches(e1, 3, 4).Launches...)
	r.b.Apply(b)
	r.settle()
	calls := r.h.Conn.Calls()
	if len(calls) != 1 || calls[0].String() != "launch o1 [1 2]" {
		t.Fatalf("connection calls %v, want one launch of tasks 1 and 2 on o1 only", calls)
	}
	want := []string{"up " + e0 + " h-S0 2", "up " + e1 + " h-S1 0", "status 3 TASK_LOST", "status 4 TASK_LOST"}
	if got := r.h.Driver.Script(); !slices.Equal(got, want) {
		t.Fatalf("driver calls %q, want %q", got, want)
	}
	if got := mesosconn.Scalar(calls[0].Tasks[0].Executor.Resources, "cpus") + 2; got > 3 {
		t.Fatalf("the launch holds %g cpus, over flint.cores.max=3", got)
	}
}

// A task placed beside an executor that then died runs on the executor
// its agent starts again for it: shuffle releases reach that executor,
// which else kept its outputs and never exited idle.
func TestHarnessRestartedExecutorGetsReleases(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 2, 1024)})
	r.b.Apply(launches(e, 1))
	o2 := offer("o2", "S0", 1, 512)
	o2.ExecutorIDs = []mesos.ExecutorID{{Value: e}} // made while the executor runs
	r.h.Handler().Offers([]mesos.Offer{o2})
	r.b.Apply(launches(e, 2)) // beside it
	r.h.Handler().Update(update("1", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil))
	r.h.Handler().ExecutorLost(mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: e}, 9)
	r.h.Handler().Update(update("2", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil)) // the agent started it again
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	r.b.Apply(backend.Batch{ShuffleReleases: []backend.ShuffleRelease{{ShuffleID: 1}}})
	r.expect([]string{"message " + e + " on S0"}, nil)
}

// An executor's FAILURE that arrives after a new executor was started on
// its agent (the old one's exit, delayed by a master failover) is the old
// generation's: the new one still gets the shuffle releases.
func TestHarnessLateExitOfAnOldExecutorKeepsTheNewOne(t *testing.T) {
	r := newRig(t)
	e := executorID("S0")
	r.h.Handler().Offers([]mesos.Offer{offer("o1", "S0", 2, 1024)})
	r.b.Apply(launches(e, 1))
	r.h.Handler().Update(update("1", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil))
	reason := mesos.REASON_EXECUTOR_TERMINATED
	failed := update("1", mesos.TASK_FAILED, mesos.SOURCE_AGENT, nil)
	failed.Reason = &reason
	r.h.Handler().Update(failed)                        // held until the exit comes
	r.h.Handler().AgentLost(mesos.AgentID{Value: "S9"}) // unrelated
	r.settle()
	r.clock.Advance(3 * time.Second) // the held update goes through without the exit
	r.settle()
	r.h.Handler().Offers([]mesos.Offer{offer("o2", "S0", 2, 1024)}) // lists no executor: a new one
	r.b.Apply(launches(e, 2))
	r.h.Handler().Update(update("2", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil))
	r.h.Handler().ExecutorLost(mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: e}, 9) // the first one's, late
	r.settle()
	r.h.Conn.Calls()
	r.h.Driver.Events()
	r.b.Apply(backend.Batch{ShuffleReleases: []backend.ShuffleRelease{{ShuffleID: 1}}})
	r.settle()
	if got := r.h.Conn.Script(); !slices.Contains(got, "message "+e+" on S0") {
		t.Fatalf("calls after the release %q, want a message to the running executor %s", got, e)
	}
}
