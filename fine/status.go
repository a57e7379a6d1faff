package fine

import (
	"fmt"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// handler handles the Mesos connection's events on the owner goroutine,
// last in its chain (deathHandler, fetchHandler, handler).
type handler struct{ b *Backend }

var _ mesosconn.Handler = handler{}

func (h handler) Subscribed(id string, m mesos.MasterInfo, re bool) {
	b := h.b
	b.frameworkID = id
	b.held = map[string]*heldOffer{} // offers of an earlier subscription are void
	b.resize(b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
	verb := "registered"
	if re {
		verb = "re-registered"
	}
	b.log.WithField("framework", id).Infof("fine: %s with the Mesos master at %s as framework %s", verb, mesosconn.MasterAddr(m), id)
}

func (h handler) Offers(offers []mesos.Offer) { h.b.offersIn(offers) }

func (h handler) Rescinded(id mesos.OfferID) {
	b := h.b
	delete(b.held, id.Value)
	b.resize(b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
}

// Update maps a Mesos task status to the driver's (see the package doc).
func (h handler) Update(st mesos.TaskStatus) {
	b := h.b
	id := st.TaskID.Value
	state := st.GetState()
	t := b.tasks[id]
	if t == nil {
		if !terminal(state) && !b.stopping.Load() {
			b.endUnknown(st)
			return
		}
		b.log.Debugf("fine: ignoring %s for task %s: not a live task of this driver (duplicate or unknown)", state, id)
		return
	}
	refused, next := b.launchOutcome(t, st)
	if a := b.agents[t.agentID]; a != nil && t.reused && !a.started && !a.agentLost && a.gen == t.gen &&
		st.GetSource() == mesos.SOURCE_EXECUTOR && !terminal(state) {
		// A task launched beside an executor Mesos then reported gone
		// runs on the executor its agent started again for it (an
		// executor URI without a spent credential): it runs, so shuffle
		// releases and Stop's shutdown reach it again — without this it
		// kept its map outputs, and so never exited idle, after the jobs
		// ended (found by the simulation, seed 19). Not after its agent's
		// loss: a RUNNING sent before it and delivered after is no
		// restart, and marking the lost executor started kept it from
		// being reported lost (found by the simulation, seed 278).
		a.started = true
	}
	if refused > 0 {
		why, _, _ := strings.Cut(describe(st), "\n") // its first line: a dead executor's stderr is in the task's error
		b.log.WithFields(logrus.Fields{"executor": t.execID, "agent": t.agentID}).Warnf(
			"fine: %d launch(es) in a row on agent %s lost before the executor came up (%s); the next launch there waits until %s",
			refused, t.agentID, why, next.Format(time.RFC3339Nano))
	}
	if !terminal(state) {
		if state == mesos.TASK_RUNNING || state == mesos.TASK_KILLING {
			b.d.StatusUpdate(&backend.StatusUpdate{TaskID: t.flintID, Attempt: int(t.attempt), ExecutorID: t.execID,
				State: scheduler.Running})
		}
		return
	}
	delete(b.tasks, id)
	b.touch(t.agentID)
	if a := b.agents[t.agentID]; a != nil {
		a.live--
		a.liveCPUs -= t.cpus
		if t.short {
			a.shortLive--
		}
	}
	u := translate(t, st)
	if respawnRefused(t, st) {
		// The executor the task was placed beside had exited; the agent
		// started it again from the same ExecutorInfo, whose fetch
		// credential had ended once that executor came up. Not the task's
		// fault: retried; the next launch there starts a new executor.
		u.State = scheduler.Lost
		u.Failure = &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: u.Failure.Message +
			" (the executor the task was placed beside had exited, and its agent could not start it again with its spent fetch credential; retried on a new executor)"}
		if a := b.agents[t.agentID]; a != nil && a.gen == t.gen {
			a.exited = true
		}
	}
	if ind := u.Indirect; ind != nil {
		ind.ExecutorID = t.execID
		b.blocks[ind.BlockID] = resultRef{url: labelValue(st.Labels, contract.LabelResults), pin: labelValue(st.Labels, contract.LabelResultsPin)}
	}
	// The agent's capacity shrinks before the update frees the task's
	// cores in the driver loop, so the loop never sees a slot no offer
	// holds: both are this goroutine's calls to the driver, which handles
	// one goroutine's inputs in the order they were made.
	b.resize(b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
	if u.State != scheduler.Finished {
		b.log.WithFields(logrus.Fields{"task": t.flintID, "agent": t.agentID}).Debugf("fine: task %d %s: %s", t.flintID, state, u.Failure.Message)
	}
	reason := unknownUser(u, b.set.Executor.TaskUser(b.user))
	if r := mesosbackend.Unauthorized(st, b.set.Executor.TaskUser(b.user)); r != "" {
		reason = r
	}
	if reason != "" {
		// Every launch would fail the same way: fail the jobs now (before
		// the update, so no retry is placed) instead of after
		// flint.task.maxFailures launches.
		b.log.Error("fine: " + reason)
		b.d.Abort(reason)
	}
	b.d.StatusUpdate(u)
	b.reportGone(b.agents[t.agentID])
}

// launchOutcome feeds the launch back-off (launchbackoff): an
// update of its own from the executor generation a task was launched on
// says that executor came up, which ends the agent's back-off; the first
// end of one of its tasks before that (lost or refused by the master or
// agent, or an executor that died starting) makes further launches on the
// agent wait, infrastructure losses included, which never count as
// failures. It returns the losses in a row and the next launch time when
// it counted one.
func (b *Backend) launchOutcome(t *mtask, st mesos.TaskStatus) (int, time.Time) {
	a := b.agents[t.agentID]
	if a == nil || a.gen != t.gen || a.up || b.stopping.Load() {
		return 0, time.Time{}
	}
	if st.GetSource() == mesos.SOURCE_EXECUTOR {
		a.up = true
		b.backoff.Registered(t.agentID)
		return 0, time.Time{}
	}
	if !terminal(st.GetState()) || st.GetState() == mesos.TASK_KILLED || a.lossSeen {
		return 0, time.Time{}
	}
	a.lossSeen = true
	return b.backoff.Failed(t.agentID, b.clock.Now())
}

// unknownUser words a launch failure caused by a run-as user the agent does
// not know (minimesos: `user "x" does not exist`; Mesos: "Failed to get
// user information for 'x'"), or returns "".
func unknownUser(u *backend.StatusUpdate, user string) string {
	f := u.Failure
	if user == "" || f == nil || f.Kind != scheduler.LaunchFailed {
		return ""
	}
	m := f.Message
	if !strings.Contains(m, `user "`+user+`" does not exist`) && !strings.Contains(m, "user information for '"+user+"'") {
		return ""
	}
	return fmt.Sprintf("the executor's run-as user %q (flint.mesos.user) does not exist on the agent, so no task can run: %s", user, m)
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
//	FINISHED                               → FINISHED (no result data: FAILED, RESULT_LOST;
//	                                         a reconciliation answer's: LOST, EXECUTOR_LOST)
//	FAILED, ERROR, GONE                    → FAILED (counts towards flint.task.maxFailures)
//	KILLED                                 → KILLED
//	LOST, DROPPED, UNREACHABLE, UNKNOWN,
//	GONE_BY_OPERATOR                       → LOST, EXECUTOR_LOST (retried, not counted)
func translate(t *mtask, st mesos.TaskStatus) *backend.StatusUpdate {
	u := &backend.StatusUpdate{TaskID: t.flintID, Attempt: int(t.attempt), ExecutorID: t.execID}
	var ex flintpb.StatusUpdate
	fromExec := len(st.Data) > 0 && ex.Unmarshal(st.Data) == nil && ex.State != flintpb.TaskState_TASK_STATE_UNSPECIFIED &&
		(ex.TaskId == t.flintID || ex.TaskId == 0)
	var exu *backend.StatusUpdate
	if fromExec {
		exu = flintconv.StatusUpdate(&ex)
		u.Metrics = exu.Metrics
	}
	why := describe(st)
	switch st.GetState() {
	case mesos.TASK_FINISHED:
		if fromExec && exu.State == scheduler.Finished && ex.Result != nil {
			u.State, u.Result, u.Indirect = scheduler.Finished, exu.Result, exu.Indirect
			return u
		}
		if reconciled(st) {
			u.State = scheduler.Lost
			u.Failure = &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: "fine: " + why +
				" (the master's reconciliation answer: the executor's update with the result was held by a partition or a master failover; retried)"}
			break
		}
		u.State = scheduler.Failed
		u.Failure = &scheduler.Failure{Kind: scheduler.ResultLost, Message: "fine: " + why + " without a result"}
	case mesos.TASK_KILLED:
		u.State = scheduler.KilledState
		u.Failure = &scheduler.Failure{Kind: scheduler.Killed, Message: "fine: " + why}
	case mesos.TASK_ERROR:
		if staleExecutorRefusal(st) {
			u.State = scheduler.Lost
			u.Failure = &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: "fine: " + why +
				" (the executor the task named had exited when the master validated it, so the task had to bring the executor's resources too; retried)"}
			break
		}
		fallthrough
	case mesos.TASK_FAILED, mesos.TASK_GONE:
		u.State = scheduler.Failed
		kind := scheduler.Exception
		switch st.GetReason() {
		case mesos.REASON_CONTAINER_LAUNCH_FAILED, mesos.REASON_TASK_INVALID, mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT:
			kind = scheduler.LaunchFailed
		}
		u.Failure = &scheduler.Failure{Kind: kind, Message: "fine: " + why}
	default: // LOST, DROPPED, UNREACHABLE, UNKNOWN, GONE_BY_OPERATOR
		u.State = scheduler.Lost
		u.Failure = &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: "fine: " + why}
	}
	if fromExec && exu.Failure != nil && exu.State == u.State {
		u.Failure, u.FetchFailed = exu.Failure, exu.FetchFailed
	}
	return u
}

// reconciled reports the master's answer to a reconciliation (Mesos'
// "Reconciliation: Latest task state"): it carries the state of the
// task's last update the framework has not acknowledged, but none of
// that update's data. A FINISHED answer means the result exists on an
// update the partition or failover held, which may still come or may be
// lost with its agent: the attempt ends as lost (retried, not counted
// against flint.task.maxFailures, as a partition is no fault of the
// task), and the late update is dropped as the ended attempt's.
func reconciled(st mesos.TaskStatus) bool {
	return st.GetSource() == mesos.SOURCE_MASTER && st.GetReason() == mesos.REASON_RECONCILIATION
}

// respawnRefused reports a task placed on an executor already started
// whose agent failed to launch the executor (CONTAINER_LAUNCH_FAILED): it
// had exited, and the agent started it again for the task.
func respawnRefused(t *mtask, st mesos.TaskStatus) bool {
	return t.reused && st.GetState() == mesos.TASK_FAILED && st.GetReason() == mesos.REASON_CONTAINER_LAUNCH_FAILED &&
		st.GetSource() == mesos.SOURCE_AGENT
}

// staleExecutorRefusal reports a launch the master refused because the
// task's resources and its executor's do not fit the offer: the task was
// placed beside a running executor (the offer listed it) that exited
// before the master validated the launch (Mesos' "Task uses more
// resources … than available …", REASON_TASK_INVALID). Placement gives
// a new executor's tasks room for it, so this is that race, not the
// task's fault: the task is lost and retried, not failed.
func staleExecutorRefusal(st mesos.TaskStatus) bool {
	return st.GetReason() == mesos.REASON_TASK_INVALID && st.GetSource() == mesos.SOURCE_MASTER &&
		strings.HasPrefix(st.GetMessage(), "Task uses more resources ")
}

// describe is a Mesos status in words: state, reason, source, agent,
// message; a dead executor's description (deathHandler) alone, since it
// says all of that.
func describe(st mesos.TaskStatus) string {
	if m := st.GetMessage(); strings.HasPrefix(m, deathPrefix(st.GetExecutorID().GetValue())) {
		return m
	}
	s := fmt.Sprintf("Mesos %s", st.GetState())
	if st.Reason != nil {
		s += " (" + st.Reason.String() + ")"
	}
	if st.Source != nil {
		s += " from " + st.Source.String()
	}
	if a := st.GetAgentID().GetValue(); a != "" {
		s += " on agent " + a
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
	if a := b.agents[agentID.Value]; a != nil {
		a.agentLost = true
	}
	h.executorGone(agentID.Value, "agent "+agentID.Value+" lost", true)
}

func (h handler) ExecutorLost(agentID mesos.AgentID, execID mesos.ExecutorID, status int) {
	h.b.log.WithField("agent", agentID.Value).Debugf("fine: executor %s %s", execID.Value, exitWords(status))
	if execID.Value == h.b.executorID(agentID.Value) {
		current := false
		if a := h.b.agents[agentID.Value]; a != nil {
			current = a.genUsed && a.lastExited == a.gen // not an older one, reported late
		}
		h.executorGone(agentID.Value, exitWords(status), current)
	}
}

// executorGone forgets an agent's executor. Its tasks end through their own
// Mesos updates (which Mesos guarantees); only an executor with no live
// task is reported lost to the driver, so a new executor under the same id
// never has its tasks failed by an old one's exit.
func (h handler) executorGone(agentID, why string, current bool) {
	b := h.b
	a := b.agents[agentID]
	report := a != nil && a.added && a.live == 0 && !b.stopping.Load()
	if a != nil {
		// the executor runs while a generation launched after the one
		// that exited does (exitOf took the exited one off launched; an
		// agent's loss clears them all): an older generation's FAILURE
		// arriving late left the running one unreleased and never shut
		// down (found by the simulation, seed 24)
		a.started = len(a.launched) > 0
		if current {
			a.exited = true
			if !report && a.added && a.live > 0 {
				a.goneWhy = why
			}
		}
		if report {
			a.added, a.reported = false, 0
			b.touch(agentID)
		}
	}
	if report {
		b.d.ExecutorLost(a.id, why, false)
	}
}

// reportGone reports an executor that went away with live tasks lost to
// the driver once the last of them ended (after its update), so that the
// driver forgets what it held — the map outputs it served above all: an
// agent's loss comes with no FAILURE of its executor, and without this
// the driver kept the lost executor's outputs registered and every
// reducer failed fetching them, one stage attempt per output.
func (b *Backend) reportGone(a *agentExec) {
	if a == nil || a.goneWhy == "" || a.live > 0 || a.started || !a.added || b.stopping.Load() {
		return
	}
	why := a.goneWhy
	a.goneWhy, a.added, a.reported = "", false, 0
	b.touch(b.agentOf(a.id))
	b.d.ExecutorLost(a.id, why, false)
}

func (h handler) Message(mesos.AgentID, mesos.ExecutorID, []byte) {}

func (h handler) Disconnected(err error) {
	h.b.held = map[string]*heldOffer{}
	h.b.resize(h.b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
	h.b.log.Warnf("fine: lost the Mesos master %s (%v); re-registering", h.b.master, err)
}

// Aborted fails the active jobs at once, naming why: no task can be
// launched any more, and jobs submitted later fail on the next tick
// instead of waiting for flint.mesos.noOfferFitTimeout.
func (h handler) Aborted(err error) {
	b := h.b
	reason := fmt.Sprintf("the Mesos master %s ended the framework: %v; no task can be launched", b.master, err)
	b.ended = reason
	b.log.Error("fine: " + reason)
	if !b.stopping.Load() {
		b.d.Abort(reason)
	}
}

// endUnknown kills a live task this driver does not know (reconciliation, or the agent
// retrying updates the dead driver never acknowledged) and shuts its executor down unless
// it is this driver's own: after a failover (flint.mesos.driver.frameworkId) the master's
// reconciliation reports the previous driver's tasks, whose executor holds that driver's
// settings and credentials. This driver's task and executor ids carry a tag of its own
// (mesosbackend.TaskIDPrefix), so its launches never wait for those executors to end.
// Reconciliation answers that came while Start waited for its subscription
// waited in the owner's inbox, so the connection is set.
func (b *Backend) endUnknown(st mesos.TaskStatus) {
	conn := b.conn
	if conn == nil {
		return // a unit test's backend: nothing to end it through
	}
	b.log.WithFields(logrus.Fields{"task": st.TaskID.Value, "agent": st.GetAgentID().GetValue()}).
		Infof("fine: killing task %s (%s on agent %s) and its executor: a previous driver of the framework launched it", st.TaskID.Value, st.GetState(), st.GetAgentID().GetValue())
	if err := conn.Kill(st.TaskID, st.AgentID); err != nil {
		b.log.Warnf("fine: kill task %s of a previous driver: %v", st.TaskID.Value, err)
	}
	if st.ExecutorID != nil && st.AgentID != nil && st.ExecutorID.Value != b.executorID(st.AgentID.Value) { // never this driver's own
		if err := conn.Shutdown(*st.ExecutorID, *st.AgentID); err != nil {
			b.log.Warnf("fine: shut down executor %s of a previous driver: %v", st.ExecutorID.Value, err)
		}
	}
}
