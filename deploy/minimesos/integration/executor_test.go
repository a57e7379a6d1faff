package integration

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// A custom executor written with mesos-go's executor library, launched
// through the master from an ExecutorInfo: two tasks on one executor
// (RUNNING→FINISHED in order, and RUNNING until killed), MESSAGE from the
// scheduler to the executor and back, the executor listed in the next
// offer's executor_ids, and SHUTDOWN → the remaining task TASK_LOST plus
// a FAILURE event naming the executor.
func TestCustomExecutor(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		e := startCluster(t, 1)
		agentID := e.c.Agents[0].ID()
		s := e.subscribe(codec, fwInfo("executor", false))
		ex := executorInfo("ex1", codec)
		s.launch(s.offer(agentID), executorTask("f", "finish", ex), executorTask("r", "run", ex))

		s.waitState("f", mesos.TASK_FINISHED)
		s.expectUpdates("f", agentID, "RUNNING,FINISHED")
		running := s.waitState("r", mesos.TASK_RUNNING)
		if running.GetExecutorID().GetValue() != "ex1" || running.GetSource() != mesos.SOURCE_EXECUTOR {
			t.Fatalf("RUNNING update: executor %v source %v", running.GetExecutorID(), running.GetSource())
		}

		s.mustCall(calls.Message(agentID, "ex1", []byte("ping")))
		msg := s.waitEvent("MESSAGE echo:ping", func(ev *scheduler.Event) bool {
			return ev.GetType() == scheduler.Event_MESSAGE && string(ev.Message.Data) == "echo:ping"
		}).Message
		if msg.AgentID.Value != agentID || msg.ExecutorID.Value != "ex1" {
			t.Fatalf("MESSAGE from agent %q executor %q", msg.AgentID.Value, msg.ExecutorID.Value)
		}

		s.mustCall(calls.Kill("r", agentID))
		s.waitState("r", mesos.TASK_KILLED)
		s.expectUpdates("r", agentID, "RUNNING,KILLED")

		o := s.offer(agentID)
		if len(o.ExecutorIDs) != 1 || o.ExecutorIDs[0].Value != "ex1" {
			t.Fatalf("offer executor_ids %v, want [ex1]", o.ExecutorIDs)
		}
		s.launch(o, executorTask("r2", "run", ex))
		s.waitState("r2", mesos.TASK_RUNNING)
		s.mustCall(calls.Shutdown("ex1", agentID))
		lost := s.waitState("r2", mesos.TASK_LOST)
		s.expectUpdates("r2", agentID, "RUNNING,LOST")
		if lost.GetSource() != mesos.SOURCE_AGENT || lost.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
			t.Fatalf("after SHUTDOWN: %v %v %q", lost.GetSource(), lost.GetReason(), lost.GetMessage())
		}
		failure := s.waitEvent("executor FAILURE", func(ev *scheduler.Event) bool {
			return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.ExecutorID != nil
		}).Failure
		if failure.ExecutorID.Value != "ex1" || failure.GetAgentID().GetValue() != agentID || failure.Status == nil {
			t.Fatalf("FAILURE %+v", failure)
		}
	})
}

// LAUNCH_GROUP: a task group on the custom executor; both tasks go
// RUNNING→FINISHED.
func TestLaunchGroup(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		e := startCluster(t, 1)
		agentID := e.c.Agents[0].ID()
		s := e.subscribe(codec, fwInfo("group", false))
		o := s.offer(agentID)
		ex := executorInfo("group-ex", codec)
		ex.Type = mesos.ExecutorInfo_DEFAULT // the master requires DEFAULT for task groups; minimesos runs its command
		g1, g2 := executorTask("g1", "finish", nil), executorTask("g2", "finish", nil)
		g1.AgentID, g2.AgentID = o.AgentID, o.AgentID
		s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(*ex, g1, g2)}.WithOffers(o.ID)))
		for _, id := range []string{"g1", "g2"} {
			s.waitState(id, mesos.TASK_FINISHED)
			s.expectUpdates(id, agentID, "RUNNING,FINISHED")
		}
	})
}
