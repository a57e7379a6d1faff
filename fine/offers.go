package fine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// ExecutorIDPrefix starts every fine executor's id; the driver's id tag
// (mesosbackend.TaskIDPrefix: "" for a new framework) and the agent id follow.
const ExecutorIDPrefix = "flint-fine-"

// executorID is this driver's executor id on an agent. A driver taking over
// a framework (flint.mesos.driver.frameworkId) tags its ids, so that its
// executors never share an id with its predecessor's, which may still run
// (Mesos refuses an ExecutorInfo whose id a running executor has with other
// contents).
func (b *Backend) executorID(agentID string) string { return ExecutorIDPrefix + b.idPrefix + agentID }

// agentOf is the agent id in one of this driver's executor ids.
func (b *Backend) agentOf(execID string) string {
	return strings.TrimPrefix(execID, ExecutorIDPrefix+b.idPrefix)
}

// grantOwner owns the fetch credential of generation gen of executor id.
// An agent's executors share one id for the driver's life, but each new
// one fetches with a credential of its own, so ending an old executor's
// credential (on an update of one of its tasks, even one an agent retries
// late) never ends a newer one's.
func grantOwner(id string, gen int) string { return id + "#" + strconv.Itoa(gen) }

// mesosTaskID is the Mesos task id of Flint task id: the number, tagged as
// the executor ids are (a predecessor's live tasks have the plain numbers).
func (b *Backend) mesosTaskID(id uint64) string { return b.idPrefix + strconv.FormatUint(id, 10) }

// group is the offers of one agent in a launch round.
type group struct {
	agentID, host string
	offers        []mesos.Offer
	since         time.Time // oldest hold among the offers
	rest          mesos.Resources
	exec          *mesos.ExecutorInfo
	gen           int // the generation of exec (agentExec.gen)
	newExec       bool
	slots         int
	slot          []mesos.Resources // what each slot takes, in order (placement.AgentSlots.Slot)
	shortCPUs     float64           // cpus of the agent's last slot beside the executor's share (0: none)
	unfit         string
	filter        placement.Filtered // placement's reason for the group's unused offers
	capped        bool               // fit, but flint.cores.max left no room
	tasks         []mesos.TaskInfo
	mtasks        []*mtask
	bytes         int // task data in tasks
}

// acceptBudget bounds the task data launched with one ACCEPT call: Mesos
// masters cap request bodies (minimesos at 16 MiB), so tasks with large
// inputs that would take a call past it wait for a later offer instead of
// making the whole call fail, again and again.
const acceptBudget = 12 << 20

// offersIn holds fresh offers (declining those placement's checker chain
// filters: agents failing the constraints) and reports the agents' new
// capacity to the driver loop.
func (b *Backend) offersIn(fresh []mesos.Offer) {
	now := b.clock.Now()
	declines := map[mesosconn.DeclineReason][]mesos.OfferID{}
	offers := make([]placement.Offer, len(fresh))
	byID := make(map[string]mesos.Offer, len(fresh))
	for i := range fresh {
		offers[i] = placement.FromMesos(&fresh[i])
		byID[fresh[i].ID.Value] = fresh[i]
	}
	pass, unmet := placement.Admit(offers, placement.Checks{Constraints: b.set.Constraints, Now: now})
	for _, f := range unmet {
		b.log.Debugf("fine: offer %s from %s declined: %s", f.OfferID, f.Host, f.Detail)
		declines[mesosconn.DeclineUnmetConstraint] = append(declines[mesosconn.DeclineUnmetConstraint], byID[f.OfferID].ID)
		b.diag.unfit[agentName(f.AgentID, f.Host)] = f.Detail
	}
	for _, o := range pass {
		b.held[o.ID] = &heldOffer{offer: byID[o.ID], since: now}
	}
	if len(fresh) > 0 {
		b.diag.offersSeen = true
		b.diag.unmet = unmet
	}
	if b.conn == nil {
		return
	}
	b.shutdownPredecessors(fresh, now)
	b.resize(now, declines)
	b.decline(declines)
	b.updateDemand()
}

// groups groups the held offers by agent, sorted by agent id; the
// offers stay held.
func (b *Backend) groups() []*group {
	var groups []*group
	byAgent := map[string]*group{}
	for _, h := range b.held {
		o := h.offer
		g := byAgent[o.AgentID.Value]
		if g == nil {
			g = &group{agentID: o.AgentID.Value, host: o.Hostname, since: h.since}
			byAgent[g.agentID] = g
			groups = append(groups, g)
		}
		g.offers = append(g.offers, o)
		g.rest = append(g.rest, o.Resources...)
		if h.since.Before(g.since) {
			g.since = h.since
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].agentID < groups[j].agentID })
	for _, g := range groups {
		sort.Slice(g.offers, func(i, j int) bool { return g.offers[i].ID.Value < g.offers[j].ID.Value })
	}
	return groups
}

// resize works out what every agent's held offers can run, declines the
// offers that fit no task (or all of them, stopping), and reports each
// agent's executor capacity to the driver loop when it changed: its held
// task slots plus the cpus of its live tasks (so that the loop, which
// counts the cores of attempts it launched until their terminal update,
// sees the held slots free).
func (b *Backend) resize(now time.Time, declines map[mesosconn.DeclineReason][]mesos.OfferID) {
	groups := b.groups()
	if b.stopping.Load() {
		for _, g := range groups {
			declines[mesosconn.DeclineShuttingDown] = append(declines[mesosconn.DeclineShuttingDown], offerIDs(g.offers)...)
			b.unhold(g)
		}
		return
	}
	b.plan(groups, true)
	b.noteFit(groups, now)
	b.diag.filtered = b.diag.filtered[:0]
	for _, g := range groups {
		if g.filter.Reason != placement.Used {
			b.diag.filtered = append(b.diag.filtered, g.filter)
		}
	}
	slots := map[string]int{}
	for _, g := range groups {
		if g.unfit != "" {
			b.log.Debugf("fine: offers from %s do not fit: %s", g.host, g.unfit)
			declines[mesosconn.DeclineUnfit] = append(declines[mesosconn.DeclineUnfit], offerIDs(g.offers)...)
			b.unhold(g)
			continue
		}
		slots[g.agentID] = g.slots
	}
	b.reportCapacity(slots)
}

// reportCapacity tells the driver loop each agent's executor capacity
// that changed: its held task slots plus the cpus of its live tasks.
// Only agents whose capacity may have changed are looked at: those
// touched (live tasks or the last report changed) and those whose held
// offers have slots now or had at the last report.
func (b *Backend) reportCapacity(slots map[string]int) {
	for id := range slots {
		b.touch(id)
	}
	for id := range b.slotted {
		b.touch(id)
	}
	if b.slotted == nil {
		b.slotted = map[string]struct{}{}
	}
	clear(b.slotted)
	for id, n := range slots {
		if n > 0 {
			b.slotted[id] = struct{}{}
		}
	}
	ids := slices.Sorted(maps.Keys(b.dirty))
	clear(b.dirty)
	for _, id := range ids {
		a := b.agents[id]
		if a == nil {
			continue
		}
		c := slots[id]*b.set.taskCPUs + a.liveCPUs
		if c == a.reported && (a.added || c == 0) {
			continue
		}
		a.added, a.reported = true, c
		b.d.ExecutorUp(a.id, a.host, c)
	}
}

// touch marks an agent whose capacity may have changed for the next
// reportCapacity: its live tasks or its last report changed.
func (b *Backend) touch(agentID string) {
	if b.dirty == nil {
		b.dirty = map[string]struct{}{}
	}
	b.dirty[agentID] = struct{}{}
}

func (b *Backend) unhold(g *group) {
	for _, o := range g.offers {
		delete(b.held, o.ID.Value)
	}
}

// launchTasks launches the tasks the driver loop placed on the agents'
// held offers: one ACCEPT per agent with all its offers. A task whose
// agent's offers are gone meanwhile (declined, rescinded, used) is
// reported lost, after the agent's new capacity, so the driver retries it
// elsewhere without counting a failure.
func (b *Backend) launchTasks(descs []*flintpb.TaskDescription) {
	now := b.clock.Now()
	all := b.groups()
	byAgent := map[string]*group{}
	var groups []*group
	var dead, full []*flintpb.TaskDescription
	for _, td := range descs {
		agent := b.agentOf(td.ExecutorId)
		g := byAgent[agent]
		if g == nil {
			if i := slices.IndexFunc(all, func(g *group) bool { return g.agentID == agent }); i >= 0 && !b.stopping.Load() {
				g = all[i]
				// flint.cores.max is checked here, at the launch, against
				// what is live and what this call launches already: the
				// capacity the driver launched into may have been reported
				// by an earlier plan than another agent's (each agent's
				// capacity is a report of its own), and their sum may be
				// over the cap. A task without room is LOST and retried.
				b.planAt(g, pendingCPUs(groups, b.set.execCPUs))
				byAgent[agent] = g
				groups = append(groups, g)
			}
		}
		if g == nil || g.exec == nil {
			dead = append(dead, td)
			continue
		}
		switch b.addToAccept(g, td) {
		case noRoom:
			dead = append(dead, td)
		case overBudget:
			full = append(full, td)
		}
	}
	for _, g := range groups {
		if len(g.tasks) > 0 { // offers no task took stay held for the next plan
			b.unhold(g)
			b.register(g)
		}
	}
	declines := map[mesosconn.DeclineReason][]mesos.OfferID{}
	b.resize(now, declines)
	b.reportLost(dead, "no offer of the backend matched the executor the driver chose")
	b.reportLost(full, fmt.Sprintf("the launch call for its offer already carries %d MiB of task data; it runs with a later offer", acceptBudget>>20))
	if b.conn != nil {
		b.launch(groups)
		b.decline(declines)
	}
}

// addResult is whether a task joined its agent's ACCEPT.
type addResult int

const (
	added      addResult = iota
	noRoom               // its cpus are not in the offers (or it cannot be encoded)
	overBudget           // the call already carries acceptBudget of task data
)

// addToAccept adds a task to an agent's ACCEPT.
func (b *Backend) addToAccept(g *group, td *flintpb.TaskDescription) addResult {
	cpus := int(td.Cpus)
	if cpus <= 0 {
		cpus = b.set.taskCPUs
	}
	// The task takes the agent's next slot as placement planned it; the
	// last may be the cpus the executor's share leaves
	// (placement.AgentSlots.ShortCPUs). Placement plans slots of
	// flint.task.cpus, which is what the driver's tasks ask.
	ok := len(g.slot) > 0 && cpus == b.set.taskCPUs
	short := ok && len(g.slot) == 1 && g.shortCPUs > 0
	data, err := td.Marshal()
	if !ok || err != nil {
		return noRoom
	}
	if len(g.tasks) > 0 && g.bytes+len(data) > acceptBudget {
		return overBudget
	}
	taken := g.slot[0]
	g.slot, g.bytes = g.slot[1:], g.bytes+len(data)
	g.tasks = append(g.tasks, mesos.TaskInfo{
		Name:   fmt.Sprintf("flint task %d (job %d stage %d index %d attempt %d)", td.TaskId, td.JobId, td.StageId, td.Index, td.Attempt),
		TaskID: mesos.TaskID{Value: b.mesosTaskID(td.TaskId)}, AgentID: mesos.AgentID{Value: g.agentID},
		Resources: taken, Executor: g.exec, Data: data, Labels: b.set.Executor.TaskLabels(),
	})
	if short {
		g.shortCPUs = 0
	}
	g.mtasks = append(g.mtasks, &mtask{flintID: td.TaskId, attempt: td.Attempt, agentID: g.agentID, execID: td.ExecutorId, gen: g.gen, cpus: cpus, short: short,
		reused: !g.newExec})
	return added
}

// register makes a group's tasks live before its ACCEPT is sent, so
// that their status updates find them.
func (b *Backend) register(g *group) {
	a := b.agents[g.agentID]
	b.touch(g.agentID)
	for _, t := range g.mtasks {
		b.tasks[b.mesosTaskID(t.flintID)] = t
		a.live++
		a.liveCPUs += t.cpus
		if t.short {
			a.shortLive++
		}
	}
	b.launched += uint64(len(g.mtasks))
	if len(g.mtasks) > 0 {
		a.started = true
		if g.newExec {
			a.genUsed = true
			if n := len(a.launched); n == 0 || a.launched[n-1] != a.gen {
				a.launched = append(a.launched, a.gen)
			}
		}
	}
}

// plan works out every group's executor and task slots with the
// shared, pure placement (placement.Slots): a new executor's own cpus and
// memory come out of the offers first; with capped, flint.cores.max cuts
// the slots one per agent in turn. Then it applies the plan: a new
// executor gets the pieces of the offers the plan names, and the group
// keeps each slot's pieces for the tasks (addToAccept), checked nowhere
// else.
func (b *Backend) plan(groups []*group, capped bool) { b.planHeld(groups, capped, 0) }

// planAt plans one agent's group for a launch the driver asked for, under
// flint.cores.max with pending more cpus held: those of the tasks (and new
// executors) this launch call placed on other agents already.
func (b *Backend) planAt(g *group, pending float64) { b.planHeld([]*group{g}, true, pending) }

// pendingCPUs is the cpus the groups' tasks and new executors take once
// launched: held, though not yet registered live.
func pendingCPUs(groups []*group, execCPUs float64) float64 {
	cpus := 0.0
	for _, g := range groups {
		for _, t := range g.mtasks {
			cpus += float64(t.cpus)
		}
		if g.newExec && len(g.mtasks) > 0 {
			cpus += execCPUs
		}
	}
	return cpus
}

func (b *Backend) planHeld(groups []*group, capped bool, pending float64) {
	now := b.clock.Now()
	req := placement.SlotRequest{TaskCPUs: b.set.taskCPUs, ExecCPUs: b.set.execCPUs, ExecMemMB: b.set.MemMB, ExecPorts: b.set.Ports,
		CoresMax: math.Inf(1), Backoff: b.backoff.Until(now), Now: now}
	if capped && !math.IsInf(b.set.coresMax, 1) {
		// what is held matters only under a cap (O(agents) to count)
		req.CoresMax, req.HeldCPUs = b.set.coresMax, b.heldCPUs()+pending
	}
	for _, g := range groups {
		id := b.executorID(g.agentID)
		known := false
		for _, o := range g.offers {
			for _, e := range o.ExecutorIDs {
				known = known || e.Value == id
			}
		}
		a := b.agents[g.agentID]
		if a == nil {
			a = &agentExec{id: id, host: g.host, lastExited: -1}
			b.agents[g.agentID] = a
			b.touch(g.agentID)
		}
		req.Agents = append(req.Agents, placement.AgentOffers{AgentID: g.agentID, Host: g.host,
			Resources: g.rest, ExecutorRunning: known && a.info != nil && !a.exited,
			ShareTaken: a.shortLive > 0})
	}
	plan := placement.Slots(req)
	for i, g := range groups {
		s, a := plan.Agents[i], b.agents[g.agentID]
		g.filter = s.Filter
		if s.Filter.Reason.Unfit() {
			g.unfit = s.Filter.Detail
			continue
		}
		if !s.NewExecutor {
			g.exec, g.gen = a.info, a.gen
		} else {
			g.newExec = true
			if a.genUsed { // the last ExecutorInfo was launched: a new executor is a new generation
				a.gen, a.genUsed, a.up, a.lossSeen = a.gen+1, false, false, false
			}
			a.exited = false // this launch starts the executor again
			a.agentLost = false
			a.goneWhy = "" // the driver keeps the id: a new executor's tasks are not the old one's
			g.exec, g.gen = b.executorInfo(b.executorID(g.agentID), a.gen, g.host, s.Executor, s.ExecutorPorts), a.gen
			a.info = g.exec
		}
		g.slots, g.slot, g.shortCPUs = s.Slots, s.Slot, s.ShortCPUs
		if len(g.slot) > s.Slots { // the cores cap cut the slots: the short one (the last) goes first
			g.slot, g.shortCPUs = g.slot[:s.Slots], 0
		}
		b.offeredCPUs += s.Fits*b.set.taskCPUs - a.cpus
		a.cpus = s.Fits * b.set.taskCPUs
		g.capped = s.Slots == 0 && s.Filter.Reason == placement.CoresCapReached
	}
}

func agentName(id, host string) string { return fmt.Sprintf("agent %s (%s)", id, host) }

// exitOf attributes a FAILURE of an agent's executor to the oldest
// generation launched there whose exit was not reported yet: an agent
// runs one executor under an id at a time and reports their exits in
// order, while the next generation may already be launched (on offers
// held since before the last one's launch, which never listed it). It
// records the generation in lastExited (-1: none) for the handlers after
// it and returns it.
func (b *Backend) exitOf(agentID string) int {
	a := b.agents[agentID]
	if a == nil {
		return -1
	}
	a.lastExited = -1
	if len(a.launched) > 0 {
		a.lastExited, a.launched = a.launched[0], a.launched[1:]
	}
	return a.lastExited
}

// heldCPUs is what the application holds: its live tasks' cpus and
// the running executors' own cpus.
func (b *Backend) heldCPUs() float64 {
	held := 0.0
	for _, a := range b.agents { // every live task counts in its agent's liveCPUs
		held += float64(a.liveCPUs)
		if a.started {
			held += b.set.execCPUs
		}
	}
	return held
}

// noteFit records, for the no-fit error, whether any offer could
// hold a task and why the others could not.
func (b *Backend) noteFit(groups []*group, now time.Time) {
	for _, g := range groups {
		name := agentName(g.agentID, g.host)
		switch {
		case g.slots > 0 || len(g.tasks) > 0:
			b.diag.lastFit = now
			delete(b.diag.unfit, name)
		case g.capped:
			b.diag.unfit[name] = fmt.Sprintf("flint.cores.max=%d reached (%s cpus held by tasks and executors)", int(b.set.coresMax), placement.CPUString(b.heldCPUs()))
		case g.unfit != "":
			b.diag.unfit[name] = g.unfit
		}
	}
}

// checkNoFit fails the waiting jobs when, for flint.mesos.noOfferFitTimeout,
// tasks have waited with none of the application's tasks live and no offer
// that could hold one, naming what the offers lacked — instead of a silent
// hang.
func (b *Backend) checkNoFit(now time.Time) {
	if b.ended != "" && b.demand.Waiting && !b.stopping.Load() {
		b.d.Abort(b.ended)
		return
	}
	if !b.demand.Waiting || len(b.tasks) > 0 || b.stopping.Load() {
		b.diag.waitSince = time.Time{}
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
	if waited < b.set.NoFit {
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
	reason := fmt.Sprintf("tasks waited %s (%s) and no offer fits a task: %s", waited.Round(time.Millisecond), b.set.NoFitKey, why)
	b.diag.waitSince = time.Time{}
	b.log.Error("fine: " + reason)
	b.d.Abort(reason)
}

// launch sends each group's tasks in one ACCEPT of its offers. A failed
// call takes its tasks back (capacity first, then their loss).
func (b *Backend) launch(groups []*group) {
	for _, g := range groups {
		if len(g.tasks) == 0 {
			continue
		}
		if g.newExec {
			b.log.WithFields(logrus.Fields{"executor": b.executorID(g.agentID), "agent": g.agentID}).Debugf(
				"fine: starting executor %s on %s with %d task(s), binary %s", b.executorID(g.agentID), g.host, len(g.tasks), b.exeLog)
		}
		if err := b.conn.Launch(offerIDs(g.offers), g.tasks); err != nil {
			b.log.Warnf("fine: launch %d task(s) on %s: %v", len(g.tasks), g.host, err)
			a := b.agents[g.agentID]
			var dead []*flintpb.TaskDescription
			for _, t := range g.mtasks {
				if b.tasks[b.mesosTaskID(t.flintID)] == t {
					delete(b.tasks, b.mesosTaskID(t.flintID))
					b.touch(g.agentID)
					a.live--
					a.liveCPUs -= t.cpus
					if t.short {
						a.shortLive--
					}
					dead = append(dead, &flintpb.TaskDescription{TaskId: t.flintID, Attempt: t.attempt, ExecutorId: t.execID})
				}
			}
			b.resize(b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
			b.reportLost(dead, "the launch call failed: "+err.Error())
			b.reportGone(a)
		}
	}
}

// expire declines held offers whose hold time passed, with the filter of
// why they were not used.
func (b *Backend) expire(now time.Time) {
	wants := b.demand.Waiting
	groups := b.groups()
	b.plan(groups, true)
	declines := map[mesosconn.DeclineReason][]mesos.OfferID{}
	expired := false
	for _, g := range groups {
		if now.Sub(g.since) < b.set.holdTime {
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
		b.unhold(g)
		expired = true
	}
	if !expired || b.conn == nil {
		return
	}
	b.resize(now, declines)
	b.decline(declines)
}

func (b *Backend) decline(declines map[mesosconn.DeclineReason][]mesos.OfferID) {
	for reason, ids := range declines {
		if err := b.conn.Decline(ids, reason); err != nil {
			b.log.Debugf("fine: decline %d offer(s) (%s): %v", len(ids), reason, err)
		}
	}
}

// declineHeld declines held offers that match.
func (b *Backend) declineHeld(match func(*heldOffer) bool, reason mesosconn.DeclineReason) {
	var ids []mesos.OfferID
	for id, h := range b.held {
		if match(h) {
			ids = append(ids, h.offer.ID)
			delete(b.held, id)
		}
	}
	if b.conn != nil && len(ids) > 0 {
		b.decline(map[mesosconn.DeclineReason][]mesos.OfferID{reason: ids})
	}
	b.resize(b.clock.Now(), map[mesosconn.DeclineReason][]mesos.OfferID{})
}

// executorInfo is the per-agent executor: the Flint binary in the
// fine-executor role, with Settings in its data. Its binary's fetch
// credential belongs to generation gen of executor id (grantOwner).
func (b *Backend) executorInfo(id string, gen int, host string, res mesos.Resources, ports []uint64) *mesos.ExecutorInfo {
	name, source := "flint fine executor", "flint"
	return &mesos.ExecutorInfo{
		Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: id}, Name: &name,
		Source: &source, Resources: res, Data: b.settingsData(id),
		Command:   b.set.Executor.CommandInfo(b.exe.URIs(grantOwner(id, gen), b.set.ExtraURIs), b.set.Command, b.environment(host, ports)),
		Container: b.set.Executor.ContainerInfo(ports),
	}
}

// settingsData is executor id's Settings; its result server secret is the
// executor's own (resultSecret), not the application's.
func (b *Backend) settingsData(id string) []byte {
	data, err := flintpb.EncodeSettings(&flintpb.ExecutorSettings{
		TaskCpus: int32(b.set.taskCPUs), MaxResultSize: b.set.MaxResultSize, MaxDirectResultSize: b.set.MaxDirectResult,
		ResultSecret: resultSecret(b.secret, id), DriverHost: b.driverHost, IdleTimeoutNanos: int64(b.set.idleTimeout),
		LogLevel: b.set.LogLevel, LogFormat: b.set.LogFormat, DriverId: b.frameworkID, ResultsTls: b.set.TLS,
		Shuffle: b.shuffle, JobSettings: b.jobProps.Settings, JobSecrets: b.jobProps.Secrets,
	})
	if err != nil {
		panic("fine: " + err.Error())
	}
	return data
}

// environment is flint.executorEnv.* plus what the executor needs (which
// wins); in a container, where its servers listen and are reached (host,
// the agent's, and ports).
func (b *Backend) environment(host string, ports []uint64) []mesos.Environment_Variable {
	env := map[string]string{}
	for k, v := range b.set.Env {
		env[k] = v
	}
	env[contract.EnvRole] = contract.RoleFine
	env[contract.EnvUser] = b.set.Executor.TaskUser(b.user)
	env[contract.EnvLogLevel] = b.set.LogLevel
	env[contract.EnvLogFormat] = b.set.LogFormat
	if len(ports) > 0 {
		env[contract.EnvHost] = host
		b.set.Executor.PortEnv(b.set.Servers, ports, env)
	}
	return b.set.Executor.Environment(env)
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
		b.d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskId, Attempt: int(td.Attempt), ExecutorID: td.ExecutorId,
			State: scheduler.Lost, Failure: &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: fmt.Sprintf("fine: task %d not launched: %s", td.TaskId, why)}})
	}
}

// updateDemand asks Mesos for offers while the driver has tasks waiting.
func (b *Backend) updateDemand() {
	if b.conn != nil {
		b.conn.SetDemand(!b.stopping.Load() && b.demand.Waiting)
	}
}

// applyBatch carries out one of the driver loop's batches (owner).
func (b *Backend) applyBatch(batch *backend.Batch) {
	for _, k := range batch.Kills {
		b.kill(k.TaskID, k.ExecutorID, k.Reason)
	}
	for _, r := range batch.Releases {
		b.releaseResult(r.ExecutorID, r.BlockID)
	}
	if len(batch.ShuffleReleases) > 0 {
		b.releaseShuffles(batch.ShuffleReleases)
	}
	if len(batch.Launches) > 0 {
		b.launchTasks(flintconv.TaskDescriptions(batch.Launches))
	}
	if len(batch.ShuffleServices) > 0 {
		if b.svcs == nil {
			b.svcs = mesosbackend.NewShuffleServices(b.secret, b.set.serviceEvery, "fine", b.log)
		}
		b.svcs.Add(batch.ShuffleServices)
	}
	if batch.Demand != nil {
		b.demand = *batch.Demand
		b.updateDemand()
	}
	if batch.Tick {
		if b.svcs != nil {
			b.svcs.Tick(batch.Now)
		}
		b.checkNoFit(batch.Now)
		b.expire(b.clock.Now())
	}
}
