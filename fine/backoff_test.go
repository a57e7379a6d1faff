package fine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// A master that keeps refusing fine-mode launches on an agent (TASK_LOST
// "Task assumes outdated resource state", as after a restart from a stale
// view) while re-offering it every 100 ms: launches there back off (0.5 s,
// 1 s, 2 s, …, launchbackoff's, as coarse mode's), so 10 s of it cost a
// handful of launches, not one per offer; every loss reaches the driver as
// LOST (retried, never a failure). An update from the executor (it came
// up) ends the back-off.
func TestRefusedLaunchesBackOff(t *testing.T) {
	d := &recorder{}
	b := newTestBackend(d)
	b.set = settings{Settings: mesosbackend.Settings{Executor: mesosbackend.Executor{MemMB: 64}}, taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	now := time.Unix(1000, 0)
	b.clock = nowFunc(func() time.Time { return now })
	agent := mesos.AgentID{Value: "S0"}
	launches, backedOff := 0, 0
	offer := func(i int) {
		id := fmt.Sprintf("o%d", i)
		b.held[id] = &heldOffer{offer: mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: agent, Hostname: "h0",
			Resources: mesos.Resources{
				{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}},
				{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
			}}, since: now}
		b.resize(now, map[mesosconn.DeclineReason][]mesos.OfferID{})
	}
	backingOff := func() bool {
		b.publish() // the test is the owner: it publishes what OfferFilters and Stats read
		for _, f := range b.OfferFilters() {
			if f.Reason == placement.AgentBackoff {
				return true
			}
		}
		return false
	}
	for i := range 100 {
		now = time.Unix(1000, 0).Add(time.Duration(i) * 100 * time.Millisecond)
		offer(i)
		if backingOff() {
			backedOff++
			continue
		}
		id := uint64(i + 1)
		b.launchTasks([]*flintpb.TaskDescription{{TaskId: id, Attempt: 1, ExecutorId: executorID("S0")}})
		b.publish()
		if b.Stats().Launched != uint64(launches+1) {
			t.Fatalf("round %d: offered and not backing off, but nothing was launched", i)
		}
		launches++
		handler{b}.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(id)}, State: mesos.TASK_LOST.Enum(),
			Reason: mesos.REASON_INVALID_OFFERS.Enum(), Source: mesos.SOURCE_MASTER.Enum(), AgentID: &agent,
			Message: proto.String("Task assumes outdated resource state: cpus: needs 1 but 0 of 2 are free on the agent")})
	}
	// Launch times: 0, 0.5, 1.5, 3.5, 7.5 s.
	if launches != 5 || backedOff != 95 {
		t.Fatalf("%d launches and %d offers backed off in 10 s of refusals, want 5 (0, 0.5, 1.5, 3.5, 7.5 s) and 95", launches, backedOff)
	}
	for _, u := range d.take() {
		if u.State != scheduler.Lost || u.Failure == nil || u.Failure.Kind != scheduler.ExecutorLost {
			t.Fatalf("a refused launch reached the driver as %v (%+v), want LOST, not a failure", u.State, u.Failure)
		}
	}
	// The back-off of the fifth loss ends at 7.5 + 8 = 15.5 s; the executor
	// of that launch comes up.
	now = time.Unix(1015, 500_000_000)
	offer(100)
	if backingOff() {
		t.Fatal("still backing off after the wait")
	}
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 101, Attempt: 1, ExecutorId: executorID("S0")}})
	exec := mesos.ExecutorID{Value: executorID("S0")}
	handler{b}.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: mesosTaskID(101)}, State: mesos.TASK_RUNNING.Enum(),
		Source: mesos.SOURCE_EXECUTOR.Enum(), AgentID: &agent, ExecutorID: &exec})
	if got := b.backoff.Until(now); len(got) != 0 {
		t.Fatalf("back-off after the executor came up: %v", got)
	}
}
