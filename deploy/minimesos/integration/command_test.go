package integration

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// Command tasks run by the agents' command executor through the real
// master: exit 0 → FINISHED, exit 3 → FAILED with Mesos' message, and a
// task ignoring SIGTERM is KILLED once the KILL's shorter kill policy
// grace period ends. Every update arrives once, in order, with agent_id
// and a uuid, and /state lists the completed tasks.
func TestCommandTasks(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		e := startCluster(t, 1)
		agentID := e.c.Agents[0].ID()
		s := e.subscribe(codec, fwInfo("commands", false, mesos.FrameworkInfo_Capability_TASK_KILLING_STATE))
		o := s.offer(agentID)
		// The launch's grace period outlasts every wait of the test: "long"
		// (which ignores SIGTERM) is KILLED within one only if the KILL's
		// own 200 ms grace applies.
		long := commandTask("long", "trap '' TERM; sleep 3600")
		long.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Hour)}}
		s.launch(o, commandTask("ok", "test -d \"$MESOS_SANDBOX\" && exit 0"), commandTask("bad", "exit 3"), long)

		s.waitState("ok", mesos.TASK_FINISHED)
		s.expectUpdates("ok", agentID, "STARTING,RUNNING,FINISHED")
		failed := s.waitState("bad", mesos.TASK_FAILED)
		s.expectUpdates("bad", agentID, "STARTING,RUNNING,FAILED")
		if failed.GetMessage() != "Command exited with status 3" || failed.GetReason() != mesos.REASON_COMMAND_EXECUTOR_FAILED ||
			failed.GetSource() != mesos.SOURCE_EXECUTOR {
			t.Fatalf("failed task: %v %v %q", failed.GetSource(), failed.GetReason(), failed.GetMessage())
		}

		s.waitState("long", mesos.TASK_RUNNING)
		kill := calls.Kill("long", agentID)
		kill.Kill.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(200 * time.Millisecond)}}
		s.mustCall(kill)
		s.waitState("long", mesos.TASK_KILLED)
		s.expectUpdates("long", agentID, "STARTING,RUNNING,KILLING,KILLED")

		eventually(t, func() string {
			got := stateTasks(t, e.c.URL())[s.id]
			want := map[string]string{"ok": "TASK_FINISHED", "bad": "TASK_FAILED", "long": "TASK_KILLED"}
			for id, st := range want {
				if got[id] != st+"@"+agentID {
					return "/state tasks " + formatMap(got) + ", want " + formatMap(want)
				}
			}
			return ""
		})
	})
}

func formatMap(m map[string]string) string {
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k + "=" + v + " ")
	}
	return b.String()
}
