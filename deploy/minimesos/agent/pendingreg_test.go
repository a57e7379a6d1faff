package agent

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// A RunTask the agent has received but not handled yet is reported on
// re-registration as TASK_STAGING, with its new executor and framework,
// as Mesos' agent reports pending tasks: the master must not lose a task
// it sent because the agent re-registered before launching it.
func TestRegistrationReportsLaunchesStillInTheInbox(t *testing.T) {
	ta := startAgent(t, newFakeMaster(), fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", false)
	ex := executorInfo("ex1")
	ta.mu.Lock()
	// Queued without waking the inbox loop: it stays pending.
	ta.inbox = append(ta.inbox,
		link.MasterMessage{RunTask: &link.RunTask{Framework: fw, Task: executorTask("t1", "run", ex)}},
		link.MasterMessage{RunTask: &link.RunTask{Framework: fw, Task: cmdTask("c1", "true")}})
	ta.mu.Unlock()
	r := ta.registration()
	ta.mu.Lock()
	ta.inbox = nil
	ta.mu.Unlock()
	if len(r.Frameworks) != 1 || r.Frameworks[0].GetID().GetValue() != "fw" {
		t.Fatalf("frameworks %v, want fw", r.Frameworks)
	}
	if len(r.Executors) != 1 || r.Executors[0].Info.ExecutorID.Value != "ex1" {
		t.Fatalf("executors %v, want ex1 only (no command executor)", r.Executors)
	}
	states := map[string]mesos.TaskState{}
	for _, tk := range r.Tasks {
		states[tk.TaskID.Value] = tk.GetState()
		if tk.AgentID.Value != ta.ID() || tk.FrameworkID.Value != "fw" {
			t.Errorf("task %s reported on %v for %v", tk.TaskID.Value, tk.AgentID, tk.FrameworkID)
		}
	}
	if len(states) != 2 || states["t1"] != mesos.TASK_STAGING || states["c1"] != mesos.TASK_STAGING {
		t.Fatalf("tasks %v, want t1 and c1 STAGING", states)
	}
}
