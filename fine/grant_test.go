package fine

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// TestOldExecutorsLateUpdateKeepsTheNewExecutorsFetchGrant reproduces the
// grant race of a reused executor id: executor flint-fine-S0 runs task 1
// and dies; a second executor under the same id is launched with task 2
// and a fresh fetch credential; then the agent retries an update of the
// first executor (sent by it, unacknowledged when it died). That update
// must leave the second executor's credential valid (its agent may not
// have fetched yet: a revoked one answers 401 and the launch fails); the
// second executor's own first update ends it.
func TestOldExecutorsLateUpdateKeepsTheNewExecutorsFetchGrant(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.set = settings{Settings: mesosbackend.Settings{Executor: mesosbackend.Executor{MemMB: 64}}, taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	fs, exe, err := mesosbackend.ServeExecutor("", "", mesosbackend.Addr{Host: "127.0.0.1"}, b.log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	b.Server, b.exe = fs, exe
	h := newDeathHandler(b, fetchHandler{handler{b}}) // the connection's chain
	agent, exec := mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}

	// launch offers agent S0 without a running executor (as Mesos does once
	// the last one is gone) and launches task id on it; it returns the URL
	// the agent fetches the executor binary from.
	launch := func(id uint64, offer string) string {
		t.Helper()
		b.held[offer] = &heldOffer{offer: mesos.Offer{ID: mesos.OfferID{Value: offer}, AgentID: agent, Hostname: "h0",
			Resources: mesos.Resources{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
			}}, since: time.Now()}
		b.launchTasks([]*flintpb.TaskDescription{{TaskId: id, Attempt: 1, ExecutorId: exec.Value}})
		if b.tasks[mesosTaskID(id)] == nil {
			t.Fatalf("task %d was not launched (driver updates: %v)", id, d.updates)
		}
		return b.agents["S0"].info.Command.URIs[0].Value
	}
	fetch := func(url string) int {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fromExecutor := func(id uint64, st mesos.TaskState) mesos.TaskStatus {
		return mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(id)}, State: st.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
			AgentID: &agent, ExecutorID: &exec, UUID: []byte{byte(id)}}
	}

	first := launch(1, "o1")
	if code := fetch(first); code != http.StatusOK {
		t.Fatalf("first executor's fetch: %d, want 200", code)
	}
	h.Update(fromExecutor(1, mesos.TASK_RUNNING)) // it registered
	if code := fetch(first); code != http.StatusUnauthorized {
		t.Fatalf("first executor's credential after its first update: %d, want 401", code)
	}
	// It dies: Mesos reports its executor gone, then fails its task.
	h.ExecutorLost(agent, exec, 3<<8)
	h.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_FAILED.Enum(), Source: mesos.SOURCE_AGENT.Enum(),
		Reason: mesos.REASON_EXECUTOR_TERMINATED.Enum(), AgentID: &agent, ExecutorID: &exec})

	second := launch(2, "o2")
	if second == first {
		t.Fatalf("the second executor fetches with the first one's URL %s", first)
	}
	// The agent retries the dead executor's unacknowledged update.
	h.Update(fromExecutor(1, mesos.TASK_RUNNING))
	if code := fetch(second); code != http.StatusOK {
		t.Fatalf("second executor's fetch after the first executor's late update: %d, want 200", code)
	}
	h.Update(fromExecutor(2, mesos.TASK_RUNNING))
	if code := fetch(second); code != http.StatusUnauthorized {
		t.Fatalf("second executor's credential after its own first update: %d, want 401", code)
	}
}

// TestOfferMadeBeforeTheExecutorDiedStartsANewOne: an offer the backend
// held since before its agent's executor died still lists that executor
// (Offer.executor_ids is the master's view when it made the offer); once
// Mesos reported the executor gone, a task placed on that offer starts a
// new executor (a new generation with its own resources) instead of
// naming the dead one, which the master would refuse: the executor is not
// running, so the task must bring its resources too ("Task uses more
// resources … than available": TASK_ERROR, counted as a failure).
func TestOfferMadeBeforeTheExecutorDiedStartsANewOne(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.set = settings{Settings: mesosbackend.Settings{Executor: mesosbackend.Executor{MemMB: 64}}, taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	agent, exec := mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}
	h := newDeathHandler(b, fetchHandler{handler{b}}) // the connection's chain
	hold := func(offer string, executors ...mesos.ExecutorID) {
		b.held[offer] = &heldOffer{offer: mesos.Offer{ID: mesos.OfferID{Value: offer}, AgentID: agent, Hostname: "h0", ExecutorIDs: executors,
			Resources: mesos.Resources{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
			}}, since: time.Now()}
	}
	launched := func(id uint64) *mtask {
		return b.tasks[mesosTaskID(id)]
	}
	hold("o1")
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 1, Attempt: 1, ExecutorId: exec.Value}})
	if t1 := launched(1); t1 == nil || t1.gen != 0 {
		t.Fatalf("task 1: %+v, want it launched on generation 0", t1)
	}
	first := b.agents["S0"].info
	h.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_RUNNING.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
		AgentID: &agent, ExecutorID: &exec})
	hold("o2", exec) // made while the executor runs
	h.ExecutorLost(agent, exec, 3<<8)
	h.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_FAILED.Enum(), Source: mesos.SOURCE_AGENT.Enum(),
		Reason: mesos.REASON_EXECUTOR_TERMINATED.Enum(), AgentID: &agent, ExecutorID: &exec})
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 2, Attempt: 1, ExecutorId: exec.Value}})
	t2 := launched(2)
	if t2 == nil || t2.gen != 1 {
		t.Fatalf("task 2 on the offer made before the executor died: %+v, want it launched on a new executor (generation 1)", t2)
	}
	info := b.agents["S0"].info
	if info == first || mesosconn.Scalar(info.Resources, "cpus") != 0.1 {
		t.Fatalf("task 2's executor is the dead one's: %v (cpus %g), want a new ExecutorInfo with its own 0.1 cpus", info == first, mesosconn.Scalar(info.Resources, "cpus"))
	}
}

// TestLateFailureOfAFailedLaunchKeepsTheNextExecutorsFetchGrant: a launch
// fails on the agent (its task TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED),
// the retry starts the next executor at once on an offer held since
// before (which never listed the first), and only then Mesos reports the
// first executor's exit (FAILURE). That FAILURE is the first executor's:
// the second one's credential stays valid until its own exit.
func TestLateFailureOfAFailedLaunchKeepsTheNextExecutorsFetchGrant(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.set = settings{Settings: mesosbackend.Settings{Executor: mesosbackend.Executor{MemMB: 64}}, taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	fs, exe, err := mesosbackend.ServeExecutor("", "", mesosbackend.Addr{Host: "127.0.0.1"}, b.log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	b.Server, b.exe = fs, exe
	h := newDeathHandler(b, fetchHandler{handler{b}})
	defer h.close()
	agent, exec := mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}
	hold := func(offer string) {
		b.held[offer] = &heldOffer{offer: mesos.Offer{ID: mesos.OfferID{Value: offer}, AgentID: agent, Hostname: "h0",
			Resources: mesos.Resources{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
			}}, since: time.Now()}
	}
	url := func() string {
		return b.agents["S0"].info.Command.URIs[0].Value
	}
	fetch := func(u string) int {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	now := time.Unix(1000, 0)
	b.clock = nowFunc(func() time.Time { return now })
	hold("o1")
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 1, Attempt: 1, ExecutorId: exec.Value}})
	first := url()
	h.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(1)}, State: mesos.TASK_FAILED.Enum(), Source: mesos.SOURCE_AGENT.Enum(),
		Reason: mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), AgentID: &agent, ExecutorID: &exec, Message: proto.String("Failed to launch container")})
	now = now.Add(launchbackoff.Base) // the launch back-off passed; the FAILURE is still on its way
	hold("o2")                        // made before the master saw the first launch: it does not list the executor
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 2, Attempt: 2, ExecutorId: exec.Value}})
	second := url()
	if second == first {
		t.Fatal("the retry reuses the failed launch's ExecutorInfo")
	}
	h.ExecutorLost(agent, exec, 1<<8) // the failed launch's executor
	if code := fetch(second); code != http.StatusOK {
		t.Fatalf("second executor's fetch after the first one's late FAILURE: %d, want 200", code)
	}
	if code := fetch(first); code != http.StatusUnauthorized {
		t.Fatalf("the failed launch's credential after its FAILURE: %d, want 401", code)
	}
	h.ExecutorLost(agent, exec, 1<<8) // the second one's
	if code := fetch(second); code != http.StatusUnauthorized {
		t.Fatalf("second executor's credential after its own FAILURE: %d, want 401", code)
	}
}
