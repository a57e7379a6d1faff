package allocator

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

func TestWeightedRoles(t *testing.T) {
	a := newTest(t, Config{Weights: map[string]float64{"a": 3}})
	a.AddFramework(FrameworkInfo{ID: "fa", Roles: []string{"a"}}, true, nil)
	a.AddFramework(FrameworkInfo{ID: "fb", Roles: []string{"b"}}, true, nil)
	agentsNamed(a, 8, node(4, 4096))
	offers := a.Allocate(t0)
	if got := countBy(offers); got["fa"] != 6 || got["fb"] != 2 {
		t.Fatalf("offers = %v, want fa 6 (weight 3), fb 2", got)
	}
	for _, o := range offers {
		if want := map[string]string{"fa": "a", "fb": "b"}[o.FrameworkID]; o.Role != want {
			t.Fatalf("offer to %s in role %q", o.FrameworkID, o.Role)
		}
	}
}

func TestReservedResourcesOnlyToTheirRole(t *testing.T) {
	for name, reserve := range map[string]func(mesos.Resource, string) mesos.Resource{
		"reservations": reserved,
		"legacy role":  legacyReserved,
	} {
		t.Run(name, func(t *testing.T) {
			a := newTest(t, Config{})
			a.AddFramework(FrameworkInfo{ID: "star"}, true, nil)
			total := mesos.Resources{scalar("cpus", 2), reserve(scalar("cpus", 4), "r"), reserve(scalar("mem", 512), "r")}
			a.AddAgent("s1", "h1", total, nil)
			offers := a.Allocate(t0)
			if len(offers) != 1 || sum(offers[0].Resources, "cpus") != 2 || sum(offers[0].Resources, "mem") != 0 {
				t.Fatalf("offers to a '*' framework = %+v, want only the 2 unreserved cpus", offers)
			}
			if again := a.Allocate(t0); len(again) != 0 {
				t.Fatalf("reserved resources went to %v", fwIDs(again))
			}
			a.AddFramework(FrameworkInfo{ID: "rfw", Roles: []string{"r"}}, true, nil)
			offers = a.Allocate(t0)
			if len(offers) != 1 || offers[0].FrameworkID != "rfw" || offers[0].Role != "r" ||
				sum(offers[0].Resources, "cpus") != 4 || sum(offers[0].Resources, "mem") != 512 {
				t.Fatalf("offers = %+v, want the reservation for rfw", offers)
			}
			for _, r := range offers[0].Resources {
				if r.ReservationRole() != "r" {
					t.Fatalf("offered %v lost its reservation", r)
				}
			}
			// Both frameworks recover: the r framework gets reserved plus unreserved resources
			// when it comes first, the '*' one only the unreserved.
			a.Recover("s1", "rfw", offers[0].Resources, nil, t0)
			a.RemoveFramework("star")
			offers = a.Allocate(t0)
			if len(offers) != 1 || sum(offers[0].Resources, "cpus") != 6 {
				t.Fatalf("offers = %+v, want all 6 cpus for rfw", offers)
			}
			checkConsistent(t, a)
		})
	}
}

func TestSubroleGetsParentReservation(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "child", Roles: []string{"eng/batch"}}, true, nil)
	a.AddAgent("s1", "h1", mesos.Resources{reserved(scalar("cpus", 4), "eng")}, nil)
	offers := a.Allocate(t0)
	if len(offers) != 1 || offers[0].Role != "eng/batch" || sum(offers[0].Resources, "cpus") != 4 {
		t.Fatalf("offers = %+v", offers)
	}
}

func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		name        string
		refuse      *time.Duration
		cfg         Config
		notBefore   time.Duration // not offered at t0+notBefore-1ms
		offeredFrom time.Duration
	}{
		{name: "no filter", refuse: nil, offeredFrom: 0},
		{name: "zero", refuse: dur(0), offeredFrom: 0},
		{name: "10s", refuse: dur(10 * time.Second), notBefore: 10 * time.Second, offeredFrom: 10 * time.Second},
		{name: "negative is default 5s", refuse: dur(-1), notBefore: 5 * time.Second, offeredFrom: 5 * time.Second},
		{name: "negative with configured default", refuse: dur(-1), cfg: Config{DefaultRefuseSeconds: 30}, notBefore: 30 * time.Second, offeredFrom: 30 * time.Second},
		{name: "capped at a year", refuse: dur(10 * MaxRefuse), notBefore: MaxRefuse, offeredFrom: MaxRefuse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTest(t, tc.cfg)
			a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
			a.AddAgent("s1", "h1", node(4, 4096), nil)
			o := a.Allocate(t0)
			a.Recover("s1", "A", o[0].Resources, tc.refuse, t0)
			if tc.notBefore > 0 {
				if got := a.Allocate(t0.Add(tc.notBefore - time.Millisecond)); len(got) != 0 {
					t.Fatalf("re-offered before the filter expired: %+v", got)
				}
				if a.Stats().Filters != 1 {
					t.Fatalf("filters = %d, want 1", a.Stats().Filters)
				}
			}
			got := a.Allocate(t0.Add(tc.offeredFrom))
			if len(got) != 1 || !resources.Equivalent(got[0].Resources, o[0].Resources) {
				t.Fatalf("after expiry: %+v, want the same offer again", got)
			}
			if a.Stats().Filters != 0 {
				t.Fatalf("expired filter kept: %d", a.Stats().Filters)
			}
		})
	}
}

func TestFilterCoversSubsetsOnly(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	a.AddAgent("s1", "h1", node(4, 4096), nil)
	a.Allocate(t0)
	part := mesos.Resources{scalar("cpus", 2), scalar("mem", 1024)}
	a.Recover("s1", "A", part, dur(time.Hour), t0) // declines 2 cpus, keeps the rest
	if got := a.Allocate(t0.Add(time.Second)); len(got) != 0 {
		t.Fatalf("declined resources re-offered: %+v", got)
	}
	rest := mesos.Resources{scalar("cpus", 2), scalar("mem", 3072), ports(31000, 31999)}
	a.Recover("s1", "A", rest, nil, t0) // the rest comes back too
	got := a.Allocate(t0.Add(time.Second))
	if len(got) != 1 || sum(got[0].Resources, "cpus") != 4 {
		t.Fatalf("a larger offer than the refused one must pass the filter: %+v", got)
	}
	// Another framework is not affected by A's filter.
	b := newTest(t, Config{})
	b.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	b.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	b.AddAgent("s1", "h1", node(4, 4096), nil)
	first := b.Allocate(t0)[0]
	b.Recover("s1", first.FrameworkID, first.Resources, dur(time.Hour), t0)
	next := b.Allocate(t0)
	if len(next) != 1 || next[0].FrameworkID == first.FrameworkID {
		t.Fatalf("after %s declined, offers = %v, want the other framework", first.FrameworkID, fwIDs(next))
	}
}

func TestReviveClearsFilters(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	a.AddAgent("s1", "h1", node(4, 4096), nil)
	o := a.Allocate(t0)
	a.Recover("s1", "A", o[0].Resources, dur(time.Hour), t0)
	if got := a.Allocate(t0.Add(time.Minute)); len(got) != 0 {
		t.Fatalf("filtered agent offered: %+v", got)
	}
	a.Revive("A", nil)
	if got := a.Allocate(t0.Add(time.Minute)); len(got) != 1 {
		t.Fatalf("after Revive: %d offers, want 1", len(got))
	}
	if a.Stats().Filters != 0 {
		t.Fatalf("filters = %d after Revive", a.Stats().Filters)
	}
}

func TestSuppressPerRole(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "M", Roles: []string{"a", "b"}, MultiRole: true}, true, nil)
	agentsNamed(a, 4, node(4, 4096))
	a.Suppress("M", []string{"a"})
	offers := a.Allocate(t0)
	if len(offers) != 4 {
		t.Fatalf("%d offers, want 4 in role b", len(offers))
	}
	for _, o := range offers {
		if o.Role != "b" {
			t.Fatalf("offer in suppressed role %q", o.Role)
		}
		a.Recover(o.AgentID, "M", o.Resources, nil, t0)
	}
	a.Suppress("M", nil)
	if got := a.Allocate(t0); len(got) != 0 {
		t.Fatalf("suppressed framework got %d offers", len(got))
	}
	a.Revive("M", []string{"a"})
	offers = a.Allocate(t0)
	if len(offers) != 4 {
		t.Fatalf("%d offers after reviving a, want 4", len(offers))
	}
	for _, o := range offers {
		if o.Role != "a" {
			t.Fatalf("offer in still-suppressed role %q", o.Role)
		}
	}
}

func TestMultiRoleAllocationInfo(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "M", Roles: []string{"x", "y"}, MultiRole: true}, true, nil)
	agentsNamed(a, 2, node(4, 4096))
	offers := a.Allocate(t0)
	roles := map[string]bool{}
	for _, o := range offers {
		roles[o.Role] = true
		for _, r := range o.Resources {
			if r.GetAllocationInfo().GetRole() != o.Role {
				t.Fatalf("resource %v: allocation_info %v, want role %s", r, r.GetAllocationInfo(), o.Role)
			}
		}
	}
	if !roles["x"] || !roles["y"] {
		t.Fatalf("roles offered %v, want both x and y (DRF across the framework's roles)", roles)
	}
	// Recovering with allocation_info returns the resources to the right role.
	a.Recover(offers[0].AgentID, "M", offers[0].Resources, nil, t0)
	a.Recover(offers[1].AgentID, "M", offers[1].Resources, nil, t0)
	if s := a.Stats(); s.Allocated["cpus"] != 0 {
		t.Fatalf("allocated after recovering everything: %v", s.Allocated)
	}
	checkConsistent(t, a)
}

func TestInactiveFrameworkAndAgent(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, false, nil)
	a.AddAgent("s1", "h1", node(4, 4096), nil)
	if got := a.Allocate(t0); len(got) != 0 {
		t.Fatalf("inactive framework got %v", got)
	}
	a.DeactivateAgent("s1")
	a.ActivateFramework("A")
	if got := a.Allocate(t0); len(got) != 0 {
		t.Fatalf("deactivated agent offered: %v", got)
	}
	a.ActivateAgent("s1")
	if got := a.Allocate(t0); len(got) != 1 {
		t.Fatalf("%d offers, want 1", len(got))
	}
	a.AddAgent("s2", "h2", node(4, 4096), nil)
	a.DeactivateFramework("A")
	if got := a.Allocate(t0); len(got) != 0 {
		t.Fatalf("deactivated framework got %v", got)
	}
	if s := a.Stats(); s.ActiveFrameworks != 0 || s.Frameworks != 1 || s.Agents != 2 || s.ActiveAgents != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestOutstandingOfferCap(t *testing.T) {
	a := newTest(t, Config{MaxOutstandingOffers: 2})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	agentsNamed(a, 5, node(4, 4096))
	if got := a.Allocate(t0); len(got) != 2 {
		t.Fatalf("%d offers, want the cap of 2", len(got))
	}
	if got := a.Allocate(t0); len(got) != 0 {
		t.Fatalf("%d offers over the cap", len(got))
	}
	a.OfferAnswered("A")
	if got := a.Allocate(t0); len(got) != 1 {
		t.Fatalf("%d offers after one answer, want 1", len(got))
	}
	if s := a.Stats(); s.OutstandingOffers != 2 {
		t.Fatalf("outstanding = %d, want 2", s.OutstandingOffers)
	}
	// A capped framework does not block others.
	a.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	if got := countBy(a.Allocate(t0)); got["B"] != 2 || got["A"] != 0 {
		t.Fatalf("offers = %v, want 2 for B", got)
	}
}

func TestGPUAgentsOnlyToGPUAwareFrameworks(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "plain"}, true, nil)
	a.AddAgent("gpu", "g", append(node(4, 4096), scalar("gpus", 2)), nil)
	a.AddAgent("cpu", "c", node(4, 4096), nil)
	offers := a.Allocate(t0)
	if len(offers) != 1 || offers[0].AgentID != "cpu" {
		t.Fatalf("offers to a non-GPU framework = %+v, want only the cpu agent", offers)
	}
	a.AddFramework(FrameworkInfo{ID: "gpu-fw", GPUAware: true}, true, nil)
	offers = a.Allocate(t0)
	if len(offers) != 1 || offers[0].AgentID != "gpu" || offers[0].FrameworkID != "gpu-fw" || sum(offers[0].Resources, "gpus") != 2 {
		t.Fatalf("offers = %+v, want the gpu agent for gpu-fw", offers)
	}
}

func TestRecoveryAddAgentWithUsed(t *testing.T) {
	a := newTest(t, Config{})
	used := mesos.Resources{scalar("cpus", 3), scalar("mem", 1024), ports(31000, 31099)}
	a.AddAgent("s1", "h1", node(4, 4096), map[string]mesos.Resources{"A": used})
	// The framework re-subscribes later, reporting the same resources: not counted twice.
	a.AddFramework(FrameworkInfo{ID: "A"}, true, map[string]mesos.Resources{"s1": used, "gone": used})
	if s := a.Stats(); s.Allocated["cpus"] != 3 || s.Allocated["mem"] != 1024 {
		t.Fatalf("allocated = %v, want cpus 3 mem 1024", s.Allocated)
	}
	offers := a.Allocate(t0)
	if len(offers) != 1 || sum(offers[0].Resources, "cpus") != 1 || sum(offers[0].Resources, "mem") != 3072 {
		t.Fatalf("offers = %+v, want the unused cpus 1, mem 3072", offers)
	}
	p, _ := resources.Ports(offers[0].Resources...)
	if p.Min() != 31100 || p.Max() != 31999 {
		t.Fatalf("offered ports %v, want 31100-31999", p)
	}
	// The used resources come back when their task ends.
	a.Recover("s1", "A", used, nil, t0)
	if got := a.Allocate(t0); len(got) != 1 || sum(got[0].Resources, "cpus") != 3 {
		t.Fatalf("after the task ended: %+v", got)
	}
	checkConsistent(t, a)
}

func TestRecoveryAddFrameworkFirst(t *testing.T) {
	a := newTest(t, Config{})
	a.AddAgent("s0", "h0", node(4, 4096), nil)
	used := mesos.Resources{scalar("cpus", 3)}
	// Known agent s0 did not report A's tasks: A's report is booked. Unknown s1: left to AddAgent.
	a.AddFramework(FrameworkInfo{ID: "A"}, true, map[string]mesos.Resources{"s0": used, "s1": used})
	a.AddAgent("s1", "h1", node(4, 4096), map[string]mesos.Resources{"A": used})
	if s := a.Stats(); s.Allocated["cpus"] != 6 {
		t.Fatalf("allocated cpus = %v, want 6", s.Allocated["cpus"])
	}
	// DRF sees A's recovered share (6/8 cpus): a new framework gets both agents' leftovers first.
	a.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	offers := a.Allocate(t0)
	if got := countBy(offers); got["B"] != 2 {
		t.Fatalf("offers = %v, want both for B", got)
	}
	// Over-reporting can never over-commit an agent, nor leave what the agent says is in use
	// on offer: a scalar beyond what is left books all that is left (Mesos: available =
	// total - allocated, never negative).
	a.AddAgent("s2", "h2", node(4, 4096), map[string]mesos.Resources{"C": {scalar("cpus", 64), scalar("mem", 100)}})
	if s := a.Stats(); s.Allocated["cpus"] != 12 || s.Allocated["mem"] != 8192+100 {
		t.Fatalf("allocated = %v, want cpus 12, mem 8292", s.Allocated)
	}
	for _, o := range a.Allocate(t0) {
		if o.AgentID == "s2" && sum(o.Resources, "cpus") != 0 {
			t.Fatalf("s2 offers cpus %v it reported all in use", o.Resources)
		}
	}
	checkConsistent(t, a)
}

func TestRecoverMakesResourcesAvailable(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	a.AddAgent("s1", "h1", node(4, 4096), nil)
	o := a.Allocate(t0)[0]
	// The master accepted part of the offer and returns the unused rest (with allocation_info).
	rest := mesos.Resources{scalar("cpus", 1), ports(31500, 31999)}.Allocate(o.Role)
	a.Recover("s1", "A", rest, nil, t0)
	got := a.Allocate(t0)
	if len(got) != 1 || sum(got[0].Resources, "cpus") != 1 || sum(got[0].Resources, "mem") != 0 {
		t.Fatalf("offers = %+v, want the returned cpus 1 and ports", got)
	}
	if p, _ := resources.Ports(got[0].Resources...); p.Min() != 31500 || p.Max() != 31999 {
		t.Fatalf("ports %v", p)
	}
	// Resources the framework does not hold are ignored.
	a.Recover("s1", "A", mesos.Resources{scalar("cpus", 100)}, nil, t0)
	a.Recover("nope", "A", rest, nil, t0)
	if s := a.Stats(); s.Allocated["cpus"] != 4 {
		t.Fatalf("allocated cpus %v, want 4", s.Allocated["cpus"])
	}
	checkConsistent(t, a)
}

func TestRemoveFrameworkAndAgent(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	agentsNamed(a, 3, node(4, 4096))
	a.Allocate(t0)
	a.RemoveFramework("A")
	a.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	if got := countBy(a.Allocate(t0)); got["B"] != 3 || got["A"] != 0 {
		t.Fatalf("offers = %v, want B 3", got)
	}
	a.RemoveAgent("Saa")
	if s := a.Stats(); s.Agents != 2 || s.Total["cpus"] != 8 || s.Allocated["cpus"] != 8 {
		t.Fatalf("stats %+v", s)
	}
	checkConsistent(t, a)
}

func TestUpdateFrameworkRoles(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A", Roles: []string{"x"}}, true, nil)
	a.AddAgent("s1", "h1", node(4, 4096), nil)
	if o := a.Allocate(t0); len(o) != 1 || o[0].Role != "x" {
		t.Fatalf("offers %+v", o)
	}
	a.UpdateFramework(FrameworkInfo{ID: "A", Roles: []string{"y"}})
	a.AddAgent("s2", "h2", node(4, 4096), nil)
	if o := a.Allocate(t0); len(o) != 1 || o[0].Role != "y" {
		t.Fatalf("offers after role change %+v", o)
	}
	a.UpdateFramework(FrameworkInfo{ID: "A", Roles: []string{"y"}, GPUAware: true})
	a.AddAgent("s3", "h3", append(node(4, 4096), scalar("gpus", 1)), nil)
	if o := a.Allocate(t0); len(o) != 1 || o[0].AgentID != "s3" {
		t.Fatalf("offers after becoming GPU-aware %+v", o)
	}
}

func TestAllocateAgentsOnlyThoseAgents(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	agentsNamed(a, 4, node(4, 4096))
	got := a.AllocateAgents(t0, "Sab", "Sab", "unknown")
	if len(got) != 1 || got[0].AgentID != "Sab" || got[0].Hostname != "Sab.host" {
		t.Fatalf("offers %+v, want Sab only", got)
	}
}

func TestDeterministic(t *testing.T) {
	run := func(seed uint64) []Offer {
		a, _ := New(Config{Weights: map[string]float64{"a": 2}}, rand.New(rand.NewPCG(seed, 7)))
		for i, id := range []string{"f1", "f2", "f3", "f4"} {
			a.AddFramework(FrameworkInfo{ID: id, Roles: []string{[]string{"a", "b"}[i%2]}}, true, nil)
		}
		for i := range 30 {
			a.AddAgent(string(rune('A'+i)), "h", node(float64(1+i%5), float64(512*(1+i%3))), nil)
		}
		return a.Allocate(t0)
	}
	if x, y := run(1), run(1); !reflect.DeepEqual(x, y) {
		t.Fatal("same seed, different offers")
	}
	x, y := run(1), run(2)
	same := true
	for i := range x {
		same = same && x[i].AgentID == y[i].AgentID
	}
	if same {
		t.Fatal("different seeds visited agents in the same order")
	}
}
