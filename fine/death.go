package fine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/sandbox"
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
// arrives, or exitGrace passed. It passes every event on, one at a time,
// in the order it lets them through.
type deathHandler struct {
	next   mesosconn.Handler
	b      *Backend
	client *http.Client
	grace  time.Duration

	serial sync.Mutex // one call of next at a time (the event goroutine and exitGrace timers)

	mu     sync.Mutex
	exits  map[string]int        // executor generation (grantOwner) → its exit's wait status
	held   map[string]*heldDeath // executor generation → its tasks' updates waiting for the exit
	tails  map[string]string     // executor generation → its stderr and sandbox part, read once
	closed bool
	wg     sync.WaitGroup
}

type heldDeath struct {
	updates []mesos.TaskStatus
	timer   *time.Timer
}

var _ mesosconn.Handler = (*deathHandler)(nil)

func newDeathHandler(b *Backend, next mesosconn.Handler) *deathHandler {
	return &deathHandler{next: next, b: b, client: &http.Client{Timeout: describeTimeout}, grace: exitGrace,
		exits: map[string]int{}, held: map[string]*heldDeath{}, tails: map[string]string{}}
}

// generation is the executor generation of a live task's update; "" for
// an update of no live task (the backend ignores it).
func (h *deathHandler) generation(st mesos.TaskStatus) string {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	t := h.b.tasks[st.TaskID.Value]
	if t == nil || t.execID != st.GetExecutorID().GetValue() {
		return ""
	}
	return grantOwner(t.execID, t.gen)
}

func (h *deathHandler) Update(st mesos.TaskStatus) {
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED || st.GetSource() != mesos.SOURCE_AGENT || !mesosconn.Terminal(st.GetState()) {
		h.pass(func() { h.next.Update(st) })
		return
	}
	gen := h.generation(st)
	if gen == "" {
		h.pass(func() { h.next.Update(st) })
		return
	}
	h.mu.Lock()
	status, exited := h.exits[gen]
	if !exited && !h.closed {
		hd := h.held[gen]
		if hd == nil {
			hd = &heldDeath{}
			h.held[gen] = hd
			hd.timer = time.AfterFunc(h.grace, func() { h.timedOut(gen, hd) })
		}
		hd.updates = append(hd.updates, st)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.deliver(gen, st, status, exited)
}

// timedOut lets a generation's held updates through without an exit
// status once exitGrace passed without its FAILURE.
func (h *deathHandler) timedOut(gen string, hd *heldDeath) {
	h.mu.Lock()
	if h.held[gen] != hd || h.closed {
		h.mu.Unlock()
		return
	}
	delete(h.held, gen)
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()
	for _, st := range hd.updates {
		h.deliver(gen, st, 0, false)
	}
}

// deliver passes a dead executor's task update on with its description.
func (h *deathHandler) deliver(gen string, st mesos.TaskStatus, status int, exited bool) {
	msg := h.describe(gen, st, status, exited)
	st.Message = &msg
	h.pass(func() { h.next.Update(st) })
}

func (h *deathHandler) ExecutorLost(agentID mesos.AgentID, execID mesos.ExecutorID, status int) {
	h.b.mu.Lock()
	gen := ""
	if execID.Value == h.b.executorID(agentID.Value) {
		if g := h.b.exitedLocked(agentID.Value); g >= 0 {
			gen = grantOwner(execID.Value, g)
		}
	}
	h.b.mu.Unlock()
	var held []mesos.TaskStatus
	if gen != "" {
		h.mu.Lock()
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
		h.mu.Unlock()
	}
	// The tasks' updates first, as when Mesos sends them first.
	for _, st := range held {
		h.deliver(gen, st, status, true)
	}
	h.pass(func() { h.next.ExecutorLost(agentID, execID, status) })
}

// describe is a dead executor's task message: "executor … died: it ran on
// … and ended: Executor terminated; it exited with status 3 (TASK_FAILED,
// …)" and its stderr part.
func (h *deathHandler) describe(gen string, st mesos.TaskStatus, status int, exited bool) string {
	exec := st.GetExecutorID().GetValue()
	agent := st.GetAgentID().GetValue()
	b := h.b
	b.mu.Lock()
	conn, host := b.conn, agent
	if a := b.agents[agent]; a != nil && a.host != "" {
		host = a.host
	}
	b.mu.Unlock()
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
	d := sandbox.Death{ExecutorID: st.TaskID.Value, Host: host, AgentID: agent, FrameworkID: b.FrameworkID(), Status: &st}
	head := sandbox.Describe(context.Background(), h.client, "", d) // this update's verdict, no fetch
	// The stderr and sandbox part is the executor generation's: read once.
	h.mu.Lock()
	tail, ok := h.tails[gen]
	h.mu.Unlock()
	if !ok && conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
		full := sandbox.Describe(ctx, h.client, sandbox.MasterURL(conn.Master()), d)
		cancel()
		if i := strings.IndexByte(full, '\n'); i >= 0 {
			tail = full[i:]
		}
		h.mu.Lock()
		for g := range h.tails {
			if strings.HasPrefix(g, exec+"#") {
				delete(h.tails, g)
			}
		}
		h.tails[gen] = tail
		h.mu.Unlock()
	}
	return deathPrefix(exec) + head + tail
}

// deathPrefix starts the message of a dead executor's task (describe),
// which says all Mesos' status does: translate shows it alone.
func deathPrefix(exec string) string { return "executor " + exec + " died: " }

// exitWords words a wait status as Mesos reports it in a FAILURE event:
// "exited with status 3", "was killed by signal 9 (killed)".
func exitWords(ws int) string {
	w := syscall.WaitStatus(ws)
	switch {
	case w.Exited():
		return fmt.Sprintf("exited with status %d", w.ExitStatus())
	case w.Signaled():
		return fmt.Sprintf("was killed by signal %d (%s)", int(w.Signal()), w.Signal())
	}
	return fmt.Sprintf("ended with wait status %d", ws)
}

// close drops held updates (the driver is stopping) and waits for
// deliveries under way.
func (h *deathHandler) close() {
	h.mu.Lock()
	h.closed = true
	for g, hd := range h.held {
		hd.timer.Stop()
		delete(h.held, g)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// pass calls next, one call at a time.
func (h *deathHandler) pass(f func()) {
	h.serial.Lock()
	defer h.serial.Unlock()
	f()
}

func (h *deathHandler) Subscribed(id string, m mesos.MasterInfo, re bool) {
	h.pass(func() { h.next.Subscribed(id, m, re) })
}
func (h *deathHandler) Offers(o []mesos.Offer)     { h.pass(func() { h.next.Offers(o) }) }
func (h *deathHandler) Rescinded(id mesos.OfferID) { h.pass(func() { h.next.Rescinded(id) }) }
func (h *deathHandler) AgentLost(id mesos.AgentID) { h.pass(func() { h.next.AgentLost(id) }) }
func (h *deathHandler) Disconnected(err error)     { h.pass(func() { h.next.Disconnected(err) }) }
func (h *deathHandler) Aborted(err error)          { h.pass(func() { h.next.Aborted(err) }) }
func (h *deathHandler) Message(a mesos.AgentID, e mesos.ExecutorID, d []byte) {
	h.pass(func() { h.next.Message(a, e, d) })
}
