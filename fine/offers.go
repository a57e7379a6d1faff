package fine

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	fineexec "github.com/flint-mesos/flint/executor/fine"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// ExecutorIDPrefix starts every fine executor's id; the agent id follows.
const ExecutorIDPrefix = "flint-fine-"

func executorID(agentID string) string { return ExecutorIDPrefix + agentID }

func mesosTaskID(id uint64) string { return strconv.FormatUint(id, 10) }

// group is the offers of one agent in a launch round.
type group struct {
	agentID, host string
	offers        []mesos.Offer
	since         time.Time // oldest hold among the offers
	rest          mesos.Resources
	exec          *mesos.ExecutorInfo
	newExec       bool
	slots         int
	unfit         string
	capped        bool // fit, but flint.cores.max left no room
	tasks         []mesos.TaskInfo
	mtasks        []*mtask
	bytes         int // task data in tasks
}

// acceptBudget bounds the task data launched with one ACCEPT call: Mesos
// masters cap request bodies (minimesos at 16 MiB), so tasks with large
// inputs that would take a call past it wait for a later offer instead of
// making the whole call fail, again and again.
const acceptBudget = 12 << 20

// launchRound offers the held offers plus fresh ones to the driver as one
// WorkerOffer per agent, launches what it returns, and holds or declines
// the rest. Rounds are serialized, so an offer is never used twice.
func (b *Backend) launchRound(fresh []mesos.Offer) {
	b.round.Lock()
	defer b.round.Unlock()
	now := time.Now()
	b.mu.Lock()
	conn, stopping := b.conn, b.stopping
	var groups []*group
	byAgent := map[string]*group{}
	add := func(o mesos.Offer, since time.Time) {
		g := byAgent[o.AgentID.Value]
		if g == nil {
			g = &group{agentID: o.AgentID.Value, host: o.Hostname, since: since}
			byAgent[g.agentID] = g
			groups = append(groups, g)
		}
		g.offers = append(g.offers, o)
		g.rest = append(g.rest, o.Resources...)
		if since.Before(g.since) {
			g.since = since
		}
	}
	for id, h := range b.held {
		delete(b.held, id)
		add(h.offer, h.since)
	}
	b.mu.Unlock()
	var declines = map[mesosconn.DeclineReason][]mesos.OfferID{}
	unmet := map[string]string{}
	for _, o := range fresh {
		if err := b.set.constraints.Check(o.Attributes); err != nil {
			why := fmt.Sprintf("flint.mesos.constraints %q unmet: %v", b.set.constraints.String(), err)
			b.log.Debugf("fine: offer %s from %s declined: %s", o.ID.Value, o.Hostname, why)
			declines[mesosconn.DeclineUnmetConstraint] = append(declines[mesosconn.DeclineUnmetConstraint], o.ID)
			unmet[agentName(o.AgentID.Value, o.Hostname)] = why
			continue
		}
		add(o, now)
	}
	if len(fresh) > 0 {
		b.mu.Lock()
		b.diag.offersSeen = true
		for a, why := range unmet {
			b.diag.unfit[a] = why
		}
		b.mu.Unlock()
	}
	if conn == nil {
		return
	}
	if stopping {
		for _, g := range groups {
			declines[mesosconn.DeclineShuttingDown] = append(declines[mesosconn.DeclineShuttingDown], offerIDs(g.offers)...)
		}
		b.decline(conn, declines)
		return
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].agentID < groups[j].agentID })
	wants := b.d.WantsOffers()
	if wants && len(groups) > 0 {
		b.assign(groups)
		b.noteFit(groups, now)
	}
	b.launch(conn, groups)
	b.holdOrDecline(groups, wants, now, declines)
	b.decline(conn, declines)
	b.updateDemand()
}

// assign asks the driver for tasks on the groups' WorkerOffers and turns
// them into TaskInfos.
func (b *Backend) assign(groups []*group) {
	var wos []scheduler.WorkerOffer
	byExec := map[string]*group{}
	b.mu.Lock()
	for _, g := range groups {
		b.sizeLocked(g)
	}
	b.capLocked(groups)
	for _, g := range groups {
		if g.slots > 0 {
			id := executorID(g.agentID)
			byExec[id] = g
			wos = append(wos, scheduler.WorkerOffer{ExecutorID: id, Host: g.host, Cores: g.slots * b.set.taskCPUs})
		}
	}
	b.mu.Unlock()
	if len(wos) == 0 {
		return
	}
	descs := b.d.ResourceOffers(wos)
	var dead, full []*flintpb.TaskDescription
	for _, td := range descs {
		g := byExec[td.ExecutorId]
		if g == nil {
			dead = append(dead, td)
			continue
		}
		cpus := int(td.Cpus)
		if cpus <= 0 {
			cpus = b.set.taskCPUs
		}
		taken, rest, ok := mesosconn.Take(g.rest, mesosconn.Want{CPUs: float64(cpus)})
		data, err := td.Marshal()
		if !ok || err != nil {
			dead = append(dead, td)
			continue
		}
		if len(g.tasks) > 0 && g.bytes+len(data) > acceptBudget {
			full = append(full, td)
			continue
		}
		g.rest, g.bytes = rest, g.bytes+len(data)
		g.tasks = append(g.tasks, mesos.TaskInfo{
			Name:   fmt.Sprintf("flint task %d (job %d stage %d index %d attempt %d)", td.TaskId, td.JobId, td.StageId, td.Index, td.Attempt),
			TaskID: mesos.TaskID{Value: mesosTaskID(td.TaskId)}, AgentID: mesos.AgentID{Value: g.agentID},
			Resources: taken, Executor: g.exec, Data: data,
		})
		g.mtasks = append(g.mtasks, &mtask{flintID: td.TaskId, attempt: td.Attempt, agentID: g.agentID, execID: td.ExecutorId, cpus: cpus})
	}
	b.reportLost(dead, "no offer of the backend matched the executor the driver chose")
	b.reportLost(full, fmt.Sprintf("the launch call for its offer already carries %d MiB of task data; it runs with a later offer", acceptBudget>>20))
}

// sizeLocked works out the executor and the task slots of a group: a new
// executor's own cpus and memory come out of the offers first.
func (b *Backend) sizeLocked(g *group) {
	id := executorID(g.agentID)
	known := false
	for _, o := range g.offers {
		for _, e := range o.ExecutorIDs {
			known = known || e.Value == id
		}
	}
	a := b.agents[g.agentID]
	if a == nil {
		a = &agentExec{id: id, host: g.host}
		b.agents[g.agentID] = a
	}
	if known && a.info != nil {
		g.exec = a.info
	} else {
		cpus, mem := mesosconn.Scalar(g.rest, "cpus"), mesosconn.Scalar(g.rest, "mem")
		var short []string
		if need := b.set.execCPUs + float64(b.set.taskCPUs); cpus+1e-9 < need {
			short = append(short, fmt.Sprintf("cpus %s < %s needed (flint.task.cpus + flint.mesos.mesosExecutor.cores)", cpuString(cpus), cpuString(need)))
		}
		if mem+1e-9 < b.set.execMemMB {
			short = append(short, fmt.Sprintf("mem %g MiB < %g MiB needed (flint.executor.memory + flint.mesos.executor.memoryOverhead)", mem, b.set.execMemMB))
		}
		if len(short) > 0 {
			g.unfit = strings.Join(short, ", ")
			return
		}
		taken, rest, ok := mesosconn.Take(g.rest, mesosconn.Want{CPUs: b.set.execCPUs, MemMB: b.set.execMemMB})
		if !ok {
			g.unfit = fmt.Sprintf("resources %s cannot cover the executor (cpus %g, mem %g MiB)", g.rest.String(), b.set.execCPUs, b.set.execMemMB)
			return
		}
		g.rest, g.newExec = rest, true
		g.exec = b.executorInfo(id, taken)
		a.info = g.exec
	}
	g.slots = int(math.Floor(mesosconn.Scalar(g.rest, "cpus")+1e-9)) / b.set.taskCPUs
	a.cpus = g.slots * b.set.taskCPUs
	if g.slots == 0 {
		g.unfit = fmt.Sprintf("cpus %s < %d needed (flint.task.cpus) beside the running executor", cpuString(mesosconn.Scalar(g.rest, "cpus")), b.set.taskCPUs)
	}
}

// cpuString prints cpus with at least one decimal ("1.0", "2.1", "0.25").
func cpuString(v float64) string {
	s := strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func agentName(id, host string) string { return fmt.Sprintf("agent %s (%s)", id, host) }

// heldCPUsLocked is what the application holds: its live tasks' cpus and
// the running executors' own cpus.
func (b *Backend) heldCPUsLocked() float64 {
	held := 0.0
	for _, t := range b.tasks {
		held += float64(t.cpus)
	}
	for _, a := range b.agents {
		if a.added {
			held += b.set.execCPUs
		}
	}
	return held
}

// capLocked cuts the groups' slots so that the cpus of live tasks and
// executors plus those offered now stay within flint.cores.max: one slot
// per group in turn, a new executor's own cpus charged with its first
// slot.
func (b *Backend) capLocked(groups []*group) {
	if math.IsInf(b.set.coresMax, 1) {
		return
	}
	room := b.set.coresMax - b.heldCPUsLocked()
	allowed := make([]int, len(groups))
	for progress := true; progress; {
		progress = false
		for i, g := range groups {
			if allowed[i] >= g.slots {
				continue
			}
			cost := float64(b.set.taskCPUs)
			if g.newExec && allowed[i] == 0 {
				cost += b.set.execCPUs
			}
			if cost > room+1e-9 {
				continue
			}
			room -= cost
			allowed[i]++
			progress = true
		}
	}
	for i, g := range groups {
		if allowed[i] < g.slots {
			if allowed[i] == 0 {
				g.capped = true
			}
			g.slots = allowed[i]
		}
	}
}

// noteFit records, for the no-fit error, whether any offer could hold a
// task this round and why the others could not.
func (b *Backend) noteFit(groups []*group, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range groups {
		name := agentName(g.agentID, g.host)
		switch {
		case g.slots > 0 || len(g.tasks) > 0:
			b.diag.lastFit = now
			delete(b.diag.unfit, name)
		case g.capped:
			b.diag.unfit[name] = fmt.Sprintf("flint.cores.max=%d reached (%s cpus held by tasks and executors)", int(b.set.coresMax), cpuString(b.heldCPUsLocked()))
		case g.unfit != "":
			b.diag.unfit[name] = g.unfit
		}
	}
}

// checkNoFit fails the waiting jobs when, for flint.mesos.fine.noFitTimeout,
// tasks have waited with none of the application's tasks live and no offer
// that could hold one, naming what the offers lacked — instead of a silent
// hang.
func (b *Backend) checkNoFit(now time.Time) {
	wants := b.d.WantsOffers()
	b.mu.Lock()
	if !wants || len(b.tasks) > 0 || b.stopping {
		b.diag.waitSince = time.Time{}
		b.mu.Unlock()
		return
	}
	if b.diag.waitSince.IsZero() {
		b.diag.waitSince = now
	}
	since := b.diag.waitSince
	if b.diag.lastFit.After(since) {
		since = b.diag.lastFit
	}
	waited := now.Sub(since)
	if waited < b.set.noFitTimeout {
		b.mu.Unlock()
		return
	}
	var why string
	switch {
	case len(b.diag.unfit) > 0:
		parts := make([]string, 0, len(b.diag.unfit))
		for a, u := range b.diag.unfit {
			parts = append(parts, a+": "+u)
		}
		sort.Strings(parts)
		why = "offers did not fit: " + strings.Join(parts, "; ")
	case !b.diag.offersSeen:
		why = fmt.Sprintf("no offer received from the Mesos master %s (are agents registered with free resources for role(s) %q?)", b.master, b.p.Config.String("flint.mesos.role"))
	default:
		why = "no offer arrived while the tasks waited"
	}
	reason := fmt.Sprintf("tasks waited %s (flint.mesos.fine.noFitTimeout) and no offer fits a task: %s", waited.Round(time.Millisecond), why)
	b.diag.waitSince = time.Time{}
	b.mu.Unlock()
	b.log.Error("fine: " + reason)
	b.d.Abort(reason)
}

// launch sends each group's tasks in one ACCEPT of its offers.
func (b *Backend) launch(conn *mesosconn.Conn, groups []*group) {
	for _, g := range groups {
		if len(g.tasks) == 0 {
			continue
		}
		b.mu.Lock()
		a := b.agents[g.agentID]
		for _, t := range g.mtasks {
			b.tasks[mesosTaskID(t.flintID)] = t
		}
		a.live += len(g.mtasks)
		b.launched += uint64(len(g.mtasks))
		announce := !a.added
		a.added = true
		b.mu.Unlock()
		if announce {
			b.d.ExecutorAdded(a.id, g.host, a.cpus)
		}
		if g.newExec {
			b.log.WithFields(logrus.Fields{"executor": a.id, "agent": g.agentID}).Infof(
				"fine: starting executor %s on %s with %d task(s), binary %s", a.id, g.host, len(g.tasks), b.exeLog)
		}
		if err := conn.Launch(offerIDs(g.offers), g.tasks); err != nil {
			b.log.Warnf("fine: launch %d task(s) on %s: %v", len(g.tasks), g.host, err)
			b.mu.Lock()
			var dead []*flintpb.TaskDescription
			for _, t := range g.mtasks {
				if b.tasks[mesosTaskID(t.flintID)] == t {
					delete(b.tasks, mesosTaskID(t.flintID))
					a.live--
					dead = append(dead, &flintpb.TaskDescription{TaskId: t.flintID, Attempt: t.attempt, ExecutorId: t.execID})
				}
			}
			b.mu.Unlock()
			b.reportLost(dead, "the launch call failed: "+err.Error())
		}
	}
}

// holdOrDecline keeps unused offers for flint.mesos.fine.offerHoldTime and
// declines them after that.
func (b *Backend) holdOrDecline(groups []*group, wants bool, now time.Time, declines map[mesosconn.DeclineReason][]mesos.OfferID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range groups {
		if len(g.tasks) > 0 {
			continue
		}
		if g.unfit != "" {
			b.log.Debugf("fine: offers from %s do not fit: %s", g.host, g.unfit)
			declines[mesosconn.DeclineUnfit] = append(declines[mesosconn.DeclineUnfit], offerIDs(g.offers)...)
			continue
		}
		if now.Sub(g.since) < b.set.holdTime {
			for _, o := range g.offers {
				b.held[o.ID.Value] = &heldOffer{offer: o, since: g.since}
			}
			continue
		}
		reason := mesosconn.DeclineNoDemand
		switch {
		case wants && g.capped:
			reason = mesosconn.DeclineReachedMaxCores
		case wants:
			reason = mesosconn.DeclineUnfit
		}
		declines[reason] = append(declines[reason], offerIDs(g.offers)...)
	}
}

func (b *Backend) decline(conn *mesosconn.Conn, declines map[mesosconn.DeclineReason][]mesos.OfferID) {
	for reason, ids := range declines {
		if err := conn.Decline(ids, reason); err != nil {
			b.log.Debugf("fine: decline %d offer(s) (%s): %v", len(ids), reason, err)
		}
	}
}

// declineHeld declines held offers that match.
func (b *Backend) declineHeld(match func(*heldOffer) bool, reason mesosconn.DeclineReason) {
	b.mu.Lock()
	conn := b.conn
	var ids []mesos.OfferID
	for id, h := range b.held {
		if match(h) {
			ids = append(ids, h.offer.ID)
			delete(b.held, id)
		}
	}
	b.mu.Unlock()
	if conn != nil && len(ids) > 0 {
		b.decline(conn, map[mesosconn.DeclineReason][]mesos.OfferID{reason: ids})
	}
}

// executorInfo is the per-agent executor: the Flint binary in the
// fine-executor role, with Settings in its data.
func (b *Backend) executorInfo(id string, res mesos.Resources) *mesos.ExecutorInfo {
	yes, no := true, false
	uris := []mesos.CommandInfo_URI{{Value: b.exeURI, Executable: &yes, Extract: &no, Cache: &yes}}
	if b.set.executorURI != "" && driverside.IsArchive(b.set.executorURI) {
		uris[0].Executable, uris[0].Extract = &no, &yes
	}
	for _, u := range b.set.extraURIs {
		uris = append(uris, mesos.CommandInfo_URI{Value: u})
	}
	cmd, name, source := b.set.command, "flint fine executor", "flint"
	return &mesos.ExecutorInfo{
		Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: id}, Name: &name,
		Source: &source, Resources: res, Data: b.settingsData(id),
		Command: &mesos.CommandInfo{URIs: uris, Shell: &no, Value: &cmd, Arguments: []string{cmd},
			Environment: &mesos.Environment{Variables: b.environment()}},
	}
}

// settingsData is executor id's Settings; its result server secret is the
// executor's own (resultSecret), not the application's.
func (b *Backend) settingsData(id string) []byte {
	data, err := fineexec.Settings{
		TaskCPUs: b.set.taskCPUs, MaxResultSize: b.set.maxResultSize, MaxDirectResultSize: b.set.maxDirectResult,
		Secret: resultSecret(b.secret, id), DriverHost: b.driverHost, IdleTimeout: b.set.idleTimeout,
		LogLevel: b.set.logLevel, LogFormat: b.set.logFormat, DriverID: b.frameworkID, TLS: b.set.tls,
	}.Encode()
	if err != nil {
		panic("fine: settings built from validated configuration are invalid: " + err.Error())
	}
	return data
}

// environment is flint.executorEnv.* plus what the executor needs (which wins).
func (b *Backend) environment() []mesos.Environment_Variable {
	env := map[string]string{}
	for k, v := range b.set.env {
		env[k] = v
	}
	env["FLINT_ROLE"] = fineexec.Role
	env["FLINT_USER"] = b.user
	env[fineexec.EnvLogLevel] = b.set.logLevel
	env[fineexec.EnvLogFormat] = b.set.logFormat
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vars := make([]mesos.Environment_Variable, 0, len(keys))
	for _, k := range keys {
		v := env[k]
		vars = append(vars, mesos.Environment_Variable{Name: k, Value: &v})
	}
	return vars
}

func offerIDs(os []mesos.Offer) []mesos.OfferID {
	ids := make([]mesos.OfferID, len(os))
	for i, o := range os {
		ids[i] = o.ID
	}
	return ids
}

// reportLost tells the driver that tasks it chose never reached Mesos.
func (b *Backend) reportLost(dead []*flintpb.TaskDescription, why string) {
	for _, td := range dead {
		b.d.StatusUpdate(&flintpb.StatusUpdate{TaskId: td.TaskId, Attempt: td.Attempt, ExecutorId: td.ExecutorId,
			State: flintpb.TaskState_TASK_LOST, TimestampUnixNano: time.Now().UnixNano(),
			Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_EXECUTOR_LOST, Message: fmt.Sprintf("fine: task %d not launched: %s", td.TaskId, why)}})
	}
}

// updateDemand asks Mesos for offers while the driver has tasks waiting.
func (b *Backend) updateDemand() {
	b.mu.Lock()
	conn, stopping := b.conn, b.stopping
	b.mu.Unlock()
	if conn != nil {
		conn.SetDemand(!stopping && b.d.WantsOffers())
	}
}

// loop uses held offers when the driver has new tasks and declines held
// offers whose hold time passed.
func (b *Backend) loop() {
	defer close(b.loopDone)
	every := min(max(b.set.holdTime/4, 10*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stopCh:
			return
		case <-b.wake:
			b.launchRound(nil)
		case now := <-t.C:
			b.checkNoFit(now)
			if b.d.WantsOffers() {
				// Re-offer held offers: locality waits expire without new events.
				b.launchRound(nil)
				continue
			}
			b.round.Lock()
			b.declineHeld(func(h *heldOffer) bool { return now.Sub(h.since) >= b.set.holdTime }, mesosconn.DeclineNoDemand)
			b.round.Unlock()
			b.updateDemand()
		}
	}
}
