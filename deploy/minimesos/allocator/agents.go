package allocator

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// AddAgent adds an active agent with its total resources and what frameworks already use on it
// (agent re-registration after a master failover). Used resources are booked to their
// allocation_info role, else to the framework's first role (known framework) or "*"; only used
// resources contained in the total are booked. Re-adding a known agent replaces it.
func (a *Allocator) AddAgent(id, hostname string, total mesos.Resources, used map[string]mesos.Resources) {
	if a.agents[id] != nil {
		a.RemoveAgent(id)
	}
	tot := stripped(total)
	ag := &agent{
		id:        id,
		hostname:  hostname,
		total:     tot,
		totalQ:    a.quantities(tot),
		available: cloneRes(tot),
		alloc:     map[allocKey]mesos.Resources{},
		active:    true,
		gpus:      hasGPUs(tot),
		pos:       len(a.order),
	}
	a.agents[id] = ag
	a.order = append(a.order, ag)
	a.totalQ.add(ag.totalQ, 1)
	for _, fwID := range sortedKeys(used) {
		def := mesos.DefaultRole
		if f := a.frameworks[fwID]; f != nil {
			def = f.roles[0]
		}
		a.trackUsed(ag, fwID, def, used[fwID])
	}
}

// RemoveAgent forgets an agent, everything allocated on it and every filter for it.
func (a *Allocator) RemoveAgent(id string) {
	ag := a.agents[id]
	if ag == nil {
		return
	}
	for _, k := range recordKeys(ag, "") {
		a.untrack(ag, k.fw, k.role, cloneRes(ag.alloc[k]))
	}
	for _, fwID := range sortedKeys(a.frameworks) {
		f := a.frameworks[fwID]
		if fs, ok := f.filters[id]; ok {
			a.filters -= len(fs)
			delete(f.filters, id)
		}
	}
	a.totalQ.add(ag.totalQ, -1)
	last := a.order[len(a.order)-1]
	a.order[ag.pos] = last
	last.pos = ag.pos
	a.order[len(a.order)-1] = nil
	a.order = a.order[:len(a.order)-1]
	delete(a.agents, id)
}

// DeactivateAgent stops offering an agent's resources (paused, draining, unhealthy); its
// resources still count in the cluster total.
func (a *Allocator) DeactivateAgent(id string) {
	if ag := a.agents[id]; ag != nil {
		ag.active = false
	}
}

// ActivateAgent offers a deactivated agent again.
func (a *Allocator) ActivateAgent(id string) {
	if ag := a.agents[id]; ag != nil {
		ag.active = true
	}
}

// Recover returns resources of a framework on an agent (declined or unused part of an offer,
// ended task or executor, rescinded offer). Each resource goes back from the record of its
// allocation_info role, else from the first of the framework's records on that agent that
// contains it; resources the allocator does not hold for the framework are ignored. A non-nil
// refuse installs, for every role something was recovered from, a filter: those resources (or
// any subset) are not offered to the framework on that agent before now+refuse. A negative
// refuse means Config.DefaultRefuseSeconds, zero means no filter, and it is capped at MaxRefuse.
func (a *Allocator) Recover(agentID, frameworkID string, res mesos.Resources, refuse *time.Duration, now time.Time) {
	ag := a.agents[agentID]
	if ag == nil {
		return
	}
	keys := recordKeys(ag, frameworkID)
	back := map[string]mesos.Resources{}
	var order []string
	for i := range res {
		r := &res[i]
		if r.Validate() != nil || r.IsEmpty() {
			continue
		}
		want := ""
		if ai := r.GetAllocationInfo(); ai != nil && ai.Role != nil {
			want = *ai.Role
		}
		plainR := stripped(mesos.Resources{*r})
		for _, k := range keys {
			if (want == "" || k.role == want) && containsAll(ag.alloc[k], plainR) {
				a.untrack(ag, frameworkID, k.role, plainR)
				if _, seen := back[k.role]; !seen {
					order = append(order, k.role)
				}
				back[k.role] = append(back[k.role], plainR...)
				break
			}
		}
	}
	f := a.frameworks[frameworkID]
	if refuse == nil || f == nil {
		return
	}
	d := *refuse
	if d < 0 {
		d = a.defaultRefuse
	}
	d = min(d, MaxRefuse)
	if d == 0 {
		return
	}
	for _, role := range order {
		f.filters[agentID] = append(f.filters[agentID], filter{role: role, res: stripped(back[role]), expires: now.Add(d)})
		a.filters++
	}
}
