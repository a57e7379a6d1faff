package coarse

import (
	"fmt"
	"testing"
	"time"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/internal/clock"
)

// nopDriver is a backend.Driver that ignores everything.
type nopDriver struct{}

func (nopDriver) ExecutorUp(string, string, int)     {}
func (nopDriver) ExecutorLost(string, string, bool)  {}
func (nopDriver) StatusUpdate(*backend.StatusUpdate) {}
func (nopDriver) Abort(string)                       {}

// A master that keeps refusing launches on an agent (TASK_LOST "Task
// assumes outdated resource state", as after a restart from a stale view)
// while re-offering it every 100 ms: launches on the agent back off
// (0.5 s, 1 s, 2 s, …), so 10 s of it cost a handful of launches, not one
// per offer, and the agent is never excluded. A registration resets it.
func TestRefusedLaunchesBackOff(t *testing.T) {
	b := testBackend(t, "flint.executor.cores=1", "flint.mesos.executor.maxFailuresPerAgent=2")
	b.d = nopDriver{}
	fc := clock.NewFake(time.Unix(1000, 0))
	b.clock = fc // the owner is not started: the test is the owner
	now := fc.Now()
	launches, backedOff := 0, 0
	for i := range 100 {
		if i > 0 {
			fc.Advance(100 * time.Millisecond)
		}
		now = fc.Now()
		p := b.planOffers([]mesos.Offer{offer(fmt.Sprintf("o%d", i), "a1", 1, 8192, 0)}, nil, now)
		for _, id := range p.offers {
			for _, ti := range p.launches[id] {
				launches++
				handler{b}.Update(mesos.TaskStatus{TaskID: ti.TaskID, State: mesos.TASK_LOST.Enum(), Reason: mesos.REASON_INVALID_OFFERS.Enum(),
					Message: proto.String("Task assumes outdated resource state: cpus: needs 1 but 0 of 2 are free on the agent")})
			}
		}
		for _, f := range b.diag.filtered {
			if f.Reason == placement.AgentBackoff {
				backedOff++
			}
		}
	}
	// Launch times: 0, 0.5, 1.5, 3.5, 7.5 s.
	if launches != 5 {
		t.Fatalf("%d launches in 10 s of refusals, want 5 (0, 0.5, 1.5, 3.5, 7.5 s)", launches)
	}
	if backedOff != 100-launches {
		t.Fatalf("%d offers declined as backing off, want %d", backedOff, 100-launches)
	}
	if ex := b.fails.exclusions(now); len(ex) != 0 {
		t.Fatalf("agent excluded after infrastructure losses: %v", ex)
	}
	b.backoff.Registered("a1")
	if got := b.backoff.Until(now); len(got) != 0 {
		t.Fatalf("back-off after a registration: %v", got)
	}
}

// An executor that registers when the driver no longer wants it is stopped
// with the reason; while the driver stops that is expected (a job can end
// before every executor it asked for registered), and said first.
func TestUnwantedRegistrationReasons(t *testing.T) {
	for _, c := range []struct {
		e        *executor
		stopping bool
		want     string
	}{
		{&executor{}, false, ""},
		{&executor{}, true, "the driver is stopping"},
		{&executor{lost: true}, true, "the driver is stopping"},
		{nil, false, "this driver did not launch it"},
		{&executor{lost: true}, false, "it was already given up as lost"},
		{&executor{registered: true}, false, "it had already registered"},
	} {
		if got := unwanted(c.e, c.stopping); got != c.want {
			t.Errorf("unwanted(%+v, stopping %v) = %q, want %q", c.e, c.stopping, got, c.want)
		}
	}
}
