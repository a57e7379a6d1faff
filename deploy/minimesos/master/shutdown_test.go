package master_test

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// shutdowns counts the ShutdownFramework messages for fw an agent got.
func shutdowns(a *minimesostest.FakeAgent, fw string) int {
	n := 0
	for _, m := range a.Messages() {
		if m.ShutdownFramework != nil && m.ShutdownFramework.FrameworkID.Value == fw {
			n++
		}
	}
	return n
}

func waitShutdown(t *testing.T, a *minimesostest.FakeAgent, fw string) {
	t.Helper()
	if _, err := a.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
		return m.ShutdownFramework != nil && m.ShutdownFramework.FrameworkID.Value == fw
	}); err != nil {
		t.Fatalf("agent %s: %v", a.ID(), err)
	}
}

// offerOn waits for an offer of agentID.
func (c *sched) offerOn(agentID string) mesos.Offer {
	c.t.Helper()
	for {
		for _, o := range c.next(scheduler.Event_OFFERS).Offers.Offers {
			if o.AgentID.Value == agentID {
				return o
			}
		}
	}
}

// A removed framework is shut down on every agent, as Mesos sends
// ShutdownFrameworkMessage to all registered agents: also on agents where
// nothing of it runs any more (its tasks finished, as a coarse-mode job's
// executors have usually ended by its TEARDOWN) or never ran. An agent
// disconnected at that moment is told when it re-registers with the
// framework, or when it resends one of its updates.
func TestRemovedFrameworkShutDownOnEveryAgent(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(3, nil))
	ran, idle, away := s.Fakes[0], s.Fakes[1], s.Fakes[2]
	fi := frameworkInfo("gone")
	c := subscribe(t, s, allCodecs[0], fi)
	o := c.offerOn(ran.ID())
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 1))}.WithOffers(o.ID)))
	if _, err := ran.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil }); err != nil {
		t.Fatal(err)
	}
	u, err := ran.SendStatus(c.id, "t", mesos.TASK_FINISHED)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.nextUpdate("t"); st.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("update %v", st)
	}
	c.mustCall(calls.Acknowledge(ran.ID(), "t", u))
	waitState(t, s, func(d stateDoc) bool {
		return len(d.Frameworks) == 1 && len(d.Frameworks[0].Tasks) == 0 && len(d.Frameworks[0].CompletedTasks) == 1
	})
	away.Disconnect()

	c.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	waitShutdown(t, ran, c.id)  // nothing of it runs there any more
	waitShutdown(t, idle, c.id) // nothing of it ever ran there
	if n := shutdowns(away, c.id); n != 0 {
		t.Fatalf("disconnected agent got %d ShutdownFramework", n)
	}

	// It re-registers still reporting the framework: told now.
	fid := &mesos.FrameworkID{Value: c.id}
	fw := *fi
	fw.ID = fid
	if err := away.RegisterWith(s.Link(), link.Registration{Frameworks: []mesos.FrameworkInfo{fw}}); err != nil {
		t.Fatal(err)
	}
	waitShutdown(t, away, c.id)
	// An update of the removed framework (it missed the removal) is
	// dropped and answered with a ShutdownFramework too.
	if _, err := idle.SendStatus(c.id, "late", mesos.TASK_FINISHED); err != nil {
		t.Fatal(err)
	}
	if n := shutdowns(idle, c.id); n != 2 {
		t.Fatalf("agent resending an update of the removed framework got %d ShutdownFramework, want 2", n)
	}
	if n := s.Master.Metrics()["master/invalid_status_updates"]; n != 1 {
		t.Fatalf("invalid status updates %v", n)
	}
}
