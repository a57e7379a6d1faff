package master

import (
	"fmt"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
)

// allocateLocked runs one batch allocation. Callers hold m.mu.
func (m *Master) allocateLocked(now time.Time) {
	m.sendOffers(m.alloc.Allocate(now))
}

// generateOffersLocked allocates now, on the events after which Mesos'
// allocator generates offers at once (addFramework, activateFramework,
// reviveOffers: every agent; addSlave: that agent), not at the next batch.
// Resources recovered from ended tasks and declined offers wait for the
// next batch allocation (Mesos' recoverResources generates none) unless
// AllocateOnRelease. Callers hold m.mu.
func (m *Master) generateOffersLocked(agentIDs ...string) {
	if m.closed {
		return
	}
	now := m.cfg.Clock.Now()
	if len(agentIDs) == 0 {
		m.allocateLocked(now)
		return
	}
	m.sendOffers(m.alloc.AllocateAgents(now, agentIDs...))
}

// released allocates an agent's recovered resources at once in
// AllocateOnRelease mode. Callers hold m.mu.
func (m *Master) released(agentID string) {
	if m.cfg.AllocateOnRelease && !m.closed {
		m.sendOffers(m.alloc.AllocateAgents(m.cfg.Clock.Now(), agentID))
	}
}

// sendOffers turns allocations into offers, one OFFERS event per
// framework. Callers hold m.mu.
func (m *Master) sendOffers(allocs []allocator.Offer) {
	byFw := map[string][]mesos.Offer{}
	var order []string
	for _, a := range allocs {
		f, ag := m.fws[a.FrameworkID], m.agents[a.AgentID]
		if f == nil || ag == nil || f.sub == nil || !ag.active {
			// Stale decision: give the resources back.
			m.alloc.Recover(a.AgentID, a.FrameworkID, a.Resources, nil, m.cfg.Clock.Now())
			m.alloc.OfferAnswered(a.FrameworkID)
			continue
		}
		o := m.newOffer(f, ag, a)
		if _, ok := byFw[f.id]; !ok {
			order = append(order, f.id)
		}
		byFw[f.id] = append(byFw[f.id], o.offer)
	}
	for _, id := range order {
		f := m.fws[id]
		f.send(&scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: byFw[id]}})
	}
}

func (m *Master) newOffer(f *framework, ag *agent, a allocator.Offer) *offer {
	id := fmt.Sprintf("%s-O%d", m.cfg.ID, m.nextOffer)
	m.nextOffer++
	role := a.Role
	mo := mesos.Offer{
		ID:          mesos.OfferID{Value: id},
		FrameworkID: mesos.FrameworkID{Value: f.id},
		AgentID:     mesos.AgentID{Value: ag.id},
		Hostname:    ag.info.Hostname,
		Resources:   cloneResources(a.Resources),
		Attributes:  ag.info.Attributes,
		ExecutorIDs: []mesos.ExecutorID{},
	}
	var execs []string
	for eid := range f.executors[ag.id] {
		execs = append(execs, eid)
	}
	sort.Strings(execs)
	for _, e := range execs {
		mo.ExecutorIDs = append(mo.ExecutorIDs, mesos.ExecutorID{Value: e})
	}
	if f.caps.multiRole {
		mo.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
	} else {
		stripAllocationInfo(mo.Resources)
	}
	o := &offer{id: id, fw: f.id, agent: ag.id, role: role, res: a.Resources, offer: mo}
	m.offers[id] = o
	f.offers[id] = o
	m.inc("master/offers_sent", 1)
	if m.cfg.OfferTimeout > 0 {
		o.expire = m.after(m.cfg.OfferTimeout, func(time.Time) {
			if m.offers[id] == o {
				m.inc("master/offers_rescinded_timeout", 1)
				m.removeOffer(o, true, nil)
			}
		})
	}
	return o
}

func cloneResources(rs mesos.Resources) mesos.Resources {
	if rs == nil {
		return mesos.Resources{}
	}
	return rs.Clone()
}

func stripAllocationInfo(rs mesos.Resources) {
	for i := range rs {
		rs[i].AllocationInfo = nil
	}
}

// withAllocationInfo returns a copy of rs carrying allocation_info.role.
func withAllocationInfo(rs mesos.Resources, role string) mesos.Resources {
	out := cloneResources(rs)
	for i := range out {
		r := role
		out[i].AllocationInfo = &mesos.Resource_AllocationInfo{Role: &r}
	}
	return out
}

// removeOffer forgets an offer and recovers its resources (with a filter
// when refuse is set); rescind sends RESCIND. Callers hold m.mu.
func (m *Master) removeOffer(o *offer, rescind bool, refuse *time.Duration) {
	delete(m.offers, o.id)
	if f := m.fws[o.fw]; f != nil {
		delete(f.offers, o.id)
		if rescind {
			m.inc("master/offers_rescinded", 1)
			f.send(&scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: o.id}}})
		}
	}
	m.cancel(o.expire)
	m.alloc.Recover(o.agent, o.fw, o.res, refuse, m.cfg.Clock.Now())
	m.alloc.OfferAnswered(o.fw)
}

// removeOffers drops all of a framework's offers. Callers hold m.mu.
func (m *Master) removeOffers(f *framework, rescind bool, _ time.Time) {
	for _, id := range sortedKeys(f.offers) {
		m.removeOffer(f.offers[id], rescind, nil)
	}
}

// rescindAgentOffers rescinds every offer on an agent. Callers hold m.mu.
func (m *Master) rescindAgentOffers(agentID string) {
	for _, id := range sortedKeys(m.offers) {
		if o := m.offers[id]; o.agent == agentID {
			m.removeOffer(o, true, nil)
		}
	}
}

func sortedKeys[V any](mp map[string]V) []string {
	ks := make([]string, 0, len(mp))
	for k := range mp {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// refuseDuration turns Filters into the allocator's refuse duration:
// default 5s, negative = default, capped by the allocator.
func refuseDuration(fl *mesos.Filters) *time.Duration {
	d := 5 * time.Second
	if fl != nil && fl.RefuseSeconds != nil {
		s := *fl.RefuseSeconds
		switch {
		case s != s || s < 0:
			d = -1
		case s > allocator.MaxRefuse.Seconds():
			d = allocator.MaxRefuse
		default:
			d = time.Duration(s * float64(time.Second))
		}
	}
	return &d
}

// decline answers DECLINE. Callers hold m.mu.
func (m *Master) decline(f *framework, d *scheduler.Call_Decline) {
	refuse := refuseDuration(d.Filters)
	for _, id := range d.OfferIDs {
		if o := f.offers[id.Value]; o != nil {
			m.removeOffer(o, false, refuse)
			m.inc("master/offers_declined", 1)
		}
	}
}

func (m *Master) revive(f *framework, roles []string) {
	m.alloc.Revive(f.id, roles)
	m.generateOffersLocked()
}

func (m *Master) suppress(f *framework, roles []string) {
	m.alloc.Suppress(f.id, roles)
}
