package fine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/sandbox"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/mesosbackend"
)

// describeTimeout bounds reading a dead executor's stderr from its agent.
const describeTimeout = 2 * time.Second

// exitGrace is how long the updates of an executor's dead tasks wait for
// the FAILURE event that carries its exit status. Mesos' agent sends the
// tasks' updates and the executor's exit to the master separately, so
// either may come first; minimesos sends the updates first.
const exitGrace = 2 * time.Second

// deathHandler makes the updates of tasks whose Mesos executor died
// (REASON_EXECUTOR_TERMINATED, from the agent) debuggable: their message
// becomes where the executor ran, Mesos' message with the executor's exit
// status or signal (from the FAILURE event Mesos sends for the executor),
// and the last lines of its stderr, read once per executor from its
// sandbox through the agent's /files/read, with where the sandbox is. An
// update that comes before its executor's FAILURE is held until it
// arrives, or exitGrace passed (a timer on the backend's clock whose end
// is an input of the owner). It runs on the owner goroutine, first in the
// chain, and passes every event on in the order it lets them through.
type deathHandler struct {
	next   mesosconn.Handler
	b      *Backend
	client *http.Client
	grace  time.Duration

	exits  map[string]int        // executor generation (grantOwner) → its exit's wait status
	held   map[string]*heldDeath // executor generation → its tasks' updates waiting for the exit
	tails  map[string]string     // executor generation → its stderr and sandbox part, read once
	closed bool
}

type heldDeath struct {
	updates []mesos.TaskStatus
	timer   clock.Timer
}

var _ mesosconn.Handler = (*deathHandler)(nil)

func newDeathHandler(b *Backend, next mesosconn.Handler) *deathHandler {
	return &deathHandler{next: next, b: b, client: &http.Client{Timeout: describeTimeout}, grace: exitGrace,
		exits: map[string]int{}, held: map[string]*heldDeath{}, tails: map[string]string{}}
}

// generation is the executor generation of a live task's update; "" for
// an update of no live task (the backend ignores it).
func (h *deathHandler) generation(st mesos.TaskStatus) string {
	t := h.b.tasks[st.TaskID.Value]
	if t == nil || t.execID != st.GetExecutorID().GetValue() {
		return ""
	}
	return grantOwner(t.execID, t.gen)
}

func (h *deathHandler) Update(st mesos.TaskStatus) {
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED || st.GetSource() != mesos.SOURCE_AGENT || !mesosconn.Terminal(st.GetState()) {
		h.next.Update(st)
		return
	}
	gen := h.generation(st)
	if gen == "" {
		h.next.Update(st)
		return
	}
	status, exited := h.exits[gen]
	if !exited && !h.closed {
		hd := h.held[gen]
		if hd == nil {
			hd = &heldDeath{}
			h.held[gen] = hd
			hd.timer = h.b.clock.AfterFunc(h.grace, func() { h.b.post(func() { h.timedOut(gen, hd) }) })
		}
		hd.updates = append(hd.updates, st) // the owner's, as timedOut runs on the owner too
		return
	}
	h.deliver(gen, st, status, exited)
}

// timedOut lets a generation's held updates through without an exit
// status once exitGrace passed without its FAILURE.
func (h *deathHandler) timedOut(gen string, hd *heldDeath) {
	if h.held[gen] != hd || h.closed {
		return
	}
	delete(h.held, gen)
	for _, st := range hd.updates {
		h.deliver(gen, st, 0, false)
	}
}

// deliver passes a dead executor's task update on with its description.
func (h *deathHandler) deliver(gen string, st mesos.TaskStatus, status int, exited bool) {
	msg := h.describe(gen, st, status, exited)
	st.Message = &msg
	h.next.Update(st)
}

func (h *deathHandler) ExecutorLost(agentID mesos.AgentID, execID mesos.ExecutorID, status int) {
	gen := ""
	if execID.Value == h.b.executorID(agentID.Value) {
		if g := h.b.exitOf(agentID.Value); g >= 0 {
			gen = grantOwner(execID.Value, g)
		}
	}
	var held []mesos.TaskStatus
	if gen != "" {
		for g := range h.exits { // one exit kept per executor id: the latest generation's
			if strings.HasPrefix(g, execID.Value+"#") {
				delete(h.exits, g)
			}
		}
		h.exits[gen] = status
		if hd := h.held[gen]; hd != nil {
			hd.timer.Stop()
			delete(h.held, gen)
			held = hd.updates
		}
	}
	// The tasks' updates first, as when Mesos sends them first.
	for _, st := range held {
		h.deliver(gen, st, status, true)
	}
	h.next.ExecutorLost(agentID, execID, status)
}

// describe is a dead executor's task message: "executor … died: it ran on
// … and ended: Executor terminated; it exited with status 3 (TASK_FAILED,
// …)" and its stderr part.
func (h *deathHandler) describe(gen string, st mesos.TaskStatus, status int, exited bool) string {
	exec := st.GetExecutorID().GetValue()
	agent := st.GetAgentID().GetValue()
	b := h.b
	conn, host := b.conn, agent
	if a := b.agents[agent]; a != nil && a.host != "" {
		host = a.host
	}
	msg := st.GetMessage()
	if msg == "" {
		msg = "Executor terminated"
	}
	if exited {
		msg += "; it " + exitWords(status)
		if why := mesosbackend.ExitExplained(status); why != "" {
			msg += ": " + why
		}
	} else {
		msg += fmt.Sprintf("; Mesos reported no exit status for it within %s", h.grace)
	}
	st.Message = &msg
	d := sandbox.Death{ExecutorID: st.TaskID.Value, Host: host, AgentID: agent, FrameworkID: b.frameworkID, Status: &st}
	head := sandbox.Describe(context.Background(), h.client, "", d) // this update's verdict, no fetch
	// The stderr and sandbox part is the executor generation's: read once
	// (the owner waits for it, at most describeTimeout, once per dead
	// executor).
	tail, ok := h.tails[gen]
	if !ok && conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
		full := sandbox.Describe(ctx, h.client, sandbox.MasterURL(conn.Master()), d)
		cancel()
		if i := strings.IndexByte(full, '\n'); i >= 0 {
			tail = full[i:]
		}
		for g := range h.tails {
			if strings.HasPrefix(g, exec+"#") {
				delete(h.tails, g)
			}
		}
		h.tails[gen] = tail
	}
	return deathPrefix(exec) + head + tail
}

// deathPrefix starts the message of a dead executor's task (describe),
// which says all Mesos' status does: translate shows it alone.
func deathPrefix(exec string) string { return "executor " + exec + " died: " }

// exitWords words a wait status as Mesos reports it in a FAILURE event:
// "exited with status 3", "was killed by signal 9 (killed)"; -1 is the
// agent's "unknown status" (no process was reaped: its container never
// started one, or the agent lost it).
func exitWords(ws int) string {
	if ws == -1 {
		return "ended with an unknown status (no process was reaped: the container never started, or the agent lost it)"
	}
	w := syscall.WaitStatus(ws)
	switch {
	case w.Exited():
		return fmt.Sprintf("exited with status %d", w.ExitStatus())
	case w.Signaled():
		return fmt.Sprintf("was killed by signal %d (%s)", int(w.Signal()), w.Signal())
	}
	return fmt.Sprintf("ended with wait status %d", ws)
}

// close drops held updates (the driver is stopping).
func (h *deathHandler) close() {
	h.closed = true
	for g, hd := range h.held {
		hd.timer.Stop()
		delete(h.held, g)
	}
}

func (h *deathHandler) Subscribed(id string, m mesos.MasterInfo, re bool) {
	h.next.Subscribed(id, m, re)
}
func (h *deathHandler) Offers(o []mesos.Offer)     { h.next.Offers(o) }
func (h *deathHandler) Rescinded(id mesos.OfferID) { h.next.Rescinded(id) }
func (h *deathHandler) AgentLost(id mesos.AgentID) { h.next.AgentLost(id) }
func (h *deathHandler) Disconnected(err error)     { h.next.Disconnected(err) }
func (h *deathHandler) Aborted(err error)          { h.next.Aborted(err) }
func (h *deathHandler) Message(a mesos.AgentID, e mesos.ExecutorID, d []byte) {
	h.next.Message(a, e, d)
}
