package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// An agent that dies (Close: its processes are killed, it stops answering
// pings) is removed by the master's health check: its task becomes
// TASK_LOST for a plain framework and TASK_UNREACHABLE for a
// partition-aware one, its outstanding offers are rescinded, and every
// framework gets FAILURE{agent_id}. Tasks on the other agent are
// untouched.
func TestAgentLoss(t *testing.T) {
	e := startCluster(t, 2, fastHealthCheck)
	dead, alive := e.c.Agents[0].ID(), e.c.Agents[1].ID()
	plain := e.subscribe(protobuf, fwInfo("plain", false))
	plain.launch(plain.offer(dead), executorTask("p", "run", executorInfo("pex", protobuf)))
	plain.launch(plain.offer(alive), commandTask("other", "sleep 30"))
	plain.declineAll() // leave the agents to the next framework
	aware := e.subscribe(jsonCodec, fwInfo("aware", false, mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	aware.launch(aware.offer(dead), commandTask("a", "sleep 30"))
	plain.waitState("p", mesos.TASK_RUNNING)
	plain.waitState("other", mesos.TASK_RUNNING)
	aware.waitState("a", mesos.TASK_RUNNING)
	// An offer of the dying agent outstanding with one of the frameworks.
	var holder *sched
	var pending mesos.Offer
	eventually(t, func() string {
		for _, s := range []*sched{plain, aware} {
			if o, ok := s.outstanding(dead); ok {
				holder, pending = s, o
				return ""
			}
		}
		return "no outstanding offer of " + dead
	})

	if err := e.c.Agents[0].Close(); err != nil {
		t.Fatal(err)
	}
	lost := plain.waitState("p", mesos.TASK_LOST)
	if lost.GetSource() != mesos.SOURCE_MASTER || lost.GetReason() != mesos.REASON_AGENT_REMOVED || len(lost.UUID) != 0 ||
		lost.GetAgentID().GetValue() != dead {
		t.Fatalf("lost task: %v %v uuid=%x agent %v", lost.GetSource(), lost.GetReason(), lost.UUID, lost.GetAgentID())
	}
	unreachable := aware.waitState("a", mesos.TASK_UNREACHABLE)
	if unreachable.UnreachableTime == nil {
		t.Fatal("TASK_UNREACHABLE without unreachable_time")
	}
	for _, s := range []*sched{plain, aware} {
		s.waitEvent("FAILURE of the dead agent", func(ev *scheduler.Event) bool {
			return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.ExecutorID == nil && ev.Failure.GetAgentID().GetValue() == dead
		})
	}
	holder.waitEvent("RESCIND of the dead agent's offer", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_RESCIND && ev.Rescind.OfferID.Value == pending.ID.Value
	})
	if got := stateNames(plain.updates("other")); got != "STARTING,RUNNING" {
		t.Fatalf("task on the surviving agent: %s", got)
	}
	// Reconciliation agrees.
	plain.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"p": dead, "other": alive})))
	plain.waitEvent("reconciliation of p", func(ev *scheduler.Event) bool {
		st := ev.GetUpdate().GetStatus()
		return ev.GetType() == scheduler.Event_UPDATE && st.TaskID.Value == "p" && st.GetReason() == mesos.REASON_RECONCILIATION &&
			st.GetState() == mesos.TASK_LOST
	})
	plain.waitEvent("reconciliation of other", func(ev *scheduler.Event) bool {
		st := ev.GetUpdate().GetStatus()
		return ev.GetType() == scheduler.Event_UPDATE && st.TaskID.Value == "other" && st.GetReason() == mesos.REASON_RECONCILIATION &&
			st.GetState() == mesos.TASK_RUNNING
	})
}

// A checkpointing framework's executor survives an agent restart: the
// agent is stopped (executors left running), a new agent on the same work
// dir and address recovers, re-registers under the same id, the executor
// re-subscribes, reconciliation reports the task RUNNING, and the task
// later FINISHES. No update says LOST or FAILED.
func TestAgentRestartKeepsCheckpointedTasks(t *testing.T) {
	e := startCluster(t, 0, func(c *cluster.Config) { c.Master.AgentMaxMissedPings = 40 })
	cfg := agentConfig(filepath.Join(e.workDir, "restarted"))
	a1 := startAgent(t, e.c.Master, cfg)
	agentID := a1.ID()
	s := e.subscribe(protobuf, fwInfo("checkpointing", true))
	ex := executorInfo("ckex", protobuf)
	s.launch(s.offer(agentID), executorTask("r", "run", ex))
	s.waitState("r", mesos.TASK_RUNNING)
	eventually(t, func() string { // RUNNING acknowledged and checkpointed
		if len(s.updates("r")) == 1 && stateTasks(t, e.c.URL())[s.id]["r"] == "TASK_RUNNING@"+agentID {
			return ""
		}
		return "task r not RUNNING in /state"
	})
	// The agent has the acknowledgement: no update is pending in its checkpoint.
	eventually(t, func() string {
		var ups []json.RawMessage
		b, err := os.ReadFile(filepath.Join(cfg.WorkDir, "meta/slaves", agentID, "updates.json"))
		if err != nil || json.Unmarshal(b, &ups) != nil || len(ups) != 0 {
			return fmt.Sprintf("updates still pending on the agent: %s %v", b, err)
		}
		return ""
	})

	a1.stop()
	cfg.Endpoint = a1.cfg.Endpoint // the executor knows this address
	a2 := startAgent(t, e.c.Master, cfg)
	if a2.ID() != agentID {
		t.Fatalf("restarted agent registered as %q, want %q", a2.ID(), agentID)
	}
	s.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"r": agentID})))
	rec := s.waitEvent("reconciliation of r", func(ev *scheduler.Event) bool {
		st := ev.GetUpdate().GetStatus()
		return ev.GetType() == scheduler.Event_UPDATE && st.TaskID.Value == "r" && st.GetReason() == mesos.REASON_RECONCILIATION
	}).Update.Status
	if rec.GetState() != mesos.TASK_RUNNING || rec.GetAgentID().GetValue() != agentID {
		t.Fatalf("reconciled r: %v on %v", rec.GetState(), rec.GetAgentID())
	}
	// The executor re-subscribed to the new agent: a MESSAGE reaches it and
	// it finishes the task.
	eventually(t, func() string {
		if err := s.call(calls.Message(agentID, "ckex", []byte("are you there"))); err != nil {
			return err.Error()
		}
		if waitfor.Poll(200*time.Millisecond, func() bool {
			for _, ev := range s.snapshot() {
				if ev.GetType() == scheduler.Event_MESSAGE && string(ev.Message.Data) == "echo:are you there" {
					return true
				}
			}
			return false
		}) {
			return ""
		}
		return "executor never answered after the agent restart"
	})
	s.mustCall(calls.Message(agentID, "ckex", []byte("finish:r")))
	s.waitState("r", mesos.TASK_FINISHED)
	var agentUpdates []string
	for _, st := range s.updates("r") {
		if st.GetState() == mesos.TASK_LOST || st.GetState() == mesos.TASK_FAILED {
			t.Fatalf("task r went %v across the restart: %q", st.GetState(), st.GetMessage())
		}
		if len(st.UUID) > 0 {
			agentUpdates = append(agentUpdates, st.GetState().String())
		}
	}
	if len(agentUpdates) != 2 || agentUpdates[0] != "TASK_RUNNING" || agentUpdates[1] != "TASK_FINISHED" {
		t.Fatalf("agent updates of r: %v", agentUpdates)
	}
	eventually(t, func() string {
		if got := stateTasks(t, e.c.URL())[s.id]["r"]; got != "TASK_FINISHED@"+agentID {
			return "/state: r is " + got
		}
		return ""
	})
}

// An agent in another "process" joins over the link's HTTP transport
// (link.Dial with the agent secret) and runs a command task and the custom
// executor; status updates, acknowledgements and messages travel over the
// HTTP link.
func TestRemoteAgentOverHTTPLink(t *testing.T) {
	e := startCluster(t, 0, func(c *cluster.Config) { c.AgentSecret = "s3cret" })
	client := link.Dial(e.c.URL(), link.ClientConfig{Secret: "s3cret", Logger: testLogger(t)})
	t.Cleanup(func() { client.Close() })
	cfg := agentConfig(filepath.Join(e.workDir, "remote"))
	cfg.Hostname = "remote-host"
	a := startAgent(t, client, cfg)
	s := e.subscribe(jsonCodec, fwInfo("remote", false))
	o := s.offer(a.ID())
	if o.Hostname != "remote-host" {
		t.Fatalf("offer hostname %q", o.Hostname)
	}
	s.launch(o, commandTask("cmd", "exit 0"), executorTask("exe", "run", executorInfo("rex", jsonCodec)))
	s.waitState("cmd", mesos.TASK_FINISHED)
	s.expectUpdates("cmd", a.ID(), "STARTING,RUNNING,FINISHED")
	s.waitState("exe", mesos.TASK_RUNNING)
	s.mustCall(calls.Message(a.ID(), "rex", []byte("over http")))
	s.waitEvent("echo", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_MESSAGE && string(ev.Message.Data) == "echo:over http"
	})
	s.mustCall(calls.Kill("exe", a.ID()))
	s.waitState("exe", mesos.TASK_KILLED)
	s.expectUpdates("exe", a.ID(), "RUNNING,KILLED")
}

// A partitioned agent (the master stops hearing its pongs) is marked
// unreachable: the partition-aware framework's task becomes
// TASK_UNREACHABLE. When the partition heals the agent re-registers by
// itself under the same id, reconciliation reports the task RUNNING again,
// and its executor's later updates reach the framework.
func TestPartitionedAgentRejoins(t *testing.T) {
	e := startCluster(t, 1, fastHealthCheck)
	agentID := e.c.Agents[0].ID()
	s := e.subscribe(protobuf, fwInfo("partition", false, mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	s.launch(s.offer(agentID), executorTask("r", "run", executorInfo("pex", protobuf)))
	s.waitState("r", mesos.TASK_RUNNING)
	if err := e.c.Master.Faults().PauseAgentPings(agentID, true); err != nil {
		t.Fatal(err)
	}
	s.waitState("r", mesos.TASK_UNREACHABLE)
	s.waitEvent("FAILURE of the agent", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetAgentID().GetValue() == agentID
	})
	// The agent hears no more pings and re-registers.
	eventually(t, func() string {
		before := len(s.snapshot())
		s.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"r": agentID})))
		s.barrier() // the answer, if any, has arrived
		for _, ev := range s.snapshot()[before:] {
			st := ev.GetUpdate().GetStatus()
			if ev.GetType() == scheduler.Event_UPDATE && st.TaskID.Value == "r" && st.GetState() == mesos.TASK_RUNNING {
				return ""
			}
		}
		return "task r not RUNNING again after the partition healed; events: " + s.describe()
	})
	s.mustCall(calls.Message(agentID, "pex", []byte("finish:r")))
	s.waitState("r", mesos.TASK_FINISHED)
	eventually(t, func() string {
		if got := stateTasks(t, e.c.URL())[s.id]["r"]; got != "TASK_FINISHED@"+agentID {
			return "/state: r is " + got
		}
		return ""
	})
	// The task's resources are offered again; the executor (still running)
	// keeps its own 0.1 cpus.
	s.declineAll()
	s.mustCall(calls.Revive())
	o := s.offer(agentID)
	cpus := 0.0
	for _, r := range o.Resources {
		if r.Name == "cpus" {
			cpus += r.GetScalar().GetValue()
		}
	}
	if cpus < 3.89 || cpus > 3.91 {
		t.Fatalf("offer after the task finished: %v", o.Resources)
	}
}

// A remote agent (HTTP link) restarted in place: when its link stream
// drops, the master loses the non-checkpointing framework's task at once
// (TASK_LOST, REASON_AGENT_DISCONNECTED) and keeps the checkpointing one's;
// the restarted agent re-registers over a new link, kills the
// non-checkpointing executor, and the checkpointing task goes on to
// FINISH.
func TestRemoteAgentRestart(t *testing.T) {
	e := startCluster(t, 0, func(c *cluster.Config) { c.AgentSecret = "s3cret"; c.Master.AgentMaxMissedPings = 40 })
	dial := func() *link.Client {
		client := link.Dial(e.c.URL(), link.ClientConfig{Secret: "s3cret", Logger: testLogger(t)})
		t.Cleanup(func() { client.Close() })
		return client
	}
	cfg := agentConfig(filepath.Join(e.workDir, "remote"))
	c1 := dial()
	a1 := startAgent(t, c1, cfg)
	agentID := a1.ID()
	ck := e.subscribe(protobuf, fwInfo("ck", true))
	ck.launch(ck.offer(agentID), executorTask("keep", "run", executorInfo("ckex", protobuf)))
	ck.declineAll()
	nc := e.subscribe(jsonCodec, fwInfo("nc", false))
	nc.launch(nc.offer(agentID), executorTask("lose", "run", executorInfo("ncex", jsonCodec)))
	ck.waitState("keep", mesos.TASK_RUNNING)
	nc.waitState("lose", mesos.TASK_RUNNING)

	a1.stop()
	c1.Close()
	lost := nc.waitState("lose", mesos.TASK_LOST)
	if lost.GetReason() != mesos.REASON_AGENT_DISCONNECTED || lost.GetSource() != mesos.SOURCE_MASTER {
		t.Fatalf("lost: %v %v %q", lost.GetSource(), lost.GetReason(), lost.GetMessage())
	}
	cfg.Endpoint = a1.cfg.Endpoint
	a2 := startAgent(t, dial(), cfg)
	if a2.ID() != agentID {
		t.Fatalf("restarted agent id %q, want %q", a2.ID(), agentID)
	}
	eventually(t, func() string {
		if procs := liveProcesses("", []string{nc.id}); len(procs) > 0 {
			return "non-checkpointing executor survived the restart: " + strings.Join(procs, "; ")
		}
		return ""
	})
	eventually(t, func() string {
		if err := ck.call(calls.Message(agentID, "ckex", []byte("finish:keep"))); err != nil {
			return err.Error()
		}
		if !waitfor.Poll(200*time.Millisecond, func() bool { return len(ck.updates("keep")) >= 2 }) {
			return "keep did not finish; events: " + ck.describe()
		}
		return ""
	})
	ck.waitState("keep", mesos.TASK_FINISHED)
	ck.expectUpdates("keep", agentID, "RUNNING,FINISHED")
	if got := stateNames(nc.updates("lose")); got != "RUNNING,LOST" {
		t.Fatalf("non-checkpointing task updates %s, want RUNNING,LOST; events: %s", got, nc.describe())
	}
}
