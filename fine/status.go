package fine

import (
	"fmt"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	fineexec "github.com/flint-mesos/flint/executor/fine"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// handler receives the Mesos connection's events (on its goroutine).
type handler struct{ b *Backend }

var _ mesosconn.Handler = handler{}

// ready waits until Start has set the connection; nil if it never will.
func (b *Backend) ready() *mesosconn.Conn {
	<-b.connReady
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conn
}

func (h handler) Subscribed(id string, m mesos.MasterInfo, re bool) {
	b := h.b
	b.mu.Lock()
	b.frameworkID = id
	b.held = map[string]*heldOffer{} // offers of an earlier subscription are void
	b.mu.Unlock()
	verb := "registered"
	if re {
		verb = "re-registered"
	}
	b.log.WithField("framework", id).Infof("fine: %s with the Mesos master at %s as framework %s", verb, mesosconn.MasterAddr(m), id)
}

func (h handler) Offers(offers []mesos.Offer) {
	if h.b.ready() == nil {
		return
	}
	h.b.launchRound(offers)
}

func (h handler) Rescinded(id mesos.OfferID) {
	h.b.mu.Lock()
	delete(h.b.held, id.Value)
	h.b.mu.Unlock()
}

// Update maps a Mesos task status to the driver's (see the package doc).
func (h handler) Update(st mesos.TaskStatus) {
	b := h.b
	id := st.TaskID.Value
	state := st.GetState()
	b.mu.Lock()
	t := b.tasks[id]
	if t == nil {
		b.mu.Unlock()
		b.log.Debugf("fine: ignoring %s for task %s: not a live task of this driver (duplicate or unknown)", state, id)
		return
	}
	if !terminal(state) {
		b.mu.Unlock()
		if state == mesos.TASK_RUNNING || state == mesos.TASK_KILLING {
			b.d.StatusUpdate(&flintpb.StatusUpdate{TaskId: t.flintID, Attempt: t.attempt, ExecutorId: t.execID,
				State: flintpb.TaskState_TASK_RUNNING, TimestampUnixNano: time.Now().UnixNano()})
		}
		return
	}
	delete(b.tasks, id)
	if a := b.agents[t.agentID]; a != nil {
		a.live--
	}
	u := translate(t, st)
	if ind := u.GetResult().GetIndirect(); ind != nil {
		ind.ExecutorId = t.execID
		b.blocks[ind.BlockId] = resultRef{url: labelValue(st.Labels, fineexec.LabelResults), pin: labelValue(st.Labels, fineexec.LabelResultsPin)}
	}
	b.mu.Unlock()
	if u.State != flintpb.TaskState_TASK_FINISHED {
		b.log.WithFields(logrus.Fields{"task": t.flintID, "agent": t.agentID}).Debugf("fine: task %d %s: %s", t.flintID, state, u.GetFailure().GetMessage())
	}
	b.d.StatusUpdate(u)
}

// terminal reports whether a state ends a task for this backend: every
// state but the launching and running ones (UNREACHABLE included, which
// mesosconn.Terminal leaves open for partition-aware frameworks).
func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_KILLING:
		return false
	}
	return true
}

// translate builds the driver's update for a terminal Mesos status. The
// executor's own flintpb.StatusUpdate in the data is used when it is for
// this task; otherwise (agent or master updates) one is made from the
// Mesos state, reason and message:
//
//	FINISHED                               → FINISHED (no result data: FAILED, RESULT_LOST)
//	FAILED, ERROR, GONE                    → FAILED (counts towards flint.task.maxFailures)
//	KILLED                                 → KILLED
//	LOST, DROPPED, UNREACHABLE, UNKNOWN,
//	GONE_BY_OPERATOR                       → LOST, EXECUTOR_LOST (retried, not counted)
func translate(t *mtask, st mesos.TaskStatus) *flintpb.StatusUpdate {
	u := &flintpb.StatusUpdate{TaskId: t.flintID, Attempt: t.attempt, ExecutorId: t.execID, TimestampUnixNano: time.Now().UnixNano()}
	var ex flintpb.StatusUpdate
	fromExec := len(st.Data) > 0 && ex.Unmarshal(st.Data) == nil && ex.State != flintpb.TaskState_TASK_STATE_UNSPECIFIED &&
		(ex.TaskId == t.flintID || ex.TaskId == 0)
	if fromExec {
		u.Metrics, u.Uuid = ex.Metrics, ex.Uuid
	}
	why := describe(st)
	switch st.GetState() {
	case mesos.TASK_FINISHED:
		if fromExec && ex.State == flintpb.TaskState_TASK_FINISHED && ex.Result != nil {
			u.State, u.Result = flintpb.TaskState_TASK_FINISHED, ex.Result
			return u
		}
		u.State = flintpb.TaskState_TASK_FAILED
		u.Failure = &flintpb.TaskFailure{Kind: flintpb.FailureKind_RESULT_LOST, Message: "fine: " + why + " without a result"}
	case mesos.TASK_KILLED:
		u.State = flintpb.TaskState_TASK_KILLED
		u.Failure = &flintpb.TaskFailure{Kind: flintpb.FailureKind_KILLED, Message: "fine: " + why}
	case mesos.TASK_FAILED, mesos.TASK_ERROR, mesos.TASK_GONE:
		u.State = flintpb.TaskState_TASK_FAILED
		kind := flintpb.FailureKind_EXCEPTION
		switch st.GetReason() {
		case mesos.REASON_CONTAINER_LAUNCH_FAILED, mesos.REASON_TASK_INVALID, mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT:
			kind = flintpb.FailureKind_LAUNCH_FAILED
		}
		u.Failure = &flintpb.TaskFailure{Kind: kind, Message: "fine: " + why}
	default: // LOST, DROPPED, UNREACHABLE, UNKNOWN, GONE_BY_OPERATOR
		u.State = flintpb.TaskState_TASK_LOST
		u.Failure = &flintpb.TaskFailure{Kind: flintpb.FailureKind_EXECUTOR_LOST, Message: "fine: " + why}
	}
	if fromExec && ex.Failure != nil && ex.State == u.State {
		u.Failure = ex.Failure
	}
	return u
}

// describe is a Mesos status in words: state, reason, source, message.
func describe(st mesos.TaskStatus) string {
	s := fmt.Sprintf("Mesos %s", st.GetState())
	if st.Reason != nil {
		s += " (" + st.Reason.String() + ")"
	}
	if st.Source != nil {
		s += " from " + st.Source.String()
	}
	if m := st.GetMessage(); m != "" {
		s += ": " + m
	}
	return s
}

func labelValue(ls *mesos.Labels, key string) string {
	if ls == nil {
		return ""
	}
	for _, l := range ls.Labels {
		if l.Key == key {
			return l.GetValue()
		}
	}
	return ""
}

func (h handler) AgentLost(agentID mesos.AgentID) {
	b := h.b
	b.declineHeld(func(o *heldOffer) bool { return o.offer.AgentID.Value == agentID.Value }, mesosconn.DeclineUnfit)
	b.log.WithField("agent", agentID.Value).Warnf("fine: agent %s lost; Mesos reports its tasks lost and they are retried elsewhere", agentID.Value)
	h.executorGone(agentID.Value, "agent "+agentID.Value+" lost")
}

func (h handler) ExecutorLost(agentID mesos.AgentID, execID mesos.ExecutorID, status int) {
	h.b.log.WithField("agent", agentID.Value).Debugf("fine: executor %s exited with status %d", execID.Value, status)
	if execID.Value == executorID(agentID.Value) {
		h.executorGone(agentID.Value, fmt.Sprintf("exited with status %d", status))
	}
}

// executorGone forgets an agent's executor. Its tasks end through their own
// Mesos updates (which Mesos guarantees); only an executor with no live
// task is reported lost to the driver, so a new executor under the same id
// never has its tasks failed by an old one's exit.
func (h handler) executorGone(agentID, why string) {
	b := h.b
	b.round.Lock()
	defer b.round.Unlock()
	b.mu.Lock()
	a := b.agents[agentID]
	report := a != nil && a.added && a.live == 0 && !b.stopping
	if a != nil {
		a.added = false
	}
	b.mu.Unlock()
	if report {
		b.d.ExecutorLost(a.id, why, false)
	}
}

func (h handler) Message(mesos.AgentID, mesos.ExecutorID, []byte) {}

func (h handler) Disconnected(err error) {
	h.b.mu.Lock()
	h.b.held = map[string]*heldOffer{}
	h.b.mu.Unlock()
	h.b.log.Warnf("fine: lost the Mesos master %s (%v); re-registering", h.b.master, err)
}

func (h handler) Aborted(err error) {
	h.b.log.Errorf("fine: the Mesos master %s ended the framework: %v; no task can be launched", h.b.master, err)
}
