package agent

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/uuid"
)

// reconcileTasks answers the master's ReconcileTasks as Mesos' agent
// answers ReconcileTasksMessage: the message follows every RunTask the
// master sent before it, so a task the agent does not know by now never
// reached it. Each such task becomes TASK_LOST (TASK_DROPPED for
// partition-aware frameworks), REASON_RECONCILIATION, through the status
// update manager; each listed executor the agent does not run is reported
// ended, so the master frees what it kept for it. Tasks it knows (running,
// queued, or ended with an update not yet acknowledged) need no answer:
// their updates reach the master as usual.
func (a *Agent) reconcileTasks(r link.ReconcileTasks) {
	fwID := r.Framework.GetID().GetValue()
	if fwID == "" {
		return
	}
	state := mesos.TASK_LOST
	if hasCapability(r.Framework, mesos.FrameworkInfo_Capability_PARTITION_AWARE) {
		state = mesos.TASK_DROPPED
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, rt := range r.Tasks {
		if a.knowsTaskLocked(fwID, rt.TaskID.Value) {
			continue
		}
		a.log.WithFields(logrus.Fields{"framework": fwID, "task": rt.TaskID.Value}).Warn("agent: task unknown to the agent; reporting it " + state.String())
		msg := "Reconciliation: task unknown to the agent"
		st := mesos.TaskStatus{
			TaskID: rt.TaskID, State: state.Enum(), Source: mesos.SOURCE_AGENT.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum(),
			Message: &msg, ExecutorID: rt.ExecutorID, UUID: uuid.New(), Timestamp: now(),
		}
		if _, err := a.sum.Update(link.StatusUpdate{FrameworkID: mesos.FrameworkID{Value: fwID}, Status: st, ExecutorID: rt.ExecutorID}); err != nil {
			a.log.WithError(err).WithField("task", rt.TaskID.Value).Warn("agent: reconciliation update refused")
		}
	}
	fw := a.frameworks[fwID]
	for _, eid := range r.Executors {
		if fw != nil && fw.executors[eid.Value] != nil {
			continue
		}
		a.sendLocked(link.AgentMessage{ExecutorExited: &link.ExecutorExited{FrameworkID: mesos.FrameworkID{Value: fwID}, ExecutorID: eid, Status: -1}})
	}
}

// knowsTaskLocked reports whether a task is the agent's: one of its
// executors has it, or an update of it awaits acknowledgement.
func (a *Agent) knowsTaskLocked(fwID, taskID string) bool {
	if _, _, t := a.findTaskLocked(fwID, taskID); t != nil {
		return true
	}
	return len(a.sum.Pending(fwID, taskID)) > 0
}
