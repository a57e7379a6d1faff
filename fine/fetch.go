package fine

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
)

// fetchHandler ends an executor's fetch credential as soon as the
// executor is known to be up (an update of one of its live tasks from the
// executor itself, which it can only send once registered with its agent)
// or gone, before the backend's own handling: the credential sits in the
// sandbox's stderr, where Mesos' fetcher logged the URI. The credential
// ended is the one of the generation the task was launched on, so an
// update of an earlier executor under the same id (an agent retries
// unacknowledged updates, possibly after the next executor was launched)
// leaves the newer executor's credential alone; a FAILURE ends the one of
// the generation it reports (Backend.exitOf). It also reports executor
// exits Flint uses deliberately (a binary failing its SHA-256 check).
type fetchHandler struct{ handler }

var _ mesosconn.Handler = fetchHandler{}

func (h fetchHandler) Update(st mesos.TaskStatus) {
	if st.GetSource() == mesos.SOURCE_EXECUTOR && st.ExecutorID != nil {
		b := h.b
		t := b.tasks[st.TaskID.Value]
		if t != nil && t.execID == st.ExecutorID.Value {
			b.exe.Registered(grantOwner(t.execID, t.gen))
		}
	}
	h.handler.Update(st)
}

func (h fetchHandler) ExecutorLost(agentID mesos.AgentID, execID mesos.ExecutorID, status int) {
	// deathHandler, before this, attributed the exit to a generation.
	b := h.b
	owner := ""
	if a := b.agents[agentID.Value]; a != nil && a.id == execID.Value && a.lastExited >= 0 {
		owner = grantOwner(a.id, a.lastExited)
	}
	if owner != "" {
		b.exe.Registered(owner)
	}
	if why := mesosbackend.ExitExplained(status); why != "" {
		b.log.WithField("agent", agentID.Value).Errorf("fine: executor %s on agent %s exited: %s", execID.Value, agentID.Value, why)
	}
	h.handler.ExecutorLost(agentID, execID, status)
}

// AgentLost ends the credentials of every generation launched on the
// agent: they are all gone.
func (h fetchHandler) AgentLost(agentID mesos.AgentID) {
	b := h.b
	var owners []string
	if a := b.agents[agentID.Value]; a != nil {
		for _, g := range a.launched {
			owners = append(owners, grantOwner(a.id, g))
		}
		a.launched = nil
	}
	for _, o := range owners {
		b.exe.Registered(o)
	}
	h.handler.AgentLost(agentID)
}
