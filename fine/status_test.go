package fine

import (
	"net/http"
	"sync"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// recorder is a framework.Driver that records what it is told.
type recorder struct {
	mu      sync.Mutex
	updates []*flintpb.StatusUpdate
	lost    []string
}

func (r *recorder) ResourceOffers([]scheduler.WorkerOffer) []*flintpb.TaskDescription { return nil }
func (r *recorder) StatusUpdate(u *flintpb.StatusUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
}
func (r *recorder) ExecutorAdded(string, string, int) {}
func (r *recorder) ExecutorLost(id, _ string, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, id)
}
func (r *recorder) WantsOffers() bool                      { return false }
func (r *recorder) PendingHostPreferences() map[string]int { return nil }
func (r *recorder) Abort(string)                           {}
func (r *recorder) take() []*flintpb.StatusUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.updates
	r.updates = nil
	return u
}

func newTestBackend(d *recorder) *Backend {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	return &Backend{d: d, log: log, tasks: map[string]*mtask{}, agents: map[string]*agentExec{},
		held: map[string]*heldOffer{}, blocks: map[string]resultRef{}, tlsClients: map[string]*http.Client{}}
}

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
		state flintpb.TaskState
		kind  flintpb.FailureKind
	}{
		{"finished", mesos.TASK_FINISHED, finished, flintpb.TaskState_TASK_FINISHED, flintpb.FailureKind_FAILURE_UNSPECIFIED},
		{"finished without data", mesos.TASK_FINISHED, nil, flintpb.TaskState_TASK_FAILED, flintpb.FailureKind_RESULT_LOST},
		{"decode error", mesos.TASK_FAILED, decodeErr, flintpb.TaskState_TASK_FAILED, flintpb.FailureKind_DECODE_ERROR},
		{"failed by agent", mesos.TASK_FAILED, nil, flintpb.TaskState_TASK_FAILED, flintpb.FailureKind_EXCEPTION},
		{"error", mesos.TASK_ERROR, nil, flintpb.TaskState_TASK_FAILED, flintpb.FailureKind_EXCEPTION},
		{"gone", mesos.TASK_GONE, nil, flintpb.TaskState_TASK_FAILED, flintpb.FailureKind_EXCEPTION},
		{"killed", mesos.TASK_KILLED, nil, flintpb.TaskState_TASK_KILLED, flintpb.FailureKind_KILLED},
		{"lost", mesos.TASK_LOST, nil, flintpb.TaskState_TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST},
		{"dropped", mesos.TASK_DROPPED, nil, flintpb.TaskState_TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST},
		{"unreachable", mesos.TASK_UNREACHABLE, nil, flintpb.TaskState_TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST},
		{"unknown", mesos.TASK_UNKNOWN, nil, flintpb.TaskState_TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST},
		{"gone by operator", mesos.TASK_GONE_BY_OPERATOR, nil, flintpb.TaskState_TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST},
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
			if len(got) != 2 || got[0].State != flintpb.TaskState_TASK_RUNNING {
				t.Fatalf("driver got %v, want RUNNING then one terminal update", got)
			}
			u := got[1]
			if u.State != c.state || u.GetFailure().GetKind() != c.kind || u.TaskId != 1 || u.Attempt != 1 || u.ExecutorId != executorID("S0") {
				t.Fatalf("update %+v, want state %s kind %s for task 1 attempt 1", u, c.state, c.kind)
			}
			if c.state == flintpb.TaskState_TASK_FINISHED && string(u.GetResult().GetInline()) != "ok" {
				t.Fatalf("result %q", u.GetResult().GetInline())
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
	if len(got) != 1 || got[0].State != flintpb.TaskState_TASK_FAILED || got[0].GetFailure().GetKind() != flintpb.FailureKind_RESULT_LOST {
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
