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

// A known agent re-registering without some of its tasks: as in Mesos'
// reconcileKnownSlave, the master asks the agent about the missing
// non-terminal ones (ReconcileTasks, one per framework, with the executor
// such a task uses) and keeps them, their resources counted, until the
// agent answers; the agent's TASK_LOST (TASK_DROPPED if partition-aware)
// then ends them and its ExecutorExited frees the kept executor. Missing
// terminal tasks go silently, missing executors no such task uses are
// forgotten at once, the reported task is kept, and the agent's resources
// are recounted from what it reported.
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
	lose.Command = nil
	lose.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "lex"}, Command: &mesos.CommandInfo{Value: proto("run")},
		Resources: mesos.Resources{scalar("cpus", 0.2), scalar("mem", 32)}}
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
	// keep, lose, pa-lose (1 each), ex (0.1) and lex (0.2); exec is FINISHED.
	if m := s.Master.Metrics(); math.Abs(m["master/cpus_used"]-3.3) > 1e-9 {
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
	// The master asks; until the agent answers it keeps the tasks and "lex"
	// (keep 1, lose 1 + lex 0.2, pa-lose 1), but not "ex": only the
	// finished "exec" used it.
	asked := map[string]link.ReconcileTasks{}
	for _, fw := range []string{c.id, pa.id} {
		msg, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.ReconcileTasks != nil && m.ReconcileTasks.Framework.GetID().GetValue() == fw
		})
		if err != nil {
			t.Fatal(err)
		}
		asked[fw] = *msg.ReconcileTasks
	}
	if r := asked[c.id]; len(r.Tasks) != 1 || r.Tasks[0].TaskID.Value != "lose" || r.Tasks[0].ExecutorID.GetValue() != "lex" ||
		len(r.Executors) != 1 || r.Executors[0].Value != "lex" {
		t.Fatalf("reconciliation asked of the agent for %s: %+v", c.id, r)
	}
	if r := asked[pa.id]; len(r.Tasks) != 1 || r.Tasks[0].TaskID.Value != "pa-lose" || len(r.Executors) != 0 ||
		!hasCap(r.Framework, mesos.FrameworkInfo_Capability_PARTITION_AWARE) {
		t.Fatalf("reconciliation asked of the agent for %s: %+v", pa.id, r)
	}
	if evs := c.marker("m0"); countEvents(evs, scheduler.Event_UPDATE) != 0 {
		t.Fatalf("updates before the agent answered: %v", evs)
	}
	if m := s.Master.Metrics(); math.Abs(m["master/cpus_used"]-3.2) > 1e-9 {
		t.Fatalf("cpus used while reconciling: %v", m["master/cpus_used"])
	}
	// The agent answers as minimesos' and Mesos' agents do.
	lost := func(fw, task string, state mesos.TaskState, exID *mesos.ExecutorID) []byte {
		u, msg := minimesostest.NewUUID(), "Reconciliation: task unknown to the agent"
		if err := ag.Send(link.AgentMessage{StatusUpdate: &link.StatusUpdate{FrameworkID: mesos.FrameworkID{Value: fw}, ExecutorID: exID,
			Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: state.Enum(), Source: mesos.SOURCE_AGENT.Enum(),
				Reason: mesos.REASON_RECONCILIATION.Enum(), Message: &msg, UUID: u, ExecutorID: exID}}}); err != nil {
			t.Fatal(err)
		}
		return u
	}
	uLose := lost(c.id, "lose", mesos.TASK_LOST, &mesos.ExecutorID{Value: "lex"})
	uPa := lost(pa.id, "pa-lose", mesos.TASK_DROPPED, nil)
	if err := ag.Send(link.AgentMessage{ExecutorExited: &link.ExecutorExited{FrameworkID: fid, ExecutorID: mesos.ExecutorID{Value: "lex"}, Status: -1}}); err != nil {
		t.Fatal(err)
	}
	// Every event from here on (the answers free resources, which may be
	// offered at once) is kept to count what is offered again.
	evs, paEvs := c.marker("m"), pa.marker("mp")
	var st, paSt *mesos.TaskStatus
	var failure *scheduler.Event_Failure
	for _, e := range append(append([]*scheduler.Event(nil), evs...), paEvs...) {
		switch {
		case e.GetType() == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == "lose":
			st = &e.Update.Status
		case e.GetType() == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == "pa-lose":
			paSt = &e.Update.Status
		case e.GetType() == scheduler.Event_UPDATE:
			t.Errorf("more updates: %v", e) // the terminal "exec" goes silently
		case e.GetType() == scheduler.Event_FAILURE:
			failure = e.Failure
		}
	}
	if st == nil || st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_RECONCILIATION || st.GetSource() != mesos.SOURCE_AGENT ||
		!bytes.Equal(st.UUID, uLose) || st.GetAgentID().GetValue() != ag.ID() || st.GetMessage() != "Reconciliation: task unknown to the agent" {
		t.Fatalf("lose: %v", st)
	}
	if paSt == nil || paSt.GetState() != mesos.TASK_DROPPED || paSt.GetReason() != mesos.REASON_RECONCILIATION {
		t.Fatalf("pa-lose: %v", paSt)
	}
	if failure == nil || failure.GetExecutorID().GetValue() != "lex" {
		t.Fatalf("failure %v", failure)
	}
	c.mustCall(calls.Acknowledge(ag.ID(), "lose", uLose))
	pa.mustCall(calls.Acknowledge(ag.ID(), "pa-lose", uPa))
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
		m["master/task_lost/source_agent/reason_reconciliation"] != 1 || m["master/slave_reregistrations"] != 1 {
		t.Errorf("metrics after re-registration: %v", m)
	}
	// What the agent no longer runs is offered again (all but "keep"),
	// without the forgotten executor in executor_ids.
	clk.Advance(tickAlloc)
	var cpus float64
	for _, evs := range [][]*scheduler.Event{evs, paEvs, c.marker("m1"), pa.marker("m2")} {
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
		// Offers come at once on subscription, as Mesos' allocator generates
		// them on addFramework; the task's resources are still in use: they
		// hold 7 of 8 cpus. (Read before reconciling: waiting for the answer
		// skips other events, and offers made meanwhile would be missed.)
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
		c2.mustCall(calls.Reconcile())
		if st := c2.nextUpdate("t"); st.GetState() != mesos.TASK_RUNNING || st.GetAgentID().GetValue() != ag.ID() ||
			st.GetReason() != mesos.REASON_RECONCILIATION {
			t.Fatalf("reconciled %v", st)
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

func hasCap(fi mesos.FrameworkInfo, c mesos.FrameworkInfo_Capability_Type) bool {
	for _, cp := range fi.Capabilities {
		if cp.Type == c {
			return true
		}
	}
	return false
}
