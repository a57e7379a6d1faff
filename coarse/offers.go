package coarse

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/coarse/gateway"
	coarseexec "github.com/flint-mesos/flint/executor/coarse"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
)

// launchPlan is what to do with one batch of offers.
type launchPlan struct {
	launches map[mesos.OfferID][]mesos.TaskInfo
	offers   []mesos.OfferID // offers with launches, in offer order
	declines map[mesosconn.DeclineReason][]mesos.OfferID
	execs    []*executor
	deferred int // offers declined to wait for preferred hosts
}

// candidate is an offer being carved up into executors.
type candidate struct {
	offer *mesos.Offer
	rest  mesos.Resources
	full  bool   // takes no more executors
	unfit string // why the last executor did not fit
	execs int
	prefs int // pending tasks preferring the offer's host
}

// planLocked turns offers into executor launches (Spark's
// buildMesosTasks): round-robin over the offers, one executor per offer
// per round, until flint.cores.max (or the executor limit) is reached or no
// offer fits another executor. Offers that launch nothing are declined with
// the reason that selects their filter. b.mu must be held.
func (b *Backend) planLocked(offers []mesos.Offer, prefs map[string]int, now time.Time) launchPlan {
	p := launchPlan{launches: map[mesos.OfferID][]mesos.TaskInfo{}, declines: map[mesosconn.DeclineReason][]mesos.OfferID{}}
	var cands []*candidate
	var unfit []string
	waitFor := b.localityHostsLocked(prefs, now)
	for i := range offers {
		o := &offers[i]
		why, reason := b.offerUsableLocked(o, now)
		if why != "" {
			p.declines[reason] = append(p.declines[reason], o.ID)
			if reason != mesosconn.DeclineReachedMaxCores && reason != mesosconn.DeclineNoDemand {
				unfit = append(unfit, fmt.Sprintf("offer from %s: %s", o.Hostname, why))
			}
			continue
		}
		cands = append(cands, &candidate{offer: o, rest: o.Resources, prefs: prefs[o.Hostname]})
	}
	// Offers from hosts more pending tasks prefer go first: when fewer
	// executors are wanted than the offers could hold, they get them.
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].prefs > cands[j].prefs })
	for progress := true; progress; {
		progress = false
		for _, c := range cands {
			if c.full || !b.wantMoreLocked() {
				continue
			}
			if len(waitFor) > 0 && !waitFor[c.offer.Hostname] {
				continue // hold out for a host pending tasks prefer
			}
			if e, ti, ok := b.carveLocked(c); ok {
				delete(waitFor, c.offer.Hostname)
				p.execs = append(p.execs, e)
				if len(p.launches[c.offer.ID]) == 0 {
					p.offers = append(p.offers, c.offer.ID)
				}
				p.launches[c.offer.ID] = append(p.launches[c.offer.ID], ti)
				progress = true
			}
		}
	}
	for _, c := range cands {
		if c.execs > 0 {
			continue
		}
		switch {
		case b.coresCapLocked():
			p.declines[mesosconn.DeclineReachedMaxCores] = append(p.declines[mesosconn.DeclineReachedMaxCores], c.offer.ID)
		case !b.wantMoreLocked():
			p.declines[mesosconn.DeclineNoDemand] = append(p.declines[mesosconn.DeclineNoDemand], c.offer.ID)
		case len(waitFor) > 0 && !waitFor[c.offer.Hostname]:
			// Spark's satisfiesLocality: the master re-offers it later.
			p.declines[mesosconn.DeclineUnfit] = append(p.declines[mesosconn.DeclineUnfit], c.offer.ID)
			p.deferred++
		default:
			p.declines[mesosconn.DeclineUnfit] = append(p.declines[mesosconn.DeclineUnfit], c.offer.ID)
			unfit = append(unfit, fmt.Sprintf("offer from %s: %s", c.offer.Hostname, c.unfit))
		}
	}
	if len(offers) > 0 {
		b.diag.offersSeen = true
	}
	if len(unfit) > 0 {
		b.diag.unfit = unfit
	}
	return p
}

// offerUsableLocked checks the offer as a whole: stopping, constraints,
// excluded agent, demand.
func (b *Backend) offerUsableLocked(o *mesos.Offer, now time.Time) (string, mesosconn.DeclineReason) {
	switch {
	case b.stopping:
		return "the driver is stopping", mesosconn.DeclineShuttingDown
	case b.coresCapLocked():
		return "flint.cores.max reached", mesosconn.DeclineReachedMaxCores
	case !b.wantMoreLocked():
		return "no executor wanted", mesosconn.DeclineNoDemand
	}
	if err := b.set.constraints.Check(o.Attributes); err != nil {
		return fmt.Sprintf("flint.mesos.constraints %q unmet: %v", b.set.constraints.String(), err), mesosconn.DeclineUnmetConstraint
	}
	if b.fails.excluded(o.AgentID.Value, now) {
		n, until, last := b.fails.why(o.AgentID.Value)
		return fmt.Sprintf("agent %s excluded until %s after %d executor failures (last: %s)", o.AgentID.Value, until.Format(time.RFC3339), n, last), mesosconn.DeclineUnfit
	}
	return "", 0
}

// localityHostsLocked is Spark's satisfiesLocality for a capped backend
// (flint.cores.max or a requested executor total): while pending tasks
// prefer hosts that run no executor of ours yet, offers from other hosts
// are declined for up to flint.locality.wait, so that the executors the
// cap allows start where the tasks want to run. It returns those hosts, or
// nil when offers need not wait: no preference left unserved, no cap (every
// offer gets executors anyway) or the wait is over.
func (b *Backend) localityHostsLocked(prefs map[string]int, now time.Time) map[string]bool {
	capped := b.set.coresMax != math.MaxInt || b.limit >= 0
	if !capped || len(prefs) == 0 || b.set.localityWait <= 0 || !b.wantMoreLocked() {
		b.localSince = time.Time{}
		return nil
	}
	waitFor := make(map[string]bool, len(prefs))
	for h := range prefs {
		waitFor[h] = true
	}
	for _, e := range b.execs {
		if !e.lost {
			delete(waitFor, e.host)
		}
	}
	if len(waitFor) == 0 {
		b.localSince = time.Time{}
		return nil
	}
	if b.localSince.IsZero() {
		b.localSince = now
	}
	if now.Sub(b.localSince) > b.set.localityWait {
		return nil
	}
	return waitFor
}

func (b *Backend) coresCapLocked() bool { return b.cores+b.set.taskCPUs > b.set.coresMax }

// wantMoreLocked reports whether another executor is wanted.
func (b *Backend) wantMoreLocked() bool {
	if b.stopping || b.coresCapLocked() {
		return false
	}
	return b.limit < 0 || b.liveLocked() < b.limit
}

func (b *Backend) liveLocked() int {
	n := 0
	for _, e := range b.execs {
		if !e.lost {
			n++
		}
	}
	return n
}

// carveLocked takes one executor out of a candidate offer.
func (b *Backend) carveLocked(c *candidate) (*executor, mesos.TaskInfo, bool) {
	cpus := math.Floor(mesosconn.Scalar(c.rest, "cpus") + 1e-9)
	mem := mesosconn.Scalar(c.rest, "mem")
	left := b.set.coresMax - b.cores
	cores := b.set.executorCores
	if cores == 0 {
		cores = int(min(cpus, float64(left)))
	}
	switch {
	case cores < b.set.taskCPUs || float64(cores) > cpus:
		need := max(b.set.executorCores, b.set.taskCPUs)
		c.unfit = fmt.Sprintf("cpus %g < %d needed (flint.executor.cores=%d, flint.task.cpus=%d)", mesosconn.Scalar(c.rest, "cpus"), need, b.set.executorCores, b.set.taskCPUs)
		c.full = true
		return nil, mesos.TaskInfo{}, false
	case cores > left:
		c.full = true
		return nil, mesos.TaskInfo{}, false
	case mem < b.set.memMB:
		c.unfit = fmt.Sprintf("mem %g MiB < %g MiB needed (flint.executor.memory + flint.mesos.executor.memoryOverhead)", mem, b.set.memMB)
		c.full = true
		return nil, mesos.TaskInfo{}, false
	}
	gpus := 0
	if b.set.gpusMax > 0 {
		gpus = int(min(math.Floor(mesosconn.Scalar(c.rest, "gpus")+1e-9), float64(b.set.gpusMax-b.gpus)))
		gpus = max(gpus, 0)
	}
	taken, rest, ok := mesosconn.Take(c.rest, mesosconn.Want{CPUs: float64(cores), MemMB: b.set.memMB, GPUs: float64(gpus)})
	if !ok {
		c.unfit = fmt.Sprintf("resources %s cannot cover cpus:%d;mem:%g;gpus:%d", mesos.Resources(c.rest).String(), cores, b.set.memMB, gpus)
		c.full = true
		return nil, mesos.TaskInfo{}, false
	}
	c.rest = rest
	c.execs++
	if b.set.executorCores == 0 {
		c.full = true // one executor takes the whole offer
	}
	e := &executor{id: strconv.Itoa(b.nextID), agentID: c.offer.AgentID.Value, host: c.offer.Hostname,
		cores: cores, gpus: gpus, memMB: b.set.memMB, tasks: map[uint64]int{}}
	b.nextID++
	b.cores += cores
	b.gpus += gpus
	b.execs[e.id] = e
	return e, b.taskInfo(e, c.offer.AgentID, taken), true
}

// taskInfo is the Mesos task that runs executor e.
func (b *Backend) taskInfo(e *executor, agent mesos.AgentID, res mesos.Resources) mesos.TaskInfo {
	yes, no := true, false
	uris := []mesos.CommandInfo_URI{{Value: b.exeURI, Executable: &yes, Extract: &no, Cache: &yes}}
	for _, u := range b.set.extraURIs {
		uris = append(uris, mesos.CommandInfo_URI{Value: u})
	}
	if b.set.executorURI != "" && driverside.IsArchive(b.set.executorURI) {
		uris[0].Executable, uris[0].Extract = &no, &yes
	}
	cmd := b.set.command
	return mesos.TaskInfo{
		Name: "flint executor " + e.id, TaskID: mesos.TaskID{Value: e.id}, AgentID: agent, Resources: res,
		Command: &mesos.CommandInfo{URIs: uris, Shell: &no, Value: &cmd, Arguments: []string{cmd},
			Environment: &mesos.Environment{Variables: b.environment(e)}},
	}
}

// environment is the executor's Mesos Environment: flint.executorEnv.*,
// then what the coarse executor needs (which wins).
func (b *Backend) environment(e *executor) []mesos.Environment_Variable {
	env := map[string]string{}
	for k, v := range b.set.env {
		env[k] = v
	}
	env["FLINT_ROLE"] = coarseexec.Role
	env[coarseexec.EnvDriverURL] = b.gwURL
	env[coarseexec.EnvExecutorID] = e.id
	env[coarseexec.EnvCores] = strconv.Itoa(e.cores)
	env[coarseexec.EnvToken] = gateway.ExecutorToken(b.secret, e.id)
	if b.certPin != "" {
		env[coarseexec.EnvDriverCert] = b.certPin
	}
	env[coarseexec.EnvHost] = e.host
	env[coarseexec.EnvAgentID] = e.agentID
	env[coarseexec.EnvTimeout] = strconv.FormatFloat(b.set.networkTimeout.Seconds(), 'f', -1, 64)
	env[coarseexec.EnvLogLevel] = b.set.logLevel
	env[coarseexec.EnvLogFormat] = b.set.logFormat
	env["FLINT_USER"] = b.user
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

// diagnosis remembers why offers did not become executors, for the
// no-executor error.
type diagnosis struct {
	offersSeen  bool
	unfit       []string
	lastFailure string
	waitSince   time.Time
}

// explainLocked says why no executor runs.
func (b *Backend) explainLocked() string {
	var parts []string
	if !b.diag.offersSeen {
		parts = append(parts, fmt.Sprintf("no offer received from the Mesos master %s (are agents registered with free resources for role(s) %q?)", b.master, b.p.Config.String("flint.mesos.role")))
	}
	if len(b.diag.unfit) > 0 {
		parts = append(parts, "offers did not fit: "+strings.Join(uniq(b.diag.unfit), "; "))
	}
	if b.diag.lastFailure != "" {
		parts = append(parts, "last executor failure: "+b.diag.lastFailure)
	}
	if len(parts) == 0 {
		parts = append(parts, "executors were launched but none registered with the driver")
	}
	return strings.Join(parts, "; ")
}

func uniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func sortExecutors(es []ExecutorInfo) {
	sort.Slice(es, func(i, j int) bool {
		a, _ := strconv.Atoi(es[i].ID)
		c, _ := strconv.Atoi(es[j].ID)
		return a < c
	})
}
