package fine

import (
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// recorder is a backend.Driver that records what it is told.
type recorder struct {
	mu      sync.Mutex
	updates []*backend.StatusUpdate
	lost    []string
}

func (r *recorder) StatusUpdate(u *backend.StatusUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
}
func (r *recorder) ExecutorUp(string, string, int) {}
func (r *recorder) ExecutorLost(id, _ string, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, id)
}
func (r *recorder) Abort(string) {}
func (r *recorder) take() []*backend.StatusUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.updates
	r.updates = nil
	return u
}

func newTestBackend(d *recorder) *Backend {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	b := &Backend{d: d, log: log, tasks: map[string]*mtask{}, agents: map[string]*agentExec{},
		held: map[string]*heldOffer{}, blocks: map[string]resultRef{},
		clock: clock.Real{}, backoff: launchbackoff.New(), diag: fitDiag{unfit: map[string]string{}}}
	// No owner goroutine runs: the test is the owner, and runs what the
	// backend posts itself (a timer's end) with drain.
	b.own = mesosbackend.NewOwner()
	return b
}

// drain runs the inputs the backend posted, as its owner would.
func (b *Backend) drain() {
	b.own.Drain()
}

// nowFunc is the wall clock's timers with a test's Now.
type nowFunc func() time.Time

func (f nowFunc) Now() time.Time                       { return f() }
func (nowFunc) After(d time.Duration) <-chan time.Time { return clock.Real{}.After(d) }
func (nowFunc) AfterFunc(d time.Duration, fn func()) clock.Timer {
	return clock.Real{}.AfterFunc(d, fn)
}
func (nowFunc) NewTicker(d time.Duration) clock.Ticker { return clock.Real{}.NewTicker(d) }

func (b *Backend) addTask(id uint64) {
	b.tasks[mesosTaskID(id)] = &mtask{flintID: id, attempt: 1, agentID: "S0", execID: executorID("S0"), cpus: 1}
}

func status(id uint64, st mesos.TaskState, reason mesos.TaskStatus_Reason, data []byte) mesos.TaskStatus {
	return mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(id)}, State: st.Enum(), Reason: reason.Enum(),
		Source: mesos.SOURCE_AGENT.Enum(), Data: data}
}

func marshal(t *testing.T, u *flintpb.StatusUpdate) []byte {
	data, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestStatusMapping(t *testing.T) {
	decodeErr := marshal(t, &flintpb.StatusUpdate{State: flintpb.TaskState_TASK_FAILED,
		Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_DECODE_ERROR, Message: "bad data"}})
	finished := marshal(t, &flintpb.StatusUpdate{TaskId: 1, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("ok")}}})
	cases := []struct {
		name  string
		st    mesos.TaskState
		data  []byte
		state scheduler.State
		kind  scheduler.FailureKind // -1: no failure
	}{
		{"finished", mesos.TASK_FINISHED, finished, scheduler.Finished, -1},
		{"finished without data", mesos.TASK_FINISHED, nil, scheduler.Failed, scheduler.ResultLost},
		{"decode error", mesos.TASK_FAILED, decodeErr, scheduler.Failed, scheduler.DecodeError},
		{"failed by agent", mesos.TASK_FAILED, nil, scheduler.Failed, scheduler.Exception},
		{"error", mesos.TASK_ERROR, nil, scheduler.Failed, scheduler.Exception},
		{"gone", mesos.TASK_GONE, nil, scheduler.Failed, scheduler.Exception},
		{"killed", mesos.TASK_KILLED, nil, scheduler.KilledState, scheduler.Killed},
		{"lost", mesos.TASK_LOST, nil, scheduler.Lost, scheduler.ExecutorLost},
		{"dropped", mesos.TASK_DROPPED, nil, scheduler.Lost, scheduler.ExecutorLost},
		{"unreachable", mesos.TASK_UNREACHABLE, nil, scheduler.Lost, scheduler.ExecutorLost},
		{"unknown", mesos.TASK_UNKNOWN, nil, scheduler.Lost, scheduler.ExecutorLost},
		{"gone by operator", mesos.TASK_GONE_BY_OPERATOR, nil, scheduler.Lost, scheduler.ExecutorLost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &recorder{}
			b := newTestBackend(d)
			b.addTask(1)
			h := handler{b}
			h.Update(status(1, mesos.TASK_STARTING, mesos.REASON_COMMAND_EXECUTOR_FAILED, nil))
			h.Update(status(1, mesos.TASK_RUNNING, mesos.REASON_COMMAND_EXECUTOR_FAILED, nil))
			h.Update(status(1, c.st, mesos.REASON_EXECUTOR_TERMINATED, c.data))
			// Duplicates of the terminal update are ignored.
			h.Update(status(1, c.st, mesos.REASON_EXECUTOR_TERMINATED, c.data))
			h.Update(status(1, mesos.TASK_RUNNING, mesos.REASON_COMMAND_EXECUTOR_FAILED, nil))
			got := d.take()
			if len(got) != 2 || got[0].State != scheduler.Running {
				t.Fatalf("driver got %v, want RUNNING then one terminal update", got)
			}
			u := got[1]
			kind := scheduler.FailureKind(-1)
			if u.Failure != nil {
				kind = u.Failure.Kind
			}
			if u.State != c.state || kind != c.kind || u.TaskID != 1 || u.Attempt != 1 || u.ExecutorID != executorID("S0") {
				t.Fatalf("update %+v, want state %s kind %s for task 1 attempt 1", u, c.state, c.kind)
			}
			if c.state == scheduler.Finished && (string(u.Result) != "ok" || u.Indirect != nil) {
				t.Fatalf("result %q, indirect %v", u.Result, u.Indirect)
			}
			if len(b.tasks) != 0 || b.agents["S0"] != nil && b.agents["S0"].live != 0 {
				t.Fatalf("task still tracked after its terminal update")
			}
		})
	}
}

func TestUnknownTaskUpdatesAreIgnored(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.addTask(7)
	h := handler{b}
	h.Update(status(99, mesos.TASK_FINISHED, mesos.REASON_COMMAND_EXECUTOR_FAILED, []byte("garbage")))
	h.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: "not-a-flint-task"}, State: mesos.TASK_LOST.Enum()})
	if got := d.take(); len(got) != 0 {
		t.Fatalf("driver got %v for unknown tasks", got)
	}
	if b.tasks[mesosTaskID(7)] == nil {
		t.Fatal("a live task was dropped by an update for another task")
	}
}

func TestUpdateDataForAnotherTaskIsNotTrusted(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.addTask(1)
	other := marshal(t, &flintpb.StatusUpdate{TaskId: 2, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("not yours")}}})
	handler{b}.Update(status(1, mesos.TASK_FINISHED, mesos.REASON_COMMAND_EXECUTOR_FAILED, other))
	got := d.take()
	if len(got) != 1 || got[0].State != scheduler.Failed || got[0].Failure == nil || got[0].Failure.Kind != scheduler.ResultLost {
		t.Fatalf("got %v, want a RESULT_LOST failure", got)
	}
}

func TestIdleExecutorExitIsReportedOnlyWithoutLiveTasks(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.agents["S0"] = &agentExec{id: executorID("S0"), added: true, live: 1}
	b.agents["S1"] = &agentExec{id: executorID("S1"), added: true}
	h := handler{b}
	h.ExecutorLost(mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}, 9)
	h.ExecutorLost(mesos.AgentID{Value: "S1"}, mesos.ExecutorID{Value: executorID("S1")}, 0)
	if len(d.lost) != 1 || d.lost[0] != executorID("S1") {
		t.Fatalf("executors reported lost: %v", d.lost)
	}
}

// The master refuses a task placed beside an executor that exited before
// the launch reached it (the task must then bring the executor's
// resources, which the offer lacks): the task is lost and retried, not a
// failure of the task; other invalid tasks still fail.
func TestLaunchBesideAJustExitedExecutorIsLost(t *testing.T) {
	for _, c := range []struct {
		msg   string
		state scheduler.State
		kind  scheduler.FailureKind
	}{
		{"Task uses more resources cpus:1.1;mem:1408 than available mem:10644;disk:10240;cpus:1", scheduler.Lost, scheduler.ExecutorLost},
		{"Task has invalid ExecutorInfo", scheduler.Failed, scheduler.LaunchFailed},
	} {
		d := &recorder{}
		b := newTestBackend(d)
		b.addTask(1)
		msg := c.msg
		handler{b}.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_ERROR.Enum(),
			Reason: mesos.REASON_TASK_INVALID.Enum(), Source: mesos.SOURCE_MASTER.Enum(), Message: &msg})
		got := d.take()
		if len(got) != 1 || got[0].State != c.state || got[0].Failure == nil || got[0].Failure.Kind != c.kind {
			t.Errorf("%q: driver got %+v, want state %v kind %v", c.msg, got, c.state, c.kind)
		}
	}
}

// A task placed on an executor already started whose agent could not
// start that executor again (it had exited; its ExecutorInfo's fetch
// credential ended when it came up) is lost and retried on a new
// executor; the same failure of a new executor's launch is the task's.
func TestRelaunchOfAnExitedExecutorIsLost(t *testing.T) {
	for _, reused := range []bool{true, false} {
		d := &recorder{}
		b := newTestBackend(d)
		b.addTask(1)
		b.tasks[mesosTaskID(1)].reused = reused
		b.agents["S0"] = &agentExec{id: executorID("S0"), live: 1, liveCPUs: 1, genUsed: true}
		msg := "Failed to launch container: uri: fetch http://127.0.0.1:1/files/x/flint?token=*****: unexpected HTTP status: HTTP 401 Unauthorized"
		handler{b}.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_FAILED.Enum(),
			Reason: mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), Source: mesos.SOURCE_AGENT.Enum(), Message: &msg})
		got := d.take()
		want, kind := scheduler.Failed, scheduler.LaunchFailed
		if reused {
			want, kind = scheduler.Lost, scheduler.ExecutorLost
		}
		if len(got) != 1 || got[0].State != want || got[0].Failure.Kind != kind {
			t.Fatalf("reused %v: driver got %+v, want %v (%v)", reused, got, want, kind)
		}
		if reused != b.agents["S0"].exited {
			t.Fatalf("reused %v: the executor is marked exited = %v", reused, b.agents["S0"].exited)
		}
	}
}

// A RUNNING its executor sent before its agent was lost, reaching the
// driver after the loss, does not make the lost executor look started
// again (as an executor its agent restarts for a reused task does): once
// the executor's last task ends, it is reported lost — else the driver
// kept its map outputs and every reducer failed fetching them until the
// job aborted (found by the simulation, fine seed 278).
func TestRunningAfterTheAgentsLossKeepsTheExecutorLost(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.addTask(1)
	tk := b.tasks[mesosTaskID(1)]
	tk.reused, tk.gen = true, 1
	b.agents["S0"] = &agentExec{id: executorID("S0"), added: true, live: 1, liveCPUs: 1, gen: 1, genUsed: true, lastExited: 0}
	h := handler{b}
	h.AgentLost(mesos.AgentID{Value: "S0"})
	if len(d.lost) != 0 {
		t.Fatalf("reported lost with a live task: %v", d.lost)
	}
	running := status(1, mesos.TASK_RUNNING, 0, nil)
	running.Source = mesos.SOURCE_EXECUTOR.Enum()
	running.Reason = nil
	h.Update(running)
	lost := status(1, mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED, nil)
	lost.Source = mesos.SOURCE_MASTER.Enum()
	h.Update(lost)
	if len(d.lost) != 1 || d.lost[0] != executorID("S0") {
		t.Fatalf("executors reported lost: %v, want %s once its last task ended", d.lost, executorID("S0"))
	}
}
