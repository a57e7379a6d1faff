package coarse

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// handler handles the Mesos connection's events on the owner goroutine
// (inlet queues them there; Start handles those of the subscription, with
// the connection set).
type handler struct{ b *Backend }

var _ mesosconn.Handler = handler{}

func (h handler) Subscribed(id string, m mesos.MasterInfo, re bool) {
	b := h.b
	b.frameworkID = id
	addr := mesosconn.MasterAddr(m)
	if re {
		b.log.WithField("framework", id).Infof("coarse: re-registered with the Mesos master at %s as framework %s", addr, id)
		return
	}
	b.log.WithField("framework", id).Infof("coarse: registered with the Mesos master at %s as framework %s", addr, id)
}

func (h handler) Offers(offers []mesos.Offer) {
	b := h.b
	conn := b.conn
	prefs := b.demand.HostPrefs
	p := b.planOffers(offers, prefs, b.clock.Now())
	for _, id := range p.offers {
		tasks := p.launches[id]
		if err := conn.Launch([]mesos.OfferID{id}, tasks); err != nil {
			b.log.Warnf("coarse: launch %d executor(s) on offer %s: %v", len(tasks), id.Value, err)
			b.forgetLaunch(tasks)
		}
	}
	for _, e := range p.execs {
		b.log.WithFields(logrus.Fields{"executor": e.id, "agent": e.agentID}).Debugf(
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
	for _, t := range tasks {
		if e := b.execs[t.TaskID.Value]; e != nil {
			b.remove(e)
		}
	}
}

// remove forgets an executor whose Mesos task ended.
func (b *Backend) remove(e *executor) {
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
		b.killUnknown(st)
		return
	}
	e := b.execs[st.TaskID.Value]
	if e == nil {
		return
	}
	b.remove(e)
	why := fmt.Sprintf("Mesos task %s: %s", st.GetState(), st.GetMessage())
	if st.Reason != nil {
		why += " (" + st.Reason.String() + ")"
	}
	report := !e.lost && !b.stopping
	e.lost = true
	failed := !e.stopRequested && !b.stopping && st.GetState() != mesos.TASK_KILLED && !launchbackoff.InfrastructureLoss(st)
	excluded := false
	if failed {
		b.diag.lastFailure = fmt.Sprintf("executor %s on %s: %s", e.id, e.host, why)
		excluded = b.fails.fail(e.agentID, why, b.clock.Now())
	}
	registered := e.registered
	var refused int
	var next time.Time
	if !registered && !failed && !e.stopRequested && !b.stopping && st.GetState() != mesos.TASK_KILLED {
		// The launch was lost to the infrastructure (a refused or stale
		// offer, an agent or master losing track of it) before the executor
		// came up: it does not count toward excluding the agent, but further
		// launches there back off. Failures the executor caused count toward
		// exclusion instead (flint.mesos.executor.maxFailuresPerAgent).
		refused, next = b.backoff.Failed(e.agentID, b.clock.Now())
	}
	fields := logrus.Fields{"executor": e.id, "agent": e.agentID}
	if refused > 0 {
		b.log.WithFields(fields).Warnf("coarse: %d launch(es) in a row on agent %s (%s) lost before the executor registered (%s); the next launch there waits until %s",
			refused, e.agentID, e.host, why, next.Format(time.RFC3339Nano))
	}
	if failed {
		b.log.WithFields(fields).Debugf("coarse: executor %s on %s ended: %s", e.id, e.host, why) // the driver reports it as lost
	} else {
		b.log.WithFields(fields).Debugf("coarse: executor %s on %s ended: %s", e.id, e.host, why)
	}
	if excluded {
		b.log.WithFields(fields).Warnf("coarse: agent %s (%s) excluded for %s after %d executor failures", e.agentID, e.host, b.set.agentExclusion, b.set.maxAgentFailures)
	}
	if reason := mesosbackend.Unauthorized(st, b.set.Executor.TaskUser(b.user)); reason != "" && report {
		b.log.Error("coarse: " + reason)
		b.d.Abort(reason)
	}
	b.mesosEnded(e, st, report, exitCausedByApp(&st)) // with its stderr (death.go)
	if registered {
		// The process may outlive its Mesos task (agent removed): stop it.
		_ = b.gw.StopExecutor(e.id, "its Mesos task ended: "+why)
	}
	b.updateDemand()
}

func (h handler) AgentLost(agentID mesos.AgentID) {
	delete(h.b.diag.agents, agentID.Value) // it offers nothing any more
	h.b.log.WithField("agent", agentID.Value).Warnf("coarse: agent %s lost; its executors' tasks are reported lost by Mesos", agentID.Value)
}

func (h handler) ExecutorLost(agentID mesos.AgentID, executorID mesos.ExecutorID, status int) {
	h.b.log.WithField("agent", agentID.Value).Debugf("coarse: Mesos executor %s exited with status %d", executorID.Value, status)
}

func (h handler) Message(mesos.AgentID, mesos.ExecutorID, []byte) {}

func (h handler) Disconnected(err error) {
	h.b.log.Warnf("coarse: lost the Mesos master %s (%v); re-registering", h.b.master, err)
}

// Aborted fails the active jobs at once, naming why: no executor can start
// any more (issue 11's fail-fast), and jobs submitted later fail on the next
// tick instead of waiting for flint.mesos.noOfferFitTimeout.
func (h handler) Aborted(err error) {
	b := h.b
	reason := fmt.Sprintf("the Mesos master %s ended the framework: %v; no executor can start", b.master, err)
	b.ended = reason
	b.log.Error("coarse: " + reason)
	if !b.stopping {
		b.d.Abort(reason)
	}
}

// gatewayEvents handles what executors report over the gateway, on the
// owner goroutine (gwInlet queues it there).
type gatewayEvents struct{ b *Backend }

var _ gateway.Events = gatewayEvents{}

func (g gatewayEvents) ExecutorRegistered(info gateway.ExecutorInfo) {
	b := g.b
	e := b.execs[info.ID]
	why := unwanted(e, b.stopping)
	if why == "" {
		e.registered = true
		b.backoff.Registered(e.agentID)
		if info.Host != "" {
			e.host = info.Host
		}
	} else {
		log := b.log.WithField("executor", info.ID)
		if b.stopping {
			// a job can end before every executor it asked for registered
			log.Debugf("coarse: executor %s registered while the driver stops; stopping it", info.ID)
		} else {
			log.Warnf("coarse: executor %s registered but %s; stopping it", info.ID, why)
		}
		_ = b.gw.StopExecutor(info.ID, "not wanted by the driver: "+why)
		return
	}
	b.log.WithFields(logrus.Fields{"executor": e.id, "agent": e.agentID}).Debugf(
		"coarse: executor %s registered from %s (pid %d) with %d cores", e.id, info.Addr, info.PID, e.cores)
	b.d.ExecutorUp(e.id, e.host, e.cores)
}

// unwanted says why executor e, registering, is not wanted ("" if it is).
func unwanted(e *executor, stopping bool) string {
	switch {
	case stopping:
		return "the driver is stopping"
	case e == nil:
		return "this driver did not launch it"
	case e.lost:
		return "it was already given up as lost"
	case e.registered:
		return "it had already registered"
	}
	return ""
}

// StatusUpdate goes to the driver loop, which frees the task's cores on
// its terminal update (gwInlet drops RUNNING, which the loop ignores) —
// unless its executor was reported lost already: the driver ended that
// executor's tasks with it, and an update sent before it died that comes
// after its Mesos status (another way round the network) would end an
// attempt twice, or register a lost executor's map output.
func (g gatewayEvents) StatusUpdate(u *flintpb.StatusUpdate) {
	if e := g.b.execs[u.ExecutorId]; e == nil || e.lost {
		g.b.log.WithField("executor", u.ExecutorId).Debugf("coarse: dropped task %d's %s from executor %s, reported lost before", u.TaskId, u.State, u.ExecutorId)
		return
	}
	g.b.d.StatusUpdate(flintconv.StatusUpdate(u))
}

func (g gatewayEvents) ExecutorLost(executorID, reason string) {
	b := g.b
	e := b.execs[executorID]
	if e == nil || e.lost || b.stopping {
		return
	}
	e.lost = true
	// Reported with its Mesos status and stderr; killed if it outlives its
	// stream (not trusted again) — death.go.
	b.streamBroke(e, reason)
	b.updateDemand()
}

// applyBatch carries out a batch of the driver loop on the owner. Kills,
// releases and launches are queued on the executors' streams in the
// batch's order (the gateway sends each stream's messages in the order
// queued, without blocking), so a kill never overtakes its launch.
func (b *Backend) applyBatch(batch *backend.Batch) {
	for _, k := range batch.Kills {
		b.kill(k.TaskID, k.ExecutorID, k.Reason)
	}
	for _, r := range batch.Releases {
		b.gw.ReleaseResult(r.ExecutorID, r.BlockID)
	}
	if len(batch.ShuffleReleases) > 0 {
		b.releaseShuffles(batch.ShuffleReleases)
	}
	if len(batch.Launches) > 0 {
		b.launch(flintconv.TaskDescriptions(batch.Launches))
	}
	if len(batch.ShuffleServices) > 0 {
		if b.svcs == nil {
			b.svcs = mesosbackend.NewShuffleServices(b.secret, b.set.heartbeat, "coarse", b.log)
		}
		b.svcs.Add(batch.ShuffleServices)
	}
	if batch.Tick && b.svcs != nil {
		b.svcs.Tick(batch.Now)
	}
	if batch.Allocation != nil {
		b.applyAllocation(batch.Allocation)
	}
	if batch.Demand != nil {
		b.demand = *batch.Demand
	}
	if batch.Tick {
		b.checkNoExecutor(batch.Now)
	}
}

// releaseShuffles sends the releases to every registered executor that is
// not lost, and to the agents' shuffle services, which hold the files of
// executors that are gone (a lost executor without a service took its
// files with it).
func (b *Backend) releaseShuffles(rs []backend.ShuffleRelease) {
	if b.svcs != nil {
		b.svcs.Release(rs)
	}
	for _, id := range slices.Sorted(maps.Keys(b.execs)) {
		if e := b.execs[id]; !e.registered || e.lost {
			continue
		}
		for _, r := range rs {
			b.gw.ReleaseShuffle(id, r.Namespace, r.ShuffleID, r.All)
		}
	}
}

// launch sends the tasks the driver placed, one hand-off per executor so
// that its launches travel in one message.
func (b *Backend) launch(descs []*flintpb.TaskDescription) {
	var dead []*flintpb.TaskDescription
	byExec := map[string][]*flintpb.TaskDescription{}
	var order []string
	for _, td := range descs {
		if e := b.execs[td.ExecutorId]; e == nil || e.lost {
			dead = append(dead, td)
			continue
		}
		if _, ok := byExec[td.ExecutorId]; !ok {
			order = append(order, td.ExecutorId)
		}
		byExec[td.ExecutorId] = append(byExec[td.ExecutorId], td)
	}
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
		b.d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskId, Attempt: int(td.Attempt), ExecutorID: td.ExecutorId,
			State: scheduler.Lost, Failure: &scheduler.Failure{Kind: scheduler.ExecutorLost,
				Message: fmt.Sprintf("executor %s went away before task %d reached it", td.ExecutorId, td.TaskId)}})
		lost[td.ExecutorId] = true
	}
	for id := range lost {
		b.d.ExecutorLost(id, "went away while tasks were being launched", false)
	}
}

// updateDemand asks Mesos for offers while more executors are wanted.
func (b *Backend) updateDemand() {
	if b.conn != nil {
		b.conn.SetDemand(b.wantMore())
	}
}

// checkNoExecutor fails the waiting jobs when, for
// flint.mesos.noOfferFitTimeout, tasks have waited while no executor
// could be started, naming what the offers lacked — instead of a silent hang.
func (b *Backend) checkNoExecutor(now time.Time) {
	if b.ended != "" && b.demand.Waiting && !b.stopping {
		b.d.Abort(b.ended)
		return
	}
	if !b.demand.Waiting || b.live() > 0 || b.stopping {
		b.diag.waitSince = time.Time{}
		return
	}
	if b.diag.waitSince.IsZero() {
		b.diag.waitSince = now
		return
	}
	waited := now.Sub(b.diag.waitSince)
	if waited < b.set.NoFit {
		if excluded := b.allExcluded(now, b.diag.waitSince.Add(b.set.NoFit)); excluded != "" {
			// Nothing can start before the timeout: say so now.
			reason := "no executor can start: every agent that offered resources is excluded, and no exclusion ends before " + b.set.NoFitKey + ": " + excluded
			if last := b.diag.lastFailure; last != "" {
				reason += "; last executor failure: " + last
			}
			b.log.Error("coarse: " + reason)
			b.d.Abort(reason)
		}
		return
	}
	reason := fmt.Sprintf("tasks waited %s (%s) and no executor could be started: %s",
		waited.Round(time.Second), b.set.NoFitKey, b.explain())
	b.diag.waitSince = time.Time{}
	b.log.Error("coarse: " + reason)
	b.d.Abort(reason)
}

// allExcluded lists the agents' exclusions when every agent seen in
// offers is excluded until deadline or later ("" otherwise).
func (b *Backend) allExcluded(now, deadline time.Time) string {
	if len(b.diag.agents) == 0 {
		return ""
	}
	ex := b.fails.exclusions(now)
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(b.diag.agents)) {
		e, ok := ex[id]
		if !ok || e.Until.Before(deadline) {
			return ""
		}
		parts = append(parts, fmt.Sprintf("agent %s (%s) excluded until %s after %d executor failures (last: %s)",
			id, b.diag.agents[id], e.Until.Format(time.RFC3339), e.Failures, e.Last))
	}
	return strings.Join(parts, "; ")
}

// killUnknown kills a live executor task this driver did not launch: after a failover
// (flint.mesos.driver.frameworkId) the master's reconciliation reports the previous driver's
// executors, which registered with a gateway that is gone and hold nothing this driver can use.
func (b *Backend) killUnknown(st mesos.TaskStatus) {
	if b.execs[st.TaskID.Value] != nil || b.stopping {
		return
	}
	b.log.WithFields(logrus.Fields{"task": st.TaskID.Value, "agent": st.GetAgentID().GetValue()}).
		Infof("coarse: killing executor %s (%s on agent %s): a previous driver of framework %s launched it", st.TaskID.Value, st.GetState(), st.GetAgentID().GetValue(), b.frameworkID)
	if err := b.conn.Kill(st.TaskID, st.AgentID); err != nil {
		b.log.WithField("task", st.TaskID.Value).Warnf("coarse: kill executor %s of a previous driver: %v", st.TaskID.Value, err)
	}
}
