package master_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// A known agent re-registering without some of its tasks: the missing
// non-terminal ones are lost as in Mesos' reconcileKnownSlave (TASK_LOST,
// TASK_DROPPED if partition-aware; REASON_RECONCILIATION), missing
// executors are forgotten, the reported task is kept and the agent's
// resources are recounted from what it reported.
func TestReregistrationLosesTasksUnknownToAgent(t *testing.T) {
	s, clk := newClockServer(t, 1, nil)
	ag := s.Fakes[0]
	fi := frameworkInfo("plain")
	c := subscribe(t, s, allCodecs[0], fi)
	clk.Advance(tickAlloc)
	o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
	keep, lose, withExec := commandTask("keep", o, 1, 64), commandTask("lose", o, 1, 64), commandTask("exec", o, 0.5, 32)
	withExec.Command = nil
	withExec.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "ex"}, Command: &mesos.CommandInfo{Value: proto("run")},
		Resources: mesos.Resources{scalar("cpus", 0.1), scalar("mem", 32)}}
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(keep, lose, withExec)}.WithOffers(o.ID)).With(calls.RefuseSeconds(3600)))
	pa := subscribe(t, s, allCodecs[1], frameworkInfo("pa", mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	clk.Advance(tickAlloc)
	o2 := pa.next(scheduler.Event_OFFERS).Offers.Offers[0]
	pa.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("pa-lose", o2, 1, 64))}.WithOffers(o2.ID)).With(calls.RefuseSeconds(3600)))
	// "exec" reached FINISHED (unacknowledged) before the agent forgot it.
	if _, err := ag.SendStatus(c.id, "keep", mesos.TASK_RUNNING); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.SendStatus(c.id, "exec", mesos.TASK_FINISHED); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"keep", "exec"} {
		c.nextUpdate(id)
	}
	// keep, lose, pa-lose (1 each) and ex (0.1); exec is FINISHED.
	if m := s.Master.Metrics(); math.Abs(m["master/cpus_used"]-3.1) > 1e-9 {
		t.Fatalf("cpus used before re-registration: %v", m["master/cpus_used"])
	}

	fid := mesos.FrameworkID{Value: c.id}
	kept := mesos.Task{Name: "keep", TaskID: keep.TaskID, FrameworkID: fid, AgentID: mesos.AgentID{Value: ag.ID()},
		State: mesos.TASK_RUNNING.Enum(), Resources: mesos.Resources{scalar("cpus", 1), scalar("mem", 64)}}
	fw := *fi
	fw.ID = &fid
	if err := ag.RegisterWith(s.Master, link.Registration{Frameworks: []mesos.FrameworkInfo{fw}, Tasks: []mesos.Task{kept}}); err != nil {
		t.Fatal(err)
	}
	st := c.nextUpdate("lose")
	if st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_RECONCILIATION || st.GetSource() != mesos.SOURCE_MASTER ||
		st.UUID != nil || st.GetAgentID().GetValue() != ag.ID() || st.GetMessage() != "Reconciliation: task unknown to the agent" {
		t.Fatalf("lose: %v", st)
	}
	if st := pa.nextUpdate("pa-lose"); st.GetState() != mesos.TASK_DROPPED || st.GetReason() != mesos.REASON_RECONCILIATION {
		t.Fatalf("pa-lose: %v", st)
	}
	// Only "lose" was reported: the terminal "exec" went silently.
	if evs := c.marker("m"); countEvents(evs, scheduler.Event_UPDATE) != 0 {
		t.Fatalf("more updates: %v", evs)
	}
	d := getState(t, s)
	states := map[string]string{}
	for _, f := range d.Frameworks {
		for _, tk := range f.Tasks {
			states[tk.ID] = tk.State
		}
		for _, tk := range f.CompletedTasks {
			states[tk.ID] = "completed " + tk.State
		}
	}
	want := map[string]string{"keep": "TASK_RUNNING", "lose": "completed TASK_LOST", "exec": "completed TASK_FINISHED", "pa-lose": "completed TASK_DROPPED"}
	for id, w := range want {
		if states[id] != w {
			t.Errorf("%s: %q, want %q", id, states[id], w)
		}
	}
	m := s.Master.Metrics()
	if m["master/cpus_used"] != 1 || m["master/mem_used"] != 64 || m["master/tasks_lost"] != 1 || m["master/tasks_dropped"] != 1 ||
		m["master/task_lost/source_master/reason_reconciliation"] != 1 || m["master/slave_reregistrations"] != 1 {
		t.Errorf("metrics after re-registration: %v", m)
	}
	// What the agent no longer runs is offered again (all but "keep"),
	// without the forgotten executor in executor_ids.
	clk.Advance(tickAlloc)
	var cpus float64
	for _, evs := range [][]*scheduler.Event{c.marker("m1"), pa.marker("m2")} {
		for _, e := range evs {
			if e.GetType() != scheduler.Event_OFFERS {
				continue
			}
			for _, o := range e.Offers.Offers {
				if len(o.ExecutorIDs) != 0 {
					t.Errorf("executor_ids %v", o.ExecutorIDs)
				}
				for _, r := range o.Resources {
					if r.Name == "cpus" {
						cpus += r.GetScalar().GetValue()
					}
				}
			}
		}
	}
	if cpus != 3 {
		t.Fatalf("re-offered cpus %v, want 3", cpus)
	}
}

// RestartMaster: a new master on the same address and id; fake agents
// re-register with what they run; a framework re-subscribing with its id
// finds its tasks, their resources stay accounted, and updates and
// acknowledgements flow again.
func TestRestartMasterKeepsAgents(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(2, nil))
		url, agents := s.URL, []string{s.Fakes[0].ID(), s.Fakes[1].ID()}
		fi := frameworkInfo("survivor")
		fi.FailoverTimeout = proto(3600.0)
		c := subscribe(t, s, codec, fi)
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 64))}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
		var ag *minimesostest.FakeAgent
		for _, a := range s.Fakes {
			if a.ID() == o.AgentID.Value {
				ag = a
			}
		}
		u, err := ag.SendStatus(c.id, "t", mesos.TASK_RUNNING)
		if err != nil {
			t.Fatal(err)
		}
		c.nextUpdate("t")
		c.mustCall(calls.Acknowledge(ag.ID(), "t", u))
		old := s.Master

		s.RestartMaster()
		if s.Master == old || s.URL != url || s.Master.ID() != "test" {
			t.Fatalf("restart: same master %v, url %s → %s, id %s", s.Master == old, url, s.URL, s.Master.ID())
		}
		// The old stream ends.
		for range c.events {
		}
		d := getState(t, s)
		if len(d.Slaves) != 2 || d.Slaves[0].ID != agents[0] || d.Slaves[1].ID != agents[1] {
			t.Fatalf("agents after restart: %+v", d.Slaves)
		}
		// Recovered from the agent before the framework is back.
		if len(d.Frameworks) != 1 || d.Frameworks[0].ID != c.id || d.Frameworks[0].Active || len(d.Frameworks[0].Tasks) != 1 {
			t.Fatalf("frameworks after restart: %+v", d.Frameworks)
		}
		fi.ID = &mesos.FrameworkID{Value: c.id}
		c2 := subscribe(t, s, codec, fi)
		if c2.id != c.id {
			t.Fatalf("re-subscribed as %s, want %s", c2.id, c.id)
		}
		c2.mustCall(calls.Reconcile())
		if st := c2.nextUpdate("t"); st.GetState() != mesos.TASK_RUNNING || st.GetAgentID().GetValue() != ag.ID() ||
			st.GetReason() != mesos.REASON_RECONCILIATION {
			t.Fatalf("reconciled %v", st)
		}
		// The task's resources are still in use: the new offers hold 7 of 8 cpus.
		var cpus float64
		for cpus < 7 {
			for _, o := range c2.next(scheduler.Event_OFFERS).Offers.Offers {
				for _, r := range o.Resources {
					if r.Name == "cpus" {
						cpus += r.GetScalar().GetValue()
					}
				}
			}
		}
		if cpus != 7 {
			t.Fatalf("offered cpus %v, want 7", cpus)
		}
		u, err = ag.SendStatus(c.id, "t", mesos.TASK_FINISHED)
		if err != nil {
			t.Fatal(err)
		}
		if st := c2.nextUpdate("t"); st.GetState() != mesos.TASK_FINISHED {
			t.Fatalf("%v", st)
		}
		c2.mustCall(calls.Acknowledge(ag.ID(), "t", u))
		if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.Acknowledge != nil && bytes.Equal(m.Acknowledge.UUID, u)
		}); err != nil {
			t.Fatal(err)
		}
		waitState(t, s, func(d stateDoc) bool {
			return len(d.Frameworks) == 1 && d.Frameworks[0].Active && len(d.Frameworks[0].Tasks) == 0 &&
				len(d.Frameworks[0].CompletedTasks) == 1 && d.Frameworks[0].CompletedTasks[0].State == "TASK_FINISHED"
		})
	})
}
