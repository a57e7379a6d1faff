package allocator

import (
	"slices"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Allocate runs one batch allocation round over all agents, in a freshly shuffled order.
func (a *Allocator) Allocate(now time.Time) []Offer {
	order := slices.Clone(a.order)
	a.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return a.allocate(now, order)
}

// AllocateAgents runs a round over the named agents only (unknown ids are ignored), for
// "allocate on release": offering freed resources without waiting for the next batch.
func (a *Allocator) AllocateAgents(now time.Time, agentIDs ...string) []Offer {
	var order []*agent
	seen := map[string]bool{}
	for _, id := range agentIDs {
		if ag := a.agents[id]; ag != nil && !seen[id] {
			seen[id] = true
			order = append(order, ag)
		}
	}
	a.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return a.allocate(now, order)
}

func (a *Allocator) allocate(now time.Time, order []*agent) []Offer {
	a.expireFilters(now)
	a.prepareRound()
	var offers []Offer
	for _, ag := range order {
		if !ag.active || len(ag.available) == 0 || a.roleHeap.Len() == 0 {
			continue
		}
		offers = a.allocateAgent(ag, now, offers)
	}
	return offers
}

// expireFilters drops filters that ended at or before now.
func (a *Allocator) expireFilters(now time.Time) {
	if a.filters == 0 {
		return
	}
	for _, f := range a.frameworks {
		if len(f.filters) > 0 {
			a.dropFilters(f, func(fl filter) bool { return !now.Before(fl.expires) })
		}
	}
}

func (a *Allocator) capped(f *framework) bool {
	return a.cfg.MaxOutstandingOffers > 0 && f.outstanding >= a.cfg.MaxOutstandingOffers
}

func (a *Allocator) roleKey(r *role) float64 { return share(r.alloc, a.totalQ) / r.weight }

// prepareRound computes every share once and builds the heaps: per role the frameworks that
// may receive offers at all this round (active, not suppressed for the role, under the
// outstanding-offer cap), and the roles that have at least one such framework.
func (a *Allocator) prepareRound() {
	roleEntries := a.scratch[:0]
	for _, r := range a.roles {
		es := make([]*entry, 0, len(r.frameworks))
		for id, f := range r.frameworks {
			if !f.active || f.suppressed[r.name] || a.capped(f) {
				continue
			}
			e := f.entries[r.name]
			if e == nil {
				e = &entry{name: id, fw: f, role: r}
				f.entries[r.name] = e
			}
			e.key = share(f.alloc[r.name], a.totalQ)
			es = append(es, e)
		}
		r.fwHeap.reset(es)
		r.entry.idx = -1
		if len(es) > 0 {
			r.entry.key = a.roleKey(r)
			roleEntries = append(roleEntries, &r.entry)
		}
	}
	a.roleHeap.reset(roleEntries)
	a.scratch = roleEntries[:0]
}

// allocateAgent offers ag's available resources. The role with the lowest weighted share that
// has an eligible framework gets the unreserved resources together with those reserved for it;
// what stays (reservations of other roles) then goes, reservation role by reservation role, to
// the lowest-share eligible framework of that role or of one of its sub-roles.
func (a *Allocator) allocateAgent(ag *agent, now time.Time, offers []Offer) []Offer {
	if hasUnreserved(ag.available) {
		var skipped []*entry
		for a.roleHeap.Len() > 0 {
			re := a.roleHeap.pop()
			if o, ok := a.offerInRole(ag, re.role, now); ok {
				offers = append(offers, o)
				a.requeueRole(re.role)
				break
			}
			skipped = append(skipped, re)
		}
		for _, re := range skipped {
			a.requeueRole(re.role)
		}
	}
	for len(ag.available) > 0 {
		o, ok := a.offerReserved(ag, now)
		if !ok {
			break
		}
		offers = append(offers, o)
	}
	return offers
}

// requeueRole puts a popped role back in the role heap with its new share, unless none of its
// frameworks can receive offers any more this round.
func (a *Allocator) requeueRole(r *role) {
	if r.fwHeap.Len() == 0 {
		return
	}
	r.entry.key = a.roleKey(r)
	a.roleHeap.push(&r.entry)
}

// offerReserved makes one offer of reserved resources left on ag, trying reservation roles in
// name order and, for each, the candidate roles in share order.
func (a *Allocator) offerReserved(ag *agent, now time.Time) (Offer, bool) {
	var resRoles []string
	for i := range ag.available {
		if r := &ag.available[i]; !r.IsUnreserved() {
			if rr := r.ReservationRole(); !slices.Contains(resRoles, rr) {
				resRoles = append(resRoles, rr)
			}
		}
	}
	slices.Sort(resRoles)
	for _, rr := range resRoles {
		for _, r := range a.candidates(rr) {
			if o, ok := a.offerInRole(ag, r, now); ok {
				if r.entry.idx >= 0 {
					if r.fwHeap.Len() == 0 {
						a.roleHeap.remove(&r.entry)
					} else {
						r.entry.key = a.roleKey(r)
						a.roleHeap.fix(&r.entry)
					}
				}
				return o, true
			}
		}
	}
	return Offer{}, false
}

// candidates lists the roles that may use resources reserved for rr: rr itself and, with
// hierarchical roles, its sub-roles; lowest weighted share first.
func (a *Allocator) candidates(rr string) []*role {
	var cs []*role
	if r := a.roles[rr]; r != nil && r.fwHeap.Len() > 0 {
		cs = append(cs, r)
	}
	if a.hierarchical {
		for name, r := range a.roles {
			if r.fwHeap.Len() > 0 && len(name) > len(rr) && name[:len(rr)] == rr && name[len(rr)] == '/' {
				cs = append(cs, r)
			}
		}
	}
	for _, r := range cs {
		r.entry.key = a.roleKey(r)
	}
	slices.SortFunc(cs, func(x, y *role) int {
		if x.entry.less(&y.entry) {
			return -1
		}
		return 1
	})
	return cs
}

// offerInRole offers what ag has for role r to r's lowest-share framework that may take it.
func (a *Allocator) offerInRole(ag *agent, r *role, now time.Time) (Offer, bool) {
	take, rest := split(ag.available, r.name)
	if len(take) == 0 {
		return Offer{}, false
	}
	fe := a.pickFramework(ag, r, take, now)
	if fe == nil {
		return Offer{}, false
	}
	f := fe.fw
	ag.available = rest
	offer := Offer{
		FrameworkID: f.info.ID,
		AgentID:     ag.id,
		Hostname:    ag.hostname,
		Role:        r.name,
		Resources:   cloneRes(take).Allocate(r.name),
	}
	a.track(ag, f.info.ID, r.name, take)
	f.outstanding++
	if !a.capped(f) {
		fe.key = share(f.alloc[r.name], a.totalQ)
		r.fwHeap.push(fe)
	}
	return offer, true
}

// pickFramework pops r's frameworks in share order until one may receive res on ag; it
// returns that framework's entry out of the heap (the caller re-queues it). Frameworks that
// reached their outstanding-offer cap are dropped for the rest of the round.
func (a *Allocator) pickFramework(ag *agent, r *role, res mesos.Resources, now time.Time) *entry {
	skipped := a.scratch[:0]
	var chosen *entry
	for r.fwHeap.Len() > 0 {
		e := r.fwHeap.pop()
		f := e.fw
		switch {
		case a.capped(f):
			continue
		case ag.gpus && !f.info.GPUAware, a.filtered(f, ag.id, r.name, res, now):
			skipped = append(skipped, e)
			continue
		}
		chosen = e
		break
	}
	for _, e := range skipped {
		r.fwHeap.push(e)
	}
	a.scratch = skipped[:0]
	return chosen
}

// filtered reports whether one of f's live filters for role on the agent covers res.
func (a *Allocator) filtered(f *framework, agentID, role string, res mesos.Resources, now time.Time) bool {
	for _, fl := range f.filters[agentID] {
		if fl.role == role && now.Before(fl.expires) && containsAll(fl.res, res) {
			return true
		}
	}
	return false
}
