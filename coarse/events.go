package coarse

import (
	"fmt"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/scheduler"
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
	b.mu.Unlock()
	addr := mesosconn.MasterAddr(m)
	if re {
		b.log.WithField("framework", id).Infof("coarse: re-registered with the Mesos master at %s as framework %s", addr, id)
		return
	}
	b.log.WithField("framework", id).Infof("coarse: registered with the Mesos master at %s as framework %s", addr, id)
}

func (h handler) Offers(offers []mesos.Offer) {
	b := h.b
	conn := b.ready()
	if conn == nil {
		return
	}
	prefs := b.d.PendingHostPreferences()
	b.mu.Lock()
	p := b.planLocked(offers, prefs, time.Now())
	b.mu.Unlock()
	for _, id := range p.offers {
		tasks := p.launches[id]
		if err := conn.Launch([]mesos.OfferID{id}, tasks); err != nil {
			b.log.Warnf("coarse: launch %d executor(s) on offer %s: %v", len(tasks), id.Value, err)
			b.forgetLaunch(tasks)
		}
	}
	for _, e := range p.execs {
		b.log.WithFields(logrus.Fields{"executor": e.id, "agent": e.agentID}).Infof(
			"coarse: launching executor %s on %s (agent %s): %d cores, %g MiB, %d GPUs, binary %s", e.id, e.host, e.agentID, e.cores, e.memMB, e.gpus, b.exeLog)
	}
	if p.deferred > 0 {
		b.log.Debugf("coarse: declined %d offer(s) to wait for the hosts pending tasks prefer (%v)", p.deferred, prefs)
	}
	for reason, ids := range p.declines {
		if err := conn.Decline(ids, reason); err != nil {
			b.log.Debugf("coarse: decline %d offer(s) (%s): %v", len(ids), reason, err)
		}
	}
	b.updateDemand()
}

// forgetLaunch drops executors whose launch call failed.
func (b *Backend) forgetLaunch(tasks []mesos.TaskInfo) {
	b.mu.Lock()
	for _, t := range tasks {
		if e := b.execs[t.TaskID.Value]; e != nil {
			b.removeLocked(e)
		}
	}
	b.mu.Unlock()
}

// removeLocked forgets an executor whose Mesos task ended.
func (b *Backend) removeLocked(e *executor) {
	delete(b.execs, e.id)
	b.cores -= e.cores
	b.gpus -= e.gpus
	close(b.exited)
	b.exited = make(chan struct{})
}

func (h handler) Rescinded(mesos.OfferID) {}

// Update handles the status of an executor's Mesos task.
func (h handler) Update(st mesos.TaskStatus) {
	b := h.b
	if !mesosconn.Terminal(st.GetState()) {
		return
	}
	b.mu.Lock()
	e := b.execs[st.TaskID.Value]
	if e == nil {
		b.mu.Unlock()
		return
	}
	b.removeLocked(e)
	why := fmt.Sprintf("Mesos task %s: %s", st.GetState(), st.GetMessage())
	if st.Reason != nil {
		why += " (" + st.Reason.String() + ")"
	}
	report := !e.lost && !b.stopping
	e.lost = true
	failed := !e.stopRequested && !b.stopping && st.GetState() != mesos.TASK_KILLED && !infrastructureLoss(st)
	excluded := false
	if failed {
		b.diag.lastFailure = fmt.Sprintf("executor %s on %s: %s", e.id, e.host, why)
		excluded = b.fails.fail(e.agentID, why, time.Now())
	}
	registered := e.registered
	b.mu.Unlock()
	fields := logrus.Fields{"executor": e.id, "agent": e.agentID}
	if failed {
		b.log.WithFields(fields).Warnf("coarse: executor %s on %s ended: %s", e.id, e.host, why)
	} else {
		b.log.WithFields(fields).Debugf("coarse: executor %s on %s ended: %s", e.id, e.host, why)
	}
	if excluded {
		b.log.WithFields(fields).Warnf("coarse: agent %s (%s) excluded for %s after %d executor failures", e.agentID, e.host, b.set.agentExclusion, b.set.maxAgentFailures)
	}
	if report {
		b.d.ExecutorLost(e.id, why, st.GetState() != mesos.TASK_LOST)
	}
	if registered {
		// The process may outlive its Mesos task (agent removed): stop it.
		_ = b.gw.StopExecutor(e.id, "its Mesos task ended: "+why)
	}
	b.updateDemand()
	b.ReviveOffers()
}

func (h handler) AgentLost(agentID mesos.AgentID) {
	h.b.log.WithField("agent", agentID.Value).Warnf("coarse: agent %s lost; its executors' tasks are reported lost by Mesos", agentID.Value)
}

func (h handler) ExecutorLost(agentID mesos.AgentID, executorID mesos.ExecutorID, status int) {
	h.b.log.WithField("agent", agentID.Value).Debugf("coarse: Mesos executor %s exited with status %d", executorID.Value, status)
}

func (h handler) Message(mesos.AgentID, mesos.ExecutorID, []byte) {}

func (h handler) Disconnected(err error) {
	h.b.log.Warnf("coarse: lost the Mesos master %s (%v); re-registering", h.b.master, err)
}

func (h handler) Aborted(err error) {
	h.b.log.Errorf("coarse: the Mesos master %s ended the framework: %v; no new executors can start", h.b.master, err)
}

// gatewayEvents receives what executors report over the gateway.
type gatewayEvents struct{ b *Backend }

var _ gateway.Events = gatewayEvents{}

func (g gatewayEvents) ExecutorRegistered(info gateway.ExecutorInfo) {
	b := g.b
	b.mu.Lock()
	e := b.execs[info.ID]
	ok := e != nil && !e.lost && !e.registered && !b.stopping
	if ok {
		e.registered = true
		e.free = e.cores
		if info.Host != "" {
			e.host = info.Host
		}
	}
	b.mu.Unlock()
	if !ok {
		b.log.WithField("executor", info.ID).Warnf("coarse: executor %s registered but is not wanted (unknown, lost, already registered or stopping); stopping it", info.ID)
		_ = b.gw.StopExecutor(info.ID, "not wanted by the driver")
		return
	}
	b.log.WithFields(logrus.Fields{"executor": e.id, "agent": e.agentID}).Infof(
		"coarse: executor %s registered from %s (pid %d) with %d cores", e.id, info.Addr, info.PID, e.cores)
	b.d.ExecutorAdded(e.id, e.host, e.cores)
	b.ReviveOffers()
}

func (g gatewayEvents) StatusUpdate(u *flintpb.StatusUpdate) {
	b := g.b
	terminal := u.State != flintpb.TaskState_TASK_RUNNING
	if terminal {
		b.mu.Lock()
		if e := b.execs[u.ExecutorId]; e != nil {
			if c, ok := e.tasks[u.TaskId]; ok {
				delete(e.tasks, u.TaskId)
				e.free += c
			}
		}
		b.mu.Unlock()
	}
	b.d.StatusUpdate(u)
	if terminal {
		b.ReviveOffers()
	}
}

func (g gatewayEvents) ExecutorLost(executorID, reason string) {
	b := g.b
	b.mu.Lock()
	e := b.execs[executorID]
	if e == nil || e.lost || b.stopping {
		b.mu.Unlock()
		return
	}
	e.lost = true
	b.mu.Unlock()
	b.d.ExecutorLost(executorID, reason, true)
	// An executor whose stream broke is not trusted again: end its process.
	b.killMesosTask(e)
	b.updateDemand()
}

// loop offers free executor slots to the driver: on ReviveOffers, after
// registrations and finished tasks (coalesced, so a burst of updates makes
// one round), and every reviveInterval.
func (b *Backend) loop() {
	defer close(b.loopDone)
	t := time.NewTicker(reviveInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stopCh:
			return
		case <-b.wake:
		case <-t.C:
			b.checkNoExecutor(time.Now())
		}
		b.offerSlots()
	}
}

// offerSlots runs one ResourceOffers round over the registered executors'
// free cores and sends the chosen tasks.
func (b *Backend) offerSlots() {
	if !b.d.WantsOffers() {
		return
	}
	b.mu.Lock()
	var offers []scheduler.WorkerOffer
	for _, e := range b.execs {
		if e.registered && !e.lost && e.free >= b.set.taskCPUs {
			offers = append(offers, scheduler.WorkerOffer{ExecutorID: e.id, Host: e.host, Cores: e.free})
		}
	}
	b.mu.Unlock()
	if len(offers) == 0 {
		return
	}
	sort.Slice(offers, func(i, j int) bool { return offers[i].ExecutorID < offers[j].ExecutorID })
	descs := b.d.ResourceOffers(offers)
	var dead []*flintpb.TaskDescription
	// One hand-off per executor, so that its launches travel in one message.
	byExec := make(map[string][]*flintpb.TaskDescription, len(offers))
	order := make([]string, 0, len(offers))
	b.mu.Lock()
	for _, td := range descs {
		e := b.execs[td.ExecutorId]
		if e == nil || e.lost {
			dead = append(dead, td)
			continue
		}
		e.tasks[td.TaskId] = int(td.Cpus)
		e.free -= int(td.Cpus)
		if _, ok := byExec[td.ExecutorId]; !ok {
			order = append(order, td.ExecutorId)
		}
		byExec[td.ExecutorId] = append(byExec[td.ExecutorId], td)
	}
	b.mu.Unlock()
	for _, id := range order {
		if err := b.gw.LaunchTasks(id, byExec[id]); err != nil {
			dead = append(dead, byExec[id]...)
		}
	}
	b.failLaunches(dead)
}

// failLaunches reports tasks sent to executors that went away meanwhile
// as lost, so the driver resubmits them.
func (b *Backend) failLaunches(dead []*flintpb.TaskDescription) {
	lost := map[string]bool{}
	for _, td := range dead {
		b.d.StatusUpdate(&flintpb.StatusUpdate{TaskId: td.TaskId, Attempt: td.Attempt, ExecutorId: td.ExecutorId,
			State: flintpb.TaskState_TASK_LOST, Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_EXECUTOR_LOST,
				Message: fmt.Sprintf("executor %s went away before task %d reached it", td.ExecutorId, td.TaskId)}})
		lost[td.ExecutorId] = true
	}
	for id := range lost {
		b.d.ExecutorLost(id, "went away while tasks were being launched", false)
	}
}

// updateDemand asks Mesos for offers while more executors are wanted.
func (b *Backend) updateDemand() {
	b.mu.Lock()
	want, conn := b.wantMoreLocked(), b.conn
	b.mu.Unlock()
	if conn != nil {
		conn.SetDemand(want)
	}
}

// checkNoExecutor fails the waiting jobs when, for
// flint.mesos.coarse.noExecutorTimeout, tasks have waited while no executor
// could be started, naming what the offers lacked — instead of a silent hang.
func (b *Backend) checkNoExecutor(now time.Time) {
	wants := b.d.WantsOffers()
	b.mu.Lock()
	if !wants || b.liveLocked() > 0 || b.stopping {
		b.diag.waitSince = time.Time{}
		b.mu.Unlock()
		return
	}
	if b.diag.waitSince.IsZero() {
		b.diag.waitSince = now
		b.mu.Unlock()
		return
	}
	waited := now.Sub(b.diag.waitSince)
	if waited < b.set.noExecutorTimeout {
		b.mu.Unlock()
		return
	}
	reason := fmt.Sprintf("tasks waited %s (flint.mesos.coarse.noExecutorTimeout) and no executor could be started: %s",
		waited.Round(time.Second), b.explainLocked())
	b.diag.waitSince = time.Time{}
	b.mu.Unlock()
	b.log.Error("coarse: " + reason)
	b.d.Abort(reason)
}

// infrastructureLoss reports a Mesos task end that says nothing about the
// executor or its agent's health (the master or an agent lost track of it,
// an offer went stale): it does not count toward excluding the agent.
func infrastructureLoss(st mesos.TaskStatus) bool {
	switch st.GetReason() {
	case mesos.REASON_RECONCILIATION, mesos.REASON_INVALID_OFFERS, mesos.REASON_MASTER_DISCONNECTED,
		mesos.REASON_AGENT_DISCONNECTED, mesos.REASON_AGENT_REMOVED, mesos.REASON_AGENT_REMOVED_BY_OPERATOR,
		mesos.REASON_AGENT_RESTARTED, mesos.REASON_AGENT_UNKNOWN, mesos.REASON_AGENT_REREGISTERED:
		return st.GetState() != mesos.TASK_FAILED && st.GetState() != mesos.TASK_ERROR
	}
	return false
}
