package allocator

import (
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// AddFramework adds (or, for a known id, updates) a framework. used lists what it already runs,
// by agent, when the master recovers it; resources on agents the allocator already knows are
// tracked unless the agent reported them itself (AddAgent), resources on unknown agents are
// left to their AddAgent. Used resources without allocation_info are booked to the framework's
// first role.
func (a *Allocator) AddFramework(fw FrameworkInfo, active bool, used map[string]mesos.Resources) {
	f := a.frameworks[fw.ID]
	if f == nil {
		f = &framework{
			suppressed: map[string]bool{},
			alloc:      map[string]qvec{},
			filters:    map[string][]filter{},
			entries:    map[string]*entry{},
		}
		a.frameworks[fw.ID] = f
		a.adoptRecords(fw.ID, f)
	}
	a.setInfo(f, fw)
	f.active = active
	for _, agentID := range sortedKeys(used) {
		ag := a.agents[agentID]
		if ag == nil || a.hasRecords(ag, fw.ID) {
			continue
		}
		a.trackUsed(ag, fw.ID, f.roles[0], used[agentID])
	}
}

// adoptRecords books allocations reported by agents before the framework was added.
func (a *Allocator) adoptRecords(id string, f *framework) {
	for _, agentID := range sortedKeys(a.placed[id]) {
		ag := a.agents[agentID]
		for _, k := range recordKeys(ag, id) {
			q := f.alloc[k.role]
			q.add(a.quantities(ag.alloc[k]), 1)
			f.alloc[k.role] = q
		}
	}
}

// trackUsed books resources a framework runs on ag: each resource goes to its allocation_info
// role, else defRole. Only what is still available is booked, so reports can never
// over-commit an agent; a scalar reported beyond what is left books all that is left, as
// Mesos' allocator leaves nothing of it available (total - allocated, negatives dropped)
// rather than offering a resource the agent says is in use.
func (a *Allocator) trackUsed(ag *agent, fwID, defRole string, used mesos.Resources) {
	byRole := map[string]mesos.Resources{}
	for i := range used {
		r := &used[i]
		role := defRole
		if ai := r.GetAllocationInfo(); ai != nil && ai.Role != nil {
			role = *ai.Role
		}
		byRole[role] = append(byRole[role], *r)
	}
	for _, role := range sortedKeys(byRole) {
		var take mesos.Resources
		for _, r := range stripped(byRole[role]) {
			if !containsAll(ag.available, mesos.Resources{r}) {
				var ok bool
				if r, ok = availablePart(ag.available, r); !ok {
					continue
				}
			}
			subtractAll(&ag.available, mesos.Resources{r})
			take = append(take, r)
		}
		a.track(ag, fwID, role, take)
	}
}

func (a *Allocator) setInfo(f *framework, fw FrameworkInfo) {
	newRoles := normRoles(fw.Roles)
	for _, old := range f.roles {
		if !slices.Contains(newRoles, old) {
			r := a.roles[old]
			delete(r.frameworks, fw.ID)
			delete(f.suppressed, old)
			delete(f.entries, old)
			a.dropFilters(f, func(fl filter) bool { return fl.role == old })
			a.dropRoleIfUnused(r)
		}
	}
	for _, name := range newRoles {
		a.role(name).frameworks[fw.ID] = f
	}
	f.info = fw
	f.info.Roles = newRoles
	f.roles = newRoles
}

// RemoveFramework forgets a framework and returns everything allocated to it (offered or used)
// to its agents.
func (a *Allocator) RemoveFramework(id string) {
	f := a.frameworks[id]
	for _, agentID := range sortedKeys(a.placed[id]) {
		ag := a.agents[agentID]
		for _, k := range recordKeys(ag, id) {
			a.untrack(ag, id, k.role, cloneRes(ag.alloc[k]))
		}
	}
	if f == nil {
		return
	}
	a.dropFilters(f, func(filter) bool { return true })
	for _, name := range f.roles {
		r := a.roles[name]
		delete(r.frameworks, id)
		a.dropRoleIfUnused(r)
	}
	delete(a.frameworks, id)
}

// ActivateFramework makes a framework eligible for offers again.
func (a *Allocator) ActivateFramework(id string) {
	if f := a.frameworks[id]; f != nil {
		f.active = true
	}
}

// DeactivateFramework stops offers to a framework (disconnected, failing over). Its
// allocations stay until recovered or the framework is removed.
func (a *Allocator) DeactivateFramework(id string) {
	if f := a.frameworks[id]; f != nil {
		f.active = false
	}
}

// UpdateFramework applies changed roles or capabilities (UPDATE_FRAMEWORK, re-SUBSCRIBE).
// Allocations in a dropped role stay booked to it until recovered, as in Mesos; suppression and
// filters of dropped roles are forgotten.
func (a *Allocator) UpdateFramework(fw FrameworkInfo) {
	if f := a.frameworks[fw.ID]; f != nil {
		a.setInfo(f, fw)
	}
}

// Suppress stops offers to a framework for roles (empty = all its roles) until Revive.
func (a *Allocator) Suppress(frameworkID string, roles []string) {
	f := a.frameworks[frameworkID]
	if f == nil {
		return
	}
	for _, r := range a.selectRoles(f, roles) {
		f.suppressed[r] = true
	}
}

// SetSuppressed makes exactly roles suppressed among the framework's roles, leaving its
// filters as they are: a re-subscription's suppressed_roles, which Mesos' allocator applies
// this way (updateFramework) when a framework fails over.
func (a *Allocator) SetSuppressed(frameworkID string, roles []string) {
	f := a.frameworks[frameworkID]
	if f == nil {
		return
	}
	clear(f.suppressed)
	for _, r := range roles {
		if slices.Contains(f.roles, r) {
			f.suppressed[r] = true
		}
	}
}

// Revive clears a framework's filters and suppression for roles (empty = all its roles).
func (a *Allocator) Revive(frameworkID string, roles []string) {
	f := a.frameworks[frameworkID]
	if f == nil {
		return
	}
	sel := a.selectRoles(f, roles)
	for _, r := range sel {
		delete(f.suppressed, r)
	}
	a.dropFilters(f, func(fl filter) bool { return len(roles) == 0 || slices.Contains(sel, fl.role) })
}

// selectRoles returns the roles of f named in rs, or all of f's roles when rs is empty.
func (a *Allocator) selectRoles(f *framework, rs []string) []string {
	if len(rs) == 0 {
		return f.roles
	}
	var out []string
	for _, r := range rs {
		if slices.Contains(f.roles, r) {
			out = append(out, r)
		}
	}
	return out
}

func (a *Allocator) dropFilters(f *framework, drop func(filter) bool) {
	for agentID, fs := range f.filters {
		kept := fs[:0]
		for _, fl := range fs {
			if drop(fl) {
				a.filters--
			} else {
				kept = append(kept, fl)
			}
		}
		if len(kept) == 0 {
			delete(f.filters, agentID)
		} else {
			f.filters[agentID] = kept
		}
	}
}

// OfferAnswered tells the allocator that one of the framework's offers was accepted, declined
// or rescinded, freeing a slot under Config.MaxOutstandingOffers.
func (a *Allocator) OfferAnswered(frameworkID string) {
	if f := a.frameworks[frameworkID]; f != nil && f.outstanding > 0 {
		f.outstanding--
	}
}

// availablePart is the part of scalar r that available holds (false if none, or r is not a
// scalar).
func availablePart(available mesos.Resources, r mesos.Resource) (mesos.Resource, bool) {
	if r.Scalar == nil {
		return r, false
	}
	for i := range available {
		a := &available[i]
		if a.Scalar == nil || a.Scalar.Value <= 0 || a.Scalar.Value >= r.Scalar.Value {
			continue
		}
		part := cloneOne(&r)
		part.Scalar.Value = a.Scalar.Value
		if a.Contains(part) {
			return part, true
		}
	}
	return r, false
}
