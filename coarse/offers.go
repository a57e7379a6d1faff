package coarse

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/placement"
)

// launchPlan is what to do with one batch of offers.
type launchPlan struct {
	launches map[mesos.OfferID][]mesos.TaskInfo
	offers   []mesos.OfferID // offers with launches, in offer order
	declines map[mesosconn.DeclineReason][]mesos.OfferID
	execs    []*executor
	deferred int // offers declined to wait for preferred hosts
}

// planOffers turns offers into executor launches with the shared,
// pure placement (placement.Executors: Spark's buildMesosTasks) and
// applies its plan: executors are recorded and launched with the pieces of
// their offer the plan names (placement decides fit; nothing here checks
// it again); offers that launch nothing are declined with the filter
// their reason selects. It runs on the owner.
func (b *Backend) planOffers(offers []mesos.Offer, prefs map[string]int, now time.Time) launchPlan {
	p := launchPlan{launches: map[mesos.OfferID][]mesos.TaskInfo{}, declines: map[mesosconn.DeclineReason][]mesos.OfferID{}}
	req := placement.ExecutorRequest{
		Offers: make([]placement.Offer, len(offers)), Now: now, Stopping: b.stopping,
		ExecutorCores: b.set.executorCores, TaskCPUs: b.set.taskCPUs, MemMB: b.set.MemMB, GPUsMax: b.set.gpusMax, Ports: b.set.Ports,
		CoresMax: b.set.coresMax, CoresHeld: b.cores, GPUsHeld: b.gpus, Limit: b.limit, Live: b.live(),
		Constraints: b.set.Constraints, Excluded: b.fails.exclusions(now), Backoff: b.backoff.Until(now),
		HostPrefs: prefs, HostsRunning: map[string]bool{}, LocalityWait: b.set.localityWait, LocalitySince: b.localSince,
	}
	byID := make(map[string]*mesos.Offer, len(offers))
	for i := range offers {
		o := &offers[i]
		req.Offers[i] = placement.FromMesos(o)
		byID[o.ID.Value] = o
	}
	for _, e := range b.execs {
		if !e.lost {
			req.HostsRunning[e.host] = true
		}
	}
	plan := placement.Executors(req)
	b.localSince = plan.LocalitySince
	p.deferred = plan.Deferred
	unfit := placement.Summary(plan.Filtered)
	for _, l := range plan.Launches {
		o := byID[l.OfferID]
		e := &executor{id: b.idPrefix + strconv.Itoa(b.nextID), agentID: l.AgentID, host: l.Host, cores: l.Cores, gpus: l.GPUs, memMB: l.MemMB, ports: l.Ports}
		b.nextID++
		b.cores += e.cores
		b.gpus += e.gpus
		b.execs[e.id] = e
		p.execs = append(p.execs, e)
		if len(p.launches[o.ID]) == 0 {
			p.offers = append(p.offers, o.ID)
		}
		p.launches[o.ID] = append(p.launches[o.ID], b.taskInfo(e, o.AgentID, l.Resources))
	}
	for _, f := range plan.Declined {
		r := declineReason(f.Reason)
		p.declines[r] = append(p.declines[r], byID[f.OfferID].ID)
	}
	if len(offers) > 0 {
		b.diag.offersSeen = true
		b.diag.filtered = plan.Filtered
		if b.diag.agents == nil {
			b.diag.agents = map[string]string{}
		}
		for i := range offers {
			b.diag.agents[offers[i].AgentID.Value] = offers[i].Hostname
		}
	}
	if len(unfit) > 0 {
		b.diag.unfit = unfit
	}
	return p
}

// declineReason is the refuse filter for a placement reason.
func declineReason(r placement.Reason) mesosconn.DeclineReason {
	switch r {
	case placement.ShuttingDown:
		return mesosconn.DeclineShuttingDown
	case placement.CoresCapReached:
		return mesosconn.DeclineReachedMaxCores
	case placement.NoDemand:
		return mesosconn.DeclineNoDemand
	case placement.ConstraintUnmet:
		return mesosconn.DeclineUnmetConstraint
	}
	return mesosconn.DeclineUnfit
}

func (b *Backend) coresCap() bool { return b.cores+b.set.taskCPUs > b.set.coresMax }

// wantMore reports whether another executor is wanted.
func (b *Backend) wantMore() bool {
	if b.stopping || b.coresCap() {
		return false
	}
	return b.limit < 0 || b.live() < b.limit
}

func (b *Backend) live() int {
	n := 0
	for _, e := range b.execs {
		if !e.lost {
			n++
		}
	}
	return n
}

// taskInfo is the Mesos task that runs executor e.
func (b *Backend) taskInfo(e *executor, agent mesos.AgentID, res mesos.Resources) mesos.TaskInfo {
	return mesos.TaskInfo{
		Name: "flint executor " + e.id, TaskID: mesos.TaskID{Value: e.id}, AgentID: agent, Resources: res,
		Command:   b.set.Executor.CommandInfo(b.exe.URIs(e.id, b.set.ExtraURIs), b.set.Command, b.environment(e)),
		Container: b.set.Executor.ContainerInfo(e.ports),
		Labels:    b.set.Executor.TaskLabels(),
	}
}

// environment is the executor's Mesos Environment: flint.executorEnv.*,
// then what the coarse executor needs (which wins).
func (b *Backend) environment(e *executor) []mesos.Environment_Variable {
	env := map[string]string{}
	for k, v := range b.set.Env {
		env[k] = v
	}
	env[contract.EnvRole] = contract.RoleCoarse
	env[contract.EnvDriverURL] = b.gwURL
	env[contract.EnvExecutorID] = e.id
	env[contract.EnvCores] = strconv.Itoa(e.cores)
	env[contract.EnvToken] = gateway.ExecutorToken(b.secret, e.id)
	if b.certPin != "" {
		env[contract.EnvDriverCert] = b.certPin
	}
	env[contract.EnvHost] = e.host
	env[contract.EnvAgentID] = e.agentID
	env[contract.EnvTimeout] = strconv.FormatFloat(b.set.NetworkTimeout.Seconds(), 'f', -1, 64)
	env[contract.EnvLogLevel] = b.set.LogLevel
	env[contract.EnvLogFormat] = b.set.LogFormat
	env[contract.EnvUser] = b.set.Executor.TaskUser(b.user)
	b.set.Executor.PortEnv(b.set.Servers, e.ports, env)
	return b.set.Executor.Environment(env)
}

// diagnosis remembers why offers did not become executors, for the
// no-executor error.
type diagnosis struct {
	offersSeen  bool
	filtered    []placement.Filtered // the last offers' placement reasons
	agents      map[string]string    // agent id → host of every agent that offered
	unfit       []string
	lastFailure string
	waitSince   time.Time
}

// explain says why no executor runs.
func (b *Backend) explain() string {
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
	// ids are one prefix and a counter: the shorter counter is the smaller
	slices.SortFunc(es, func(a, c ExecutorInfo) int {
		return cmp.Or(cmp.Compare(len(a.ID), len(c.ID)), strings.Compare(a.ID, c.ID))
	})
}
