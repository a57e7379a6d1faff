package launchbackoff

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestBackoffDoublesUpToMaxAndRegistrationResets(t *testing.T) {
	b := New()
	now := time.Unix(1000, 0)
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		n, next := b.Failed("a1", now)
		if n != i+1 || next != now.Add(w) {
			t.Fatalf("loss %d: (%d, %s), want (%d, now+%s)", i+1, n, next.Sub(now), i+1, w)
		}
	}
	for range 100 { // no overflow of the shift
		if _, next := b.Failed("a1", now); next != now.Add(Max) {
			t.Fatalf("a long run of losses waits %s, want %s", next.Sub(now), Max)
		}
	}
	if got := b.Until(now); len(got) != 1 || got["a1"] != now.Add(Max) {
		t.Fatalf("Until = %v", got)
	}
	if got := b.Until(now.Add(Max)); len(got) != 0 {
		t.Fatalf("Until after the wait = %v, want none", got)
	}
	b.Registered("a1")
	if _, next := b.Failed("a1", now); next != now.Add(Base) {
		t.Fatalf("after a registration the next loss waits %s, want %s", next.Sub(now), Base)
	}
}

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
		{mesos.TASK_DROPPED, mesos.REASON_INVALID_OFFERS, true},
		{mesos.TASK_FAILED, mesos.REASON_AGENT_RESTARTED, false},
		{mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, false},
		{mesos.TASK_LOST, mesos.REASON_EXECUTOR_TERMINATED, false},
		{mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, false},
	}
	for _, c := range cases {
		st := mesos.TaskStatus{State: c.state.Enum(), Reason: c.reason.Enum()}
		if got := InfrastructureLoss(st); got != c.infra {
			t.Errorf("%s %s: infrastructure loss = %v, want %v", c.state, c.reason, got, c.infra)
		}
	}
}
