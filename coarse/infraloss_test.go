package coarse

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestInfrastructureLossDoesNotBlameTheAgent(t *testing.T) {
	cases := []struct {
		state  mesos.TaskState
		reason mesos.TaskStatus_Reason
		infra  bool
	}{
		{mesos.TASK_LOST, mesos.REASON_RECONCILIATION, true},
		{mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED, true},
		{mesos.TASK_LOST, mesos.REASON_AGENT_DISCONNECTED, true},
		{mesos.TASK_LOST, mesos.REASON_INVALID_OFFERS, true},
		{mesos.TASK_FAILED, mesos.REASON_AGENT_RESTARTED, false},
		{mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, false},
		{mesos.TASK_LOST, mesos.REASON_EXECUTOR_TERMINATED, false},
		{mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, false},
	}
	for _, c := range cases {
		st := mesos.TaskStatus{State: c.state.Enum(), Reason: c.reason.Enum()}
		if got := infrastructureLoss(st); got != c.infra {
			t.Errorf("%s %s: infrastructure loss = %v, want %v", c.state, c.reason, got, c.infra)
		}
	}
}
