package placement

import (
	"fmt"
	"math"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement/constraints"
	"github.com/flint-mesos/flint/framework/resource"
)

// ExecutorRequest is what the coarse backend knows when offers come.
type ExecutorRequest struct {
	Offers   []Offer
	Now      time.Time
	Stopping bool

	// Sizing: ExecutorCores per executor (0: every whole cpu of the offer,
	// one executor per offer), TaskCPUs per task, MemMB per executor
	// (flint.executor.memory plus overhead), GPUsMax in all.
	ExecutorCores, TaskCPUs int
	MemMB                   float64
	GPUsMax                 int
	// Ports per executor (its listening servers' port mappings): each
	// launch takes that many values of the offer's "ports" ranges and
	// names them.
	Ports int

	// Caps: CoresMax (math.MaxInt: none) over CoresHeld already held,
	// GPUsHeld; Limit executors (< 0: none) over Live running.
	CoresMax, CoresHeld, GPUsHeld int
	Limit, Live                   int

	Constraints constraints.Constraints
	Excluded    map[string]Exclusion // by agent id
	Backoff     map[string]time.Time // by agent id: no launch before

	// Locality (Spark's satisfiesLocality): per host, pending tasks
	// preferring it; hosts running an executor of ours; how long offers may
	// be held for preferred hosts, and since when they are (zero: not yet).
	HostPrefs     map[string]int
	HostsRunning  map[string]bool
	LocalityWait  time.Duration
	LocalitySince time.Time
}

// ExecutorLaunch is one executor to start on an offer, and exactly what
// it takes from the offer: the backend launches it with Resources as they
// are, without checking fit again.
type ExecutorLaunch struct {
	OfferID, AgentID, Host string
	Cores, GPUs            int
	MemMB                  float64
	Resources              mesos.Resources // the offer's pieces (framework/resource.Take)
	Ports                  []uint64        // the port numbers among them (ExecutorRequest.Ports of them)
}

// ExecutorPlan is what to do with a batch of offers.
type ExecutorPlan struct {
	Launches []ExecutorLaunch // in launch order
	// Declined are the offers that launch nothing, each with the reason
	// that selects its refuse filter (and, for unfit ones, why).
	Declined []Filtered
	// Filtered are the reasons offers (or their rest) took no more
	// executors, including offers that launched some.
	Filtered []Filtered
	// LocalitySince is the new start of the locality hold (zero: none).
	LocalitySince time.Time
	Deferred      int // offers declined to wait for preferred hosts
}

type candidate struct {
	o        *Offer
	rest     mesos.Resources // what launches planned so far left of the offer
	full     bool
	unfit    Filtered
	hasUnfit bool
	execs    int
	prefs    int
}

// Executors plans executor launches (Spark's buildMesosTasks): offers that
// pass the checkers are used round-robin, one executor per offer per round
// (offers from hosts more pending tasks prefer first), until the cores cap
// or executor limit is reached or no offer fits another executor.
func Executors(r ExecutorRequest) ExecutorPlan {
	var p ExecutorPlan
	cores, gpus, live := r.CoresHeld, r.GPUsHeld, r.Live
	capReached := func() bool { return cores+r.TaskCPUs > r.CoresMax }
	wantMore := func() bool { return !r.Stopping && !capReached() && (r.Limit < 0 || live < r.Limit) }
	waitFor := localityHosts(&r, wantMore(), &p)
	checks := Checks{Constraints: r.Constraints, Excluded: r.Excluded, Backoff: r.Backoff, Now: r.Now}
	whole := append([]checker{
		func(*Offer) (Reason, string) {
			switch {
			case r.Stopping:
				return ShuttingDown, "the driver is stopping"
			case capReached():
				return CoresCapReached, "flint.cores.max reached"
			case !wantMore():
				return NoDemand, "no executor wanted"
			}
			return Used, ""
		}}, checks.chain()...)
	var cands []*candidate
	for i := range r.Offers {
		o := &r.Offers[i]
		if reason, why := feasible(o, whole...); reason != Used {
			f := Filtered{OfferID: o.ID, AgentID: o.AgentID, Host: o.Host, Reason: reason, Detail: why}
			p.Declined = append(p.Declined, f)
			p.Filtered = append(p.Filtered, f)
			continue
		}
		cands = append(cands, &candidate{o: o, rest: o.Resources, prefs: r.HostPrefs[o.Host]})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].prefs > cands[j].prefs })
	for progress := true; progress; {
		progress = false
		for _, c := range cands {
			if c.full || !wantMore() {
				continue
			}
			if len(waitFor) > 0 && !waitFor[c.o.Host] {
				continue // hold out for a host pending tasks prefer
			}
			l, ok := carve(&r, c, r.CoresMax-cores, r.GPUsMax-gpus)
			if !ok {
				continue
			}
			delete(waitFor, c.o.Host)
			p.Launches = append(p.Launches, l)
			cores += l.Cores
			gpus += l.GPUs
			live++
			progress = true
		}
	}
	for _, c := range cands {
		f := Filtered{OfferID: c.o.ID, AgentID: c.o.AgentID, Host: c.o.Host}
		switch {
		case c.execs > 0:
			continue
		case capReached():
			f.Reason, f.Detail = CoresCapReached, "flint.cores.max reached"
		case !wantMore():
			f.Reason, f.Detail = NoDemand, "no executor wanted"
		case len(waitFor) > 0 && !waitFor[c.o.Host]:
			f.Reason, f.Detail = LocalityHold, "held for the hosts pending tasks prefer (flint.locality.wait)"
			p.Deferred++
		case c.hasUnfit:
			f = c.unfit
		default:
			f.Reason = NoRoom
		}
		p.Declined = append(p.Declined, f)
		p.Filtered = append(p.Filtered, f)
	}
	return p
}

// carve takes one executor out of a candidate offer, given the cores and
// GPUs the caps leave.
func carve(r *ExecutorRequest, c *candidate, coresLeft, gpusLeft int) (ExecutorLaunch, bool) {
	offCPUs, offMem := resource.Amount(c.rest, resource.CPUs), resource.Amount(c.rest, resource.Mem)
	cpus := math.Floor(offCPUs + eps)
	cores := r.ExecutorCores
	if cores == 0 {
		cores = int(min(cpus, float64(coresLeft)))
	}
	unfit := func(reason Reason, detail string) (ExecutorLaunch, bool) {
		c.unfit = Filtered{OfferID: c.o.ID, AgentID: c.o.AgentID, Host: c.o.Host, Reason: reason, Detail: detail}
		c.hasUnfit, c.full = true, true
		return ExecutorLaunch{}, false
	}
	switch {
	case cores < r.TaskCPUs || float64(cores) > cpus:
		need := max(r.ExecutorCores, r.TaskCPUs)
		// effective values only: an unset key's zero reads as a misconfiguration
		set := fmt.Sprintf("flint.executor.cores=%d, flint.task.cpus=%d", r.ExecutorCores, r.TaskCPUs)
		if r.ExecutorCores == 0 {
			set = fmt.Sprintf("flint.task.cpus=%d; flint.executor.cores unset: an executor takes the offer's whole cpus", r.TaskCPUs)
		}
		return unfit(CPUsShort, fmt.Sprintf("cpus %g < %d needed (%s)", offCPUs, need, set))
	case cores > coresLeft:
		c.full = true
		return ExecutorLaunch{}, false
	case offMem+eps < r.MemMB:
		return unfit(MemShort, fmt.Sprintf("mem %g MiB < %g MiB needed (flint.executor.memory + flint.mesos.executor.memoryOverhead)", offMem, r.MemMB))
	}
	gpus := 0
	if r.GPUsMax > 0 {
		gpus = max(int(min(math.Floor(resource.Amount(c.rest, resource.GPUs)+eps), float64(gpusLeft))), 0)
	}
	ask := resource.Ask{resource.ScalarNeed(resource.CPUs, float64(cores)), resource.ScalarNeed(resource.Mem, r.MemMB),
		resource.ScalarNeed(resource.GPUs, float64(gpus)), resource.RangeNeed(resource.Ports, r.Ports)}
	if short := resource.Short(c.rest, ask[3:]); len(short) > 0 {
		return unfit(OtherShort, shortDetail(short, "executor port mappings"))
	}
	taken, rest, ok := resource.Take(c.rest, ask)
	if !ok {
		return unfit(ResourcesShort, fmt.Sprintf("resources %s cannot cover cpus:%d;mem:%g;gpus:%d", c.rest.String(), cores, r.MemMB, gpus))
	}
	c.rest = rest
	c.execs++
	if r.ExecutorCores == 0 {
		c.full = true // one executor takes the whole offer
	}
	return ExecutorLaunch{OfferID: c.o.ID, AgentID: c.o.AgentID, Host: c.o.Host, Cores: cores, GPUs: gpus, MemMB: r.MemMB,
		Resources: taken, Ports: resource.Values(taken, resource.Ports)}, true
}

// localityHosts is Spark's satisfiesLocality for a capped backend
// (flint.cores.max or an executor limit): while pending tasks prefer hosts
// that run no executor of ours yet, offers from other hosts are held back
// for up to LocalityWait, so that the executors the cap allows start where
// the tasks want to run. It returns those hosts, or nil when offers need
// not wait, and sets p.LocalitySince.
func localityHosts(r *ExecutorRequest, wantMore bool, p *ExecutorPlan) map[string]bool {
	capped := r.CoresMax != math.MaxInt || r.Limit >= 0
	if !capped || len(r.HostPrefs) == 0 || r.LocalityWait <= 0 || !wantMore {
		return nil
	}
	waitFor := make(map[string]bool, len(r.HostPrefs))
	for h := range r.HostPrefs {
		if !r.HostsRunning[h] {
			waitFor[h] = true
		}
	}
	if len(waitFor) == 0 {
		return nil
	}
	p.LocalitySince = r.LocalitySince
	if p.LocalitySince.IsZero() {
		p.LocalitySince = r.Now
	}
	if r.Now.Sub(p.LocalitySince) > r.LocalityWait {
		return nil
	}
	return waitFor
}
