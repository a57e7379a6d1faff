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

// LAUNCH_GROUP on Mesos' default executor (type DEFAULT, no command), run
// in-process by the agent: both tasks of the group go
// STARTING→RUNNING→FINISHED from the executor, each in its own sandbox
// <executor sandbox>/tasks/<task id> given as MESOS_SANDBOX, with its
// environment; the executor ends with its last task. A DEFAULT executor
// that sets a command is refused (TASK_ERROR, REASON_TASK_GROUP_INVALID).
func TestLaunchGroup(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		e := startCluster(t, 1)
		agentID := e.c.Agents[0].ID()
		s := e.subscribe(codec, fwInfo("group", false))
		g1 := groupTask("g1", `test "$MESOS_SANDBOX" = "$PWD" && test "${PWD##*/}" = g1 && test "$GREETING" = hello && echo "out:$MESOS_EXECUTOR_ID"`)
		g1.Command.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "GREETING", Value: ptr("hello")}}}
		g2 := groupTask("g2", "sleep 0.2")
		s.launchGroup(s.agentOffers(agentID), defaultExecutor("group-ex"), g1, g2)
		for _, id := range []string{"g1", "g2"} {
			st := s.waitState(id, mesos.TASK_FINISHED)
			s.expectUpdates(id, agentID, "STARTING,RUNNING,FINISHED")
			if st.GetSource() != mesos.SOURCE_EXECUTOR || st.GetExecutorID().GetValue() != "group-ex" || st.GetMessage() != "Command exited with status 0" {
				t.Fatalf("%s: %v %v %q", id, st.GetSource(), st.GetExecutorID(), st.GetMessage())
			}
		}
		out := e.taskFile(s.id, "group-ex", "g1", "stdout")
		if out != "out:group-ex\n" {
			t.Fatalf("g1 stdout %q", out)
		}
		s.waitEvent("executor FAILURE after its last task", func(ev *scheduler.Event) bool {
			return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetExecutorID().GetValue() == "group-ex"
		})

		// A DEFAULT executor with a command is refused, as by Mesos.
		bad := defaultExecutor("bad-ex")
		bad.Command = &mesos.CommandInfo{Value: ptr("true")}
		s.launchGroup(s.agentOffers(agentID), bad, groupTask("b1", "true"))
		st := s.waitState("b1", mesos.TASK_ERROR)
		if st.GetReason() != mesos.REASON_TASK_GROUP_INVALID || st.GetMessage() != "'ExecutorInfo.command' must not be set for 'DEFAULT' executor" {
			t.Fatalf("DEFAULT executor with a command: %v %q", st.GetReason(), st.GetMessage())
		}
	})
}
