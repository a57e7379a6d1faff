package allocator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"pgregory.net/rapid"
)

// model is the test's own ledger of what the allocator handed out.
type model struct {
	a          *Allocator
	now        time.Time
	totals     map[string]mesos.Resources            // agent → total
	active     map[string]bool                       // agent → active
	fws        map[string]FrameworkInfo              // known frameworks
	fwActive   map[string]bool                       // framework → active
	suppressed map[string]map[string]bool            // framework → role → suppressed
	held       map[string]map[string]mesos.Resources // agent → framework → offered, not recovered
}

func (m *model) genTotal(t *rapid.T) mesos.Resources {
	total := mesos.Resources{
		scalar("cpus", float64(rapid.IntRange(1, 8).Draw(t, "cpus"))),
		scalar("mem", float64(rapid.IntRange(1, 4).Draw(t, "mem")*1024)),
		ports(31000, uint64(31000+rapid.IntRange(0, 99).Draw(t, "ports"))),
	}
	if rapid.IntRange(0, 4).Draw(t, "gpu") == 0 {
		total = append(total, scalar("gpus", 1))
	}
	if rapid.Bool().Draw(t, "reserved") {
		total = append(total, reserved(scalar("cpus", 2), "a"))
	}
	return total
}

func (m *model) actions() map[string]func(*rapid.T) {
	agentID := rapid.SampledFrom([]string{"s0", "s1", "s2", "s3", "s4", "s5"})
	fwID := rapid.SampledFrom([]string{"f0", "f1", "f2", "f3", "f4"})
	roleSets := rapid.SampledFrom([][]string{nil, {"a"}, {"b"}, {"*", "a"}, {"a", "b"}})
	refuse := rapid.SampledFrom([]*time.Duration{nil, dur(0), dur(-1), dur(time.Second), dur(time.Minute)})
	return map[string]func(*rapid.T){
		"addAgent": func(t *rapid.T) {
			id := agentID.Draw(t, "agent")
			if _, ok := m.totals[id]; ok {
				t.Skip("known agent")
			}
			total := m.genTotal(t)
			m.a.AddAgent(id, id, total, nil)
			m.totals[id], m.active[id], m.held[id] = total, true, map[string]mesos.Resources{}
		},
		"removeAgent": func(t *rapid.T) {
			id := agentID.Draw(t, "agent")
			m.a.RemoveAgent(id)
			delete(m.totals, id)
			delete(m.held, id)
		},
		"toggleAgent": func(t *rapid.T) {
			id := agentID.Draw(t, "agent")
			if _, ok := m.totals[id]; !ok {
				t.Skip("unknown agent")
			}
			if m.active[id] {
				m.a.DeactivateAgent(id)
			} else {
				m.a.ActivateAgent(id)
			}
			m.active[id] = !m.active[id]
		},
		"addFramework": func(t *rapid.T) {
			fw := FrameworkInfo{ID: fwID.Draw(t, "fw"), Roles: roleSets.Draw(t, "roles"), GPUAware: rapid.Bool().Draw(t, "gpu")}
			fw.MultiRole = len(fw.Roles) > 1
			if _, ok := m.fws[fw.ID]; ok {
				t.Skip("known framework")
			}
			active := rapid.Bool().Draw(t, "active")
			m.a.AddFramework(fw, active, nil)
			m.fws[fw.ID], m.fwActive[fw.ID], m.suppressed[fw.ID] = fw, active, map[string]bool{}
		},
		"removeFramework": func(t *rapid.T) {
			id := fwID.Draw(t, "fw")
			m.a.RemoveFramework(id)
			delete(m.fws, id)
			for _, h := range m.held {
				delete(h, id)
			}
		},
		"toggleFramework": func(t *rapid.T) {
			id := fwID.Draw(t, "fw")
			if _, ok := m.fws[id]; !ok {
				t.Skip("unknown framework")
			}
			if m.fwActive[id] {
				m.a.DeactivateFramework(id)
			} else {
				m.a.ActivateFramework(id)
			}
			m.fwActive[id] = !m.fwActive[id]
		},
		"suppressRevive": func(t *rapid.T) {
			id := fwID.Draw(t, "fw")
			fw, ok := m.fws[id]
			if !ok {
				t.Skip("unknown framework")
			}
			roles := normRoles(fw.Roles)
			sel := roles
			if rapid.Bool().Draw(t, "one role") {
				sel = []string{rapid.SampledFrom(roles).Draw(t, "role")}
			}
			if rapid.Bool().Draw(t, "suppress") {
				m.a.Suppress(id, sel)
				for _, r := range sel {
					m.suppressed[id][r] = true
				}
			} else {
				m.a.Revive(id, sel)
				for _, r := range sel {
					delete(m.suppressed[id], r)
				}
			}
		},
		"allocate": func(t *rapid.T) {
			m.now = m.now.Add(time.Duration(rapid.IntRange(0, 3000).Draw(t, "ms")) * time.Millisecond)
			var offers []Offer
			if rapid.Bool().Draw(t, "batch") {
				offers = m.a.Allocate(m.now)
			} else {
				offers = m.a.AllocateAgents(m.now, agentID.Draw(t, "agent"))
			}
			for _, o := range offers {
				m.checkOffer(t, o)
			}
		},
		"recover": func(t *rapid.T) {
			ag := agentID.Draw(t, "agent")
			fw := fwID.Draw(t, "fw")
			h := m.held[ag][fw]
			if len(h) == 0 {
				t.Skip("nothing held")
			}
			back := h
			if rapid.Bool().Draw(t, "partial") {
				back = mesos.Resources{h[rapid.IntRange(0, len(h)-1).Draw(t, "which")]}
			}
			back = cloneRes(back)
			m.held[ag][fw] = h.Minus(back...)
			m.a.Recover(ag, fw, back, refuse.Draw(t, "refuse"), m.now)
			m.a.OfferAnswered(fw)
		},
	}
}

func (m *model) checkOffer(t *rapid.T, o Offer) {
	fw, ok := m.fws[o.FrameworkID]
	switch {
	case !ok:
		t.Fatalf("offer to removed/unknown framework %s", o.FrameworkID)
	case !m.fwActive[o.FrameworkID]:
		t.Fatalf("offer to inactive framework %s", o.FrameworkID)
	case !slices.Contains(normRoles(fw.Roles), o.Role):
		t.Fatalf("offer to %s in foreign role %s", o.FrameworkID, o.Role)
	case m.suppressed[o.FrameworkID][o.Role]:
		t.Fatalf("offer to %s in suppressed role %s", o.FrameworkID, o.Role)
	case !m.active[o.AgentID]:
		t.Fatalf("offer of inactive agent %s", o.AgentID)
	case hasGPUs(m.totals[o.AgentID]) && !fw.GPUAware:
		t.Fatalf("gpu agent %s offered to non-GPU framework %s", o.AgentID, o.FrameworkID)
	}
	for _, r := range o.Resources {
		if !r.IsAllocatableTo(o.Role) {
			t.Fatalf("%v offered to role %s", r, o.Role)
		}
		if r.GetAllocationInfo().GetRole() != o.Role {
			t.Fatalf("%v lacks allocation_info %s", r, o.Role)
		}
	}
	plainRes := stripped(o.Resources)
	h := m.held[o.AgentID][o.FrameworkID]
	addAll(&h, plainRes)
	m.held[o.AgentID][o.FrameworkID] = h
	var all mesos.Resources
	for _, id := range sortedKeys(m.held[o.AgentID]) {
		addAll(&all, m.held[o.AgentID][id])
	}
	if !resources.ContainsAll(m.totals[o.AgentID], all) {
		t.Fatalf("agent %s over-committed: offered %v, total %v", o.AgentID, all, m.totals[o.AgentID])
	}
}

func TestPropertyNeverOvercommits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, err := New(Config{MaxOutstandingOffers: rapid.IntRange(0, 3).Draw(t, "cap")}, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1)))
		if err != nil {
			t.Fatal(err)
		}
		m := &model{
			a: a, now: t0,
			totals: map[string]mesos.Resources{}, active: map[string]bool{},
			fws: map[string]FrameworkInfo{}, fwActive: map[string]bool{},
			suppressed: map[string]map[string]bool{}, held: map[string]map[string]mesos.Resources{},
		}
		acts := m.actions()
		acts[""] = func(t *rapid.T) { checkConsistent(t, a) }
		t.Repeat(acts)
	})
}

// A framework with no allocation, while every other framework (in its role, and every other
// role) holds something, gets an offer within two rounds once resources free up (here: another
// framework leaves). Hierarchical DRF is fair between roles first: a framework whose role
// already holds more than another role's weighted share legitimately waits, so the starved
// framework is either in a fresh role or every framework shares one role.
func TestPropertyStarvedFrameworkServedWithinTwoRounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, _ := New(Config{Weights: map[string]float64{"a": rapid.Float64Range(0.5, 4).Draw(t, "weight")}},
			rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 2)))
		nf := rapid.IntRange(1, 5).Draw(t, "frameworks")
		oneRole := rapid.Bool().Draw(t, "one role")
		for i := range nf {
			role := "*"
			if !oneRole {
				role = rapid.SampledFrom([]string{"*", "a"}).Draw(t, "role")
			}
			a.AddFramework(FrameworkInfo{ID: fmt.Sprintf("f%d", i), Roles: []string{role}}, true, nil)
		}
		na := rapid.IntRange(nf, nf+6).Draw(t, "agents")
		for i := range na {
			a.AddAgent(fmt.Sprintf("s%d", i), "h", node(float64(rapid.IntRange(1, 16).Draw(t, "cpus")), float64(rapid.IntRange(1, 8).Draw(t, "gb")*1024)), nil)
		}
		// Role-level DRF may leave a framework without an offer in the first round; the
		// property needs every other framework to hold something, so those leave.
		served := countBy(a.Allocate(t0))
		var holders []string
		for i := range nf {
			if id := fmt.Sprintf("f%d", i); served[id] > 0 {
				holders = append(holders, id)
			} else {
				a.RemoveFramework(id)
			}
		}
		if len(holders) == 0 {
			t.Fatalf("first round served nobody: %v", served)
		}
		starved := rapid.SampledFrom([]string{"aaa", "zzz"}).Draw(t, "starved id")
		starvedRole := "b"
		if oneRole {
			starvedRole = "*"
		}
		a.AddFramework(FrameworkInfo{ID: starved, Roles: []string{starvedRole}}, true, nil)
		a.RemoveFramework(rapid.SampledFrom(holders).Draw(t, "leaves"))
		for round := range 2 {
			if countBy(a.Allocate(t0.Add(time.Duration(round) * time.Second)))[starved] > 0 {
				return
			}
		}
		t.Fatalf("%s got no offer within two rounds", starved)
	})
}
