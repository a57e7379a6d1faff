package launchbackoff

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/backoff"
)

// Bounds of the back-off (issue 10).
const (
	Base = 500 * time.Millisecond
	Max  = 30 * time.Second
)

// Backoff counts, per agent, launches lost before their executor came up
// and when the agent may get the next one. It is not safe for concurrent
// use; its owner locks it.
type Backoff struct {
	agents map[string]*record
}

type record struct {
	failures int
	next     time.Time
}

// New is a Backoff with no losses.
func New() *Backoff { return &Backoff{agents: map[string]*record{}} }

// Failed records a launch on agent lost before its executor came up; it
// returns how many there were in a row and when the agent may get the
// next launch.
func (b *Backoff) Failed(agent string, now time.Time) (int, time.Time) {
	r := b.agents[agent]
	if r == nil {
		r = &record{}
		b.agents[agent] = r
	}
	r.failures++
	r.next = now.Add(backoff.Delay(Base, Max, r.failures-1))
	return r.failures, r.next
}

// Registered forgets an agent's lost launches: its executor came up.
func (b *Backoff) Registered(agent string) { delete(b.agents, agent) }

// Until lists the agents that may not get a launch at now, with when they
// may (placement's Backoff).
func (b *Backoff) Until(now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for id, r := range b.agents {
		if now.Before(r.next) {
			out[id] = r.next
		}
	}
	return out
}

// InfrastructureLoss reports a Mesos task end that says nothing about the
// executor or its agent's health (the master or an agent lost track of
// it, an offer went stale): it never counts toward excluding the agent.
func InfrastructureLoss(st mesos.TaskStatus) bool {
	switch st.GetReason() {
	case mesos.REASON_RECONCILIATION, mesos.REASON_INVALID_OFFERS, mesos.REASON_MASTER_DISCONNECTED,
		mesos.REASON_AGENT_DISCONNECTED, mesos.REASON_AGENT_REMOVED, mesos.REASON_AGENT_REMOVED_BY_OPERATOR,
		mesos.REASON_AGENT_RESTARTED, mesos.REASON_AGENT_UNKNOWN, mesos.REASON_AGENT_REREGISTERED:
		return st.GetState() != mesos.TASK_FAILED && st.GetState() != mesos.TASK_ERROR
	}
	return false
}
