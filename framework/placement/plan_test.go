package placement

import (
	"math"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement/constraints"
	"github.com/flint-mesos/flint/framework/resource"
)

// reservedCPUs is cpus reserved for role "batch", which Take uses before
// unreserved ones.
func reservedCPUs(v float64) mesos.Resource {
	r := resource.ScalarResource(resource.CPUs, v)
	role := "batch"
	r.Role, r.Reservation = &role, &mesos.Resource_ReservationInfo{Principal: &role}
	return r
}

// The executor plan says exactly what each launch takes: its pieces of the
// offer (reserved cpus first) and the port numbers, never overlapping
// another launch's.
func TestExecutorPlanSaysWhatToTake(t *testing.T) {
	offer := mesos.Resources{reservedCPUs(1), resource.ScalarResource(resource.CPUs, 3), resource.ScalarResource(resource.Mem, 4096),
		resource.RangeResource(resource.Ports, 31000, 31003)}
	p := Executors(ExecutorRequest{Offers: []Offer{{ID: "o1", AgentID: "a1", Host: "h1", Resources: offer}},
		ExecutorCores: 2, TaskCPUs: 1, MemMB: 1024, Ports: 2, CoresMax: math.MaxInt, Limit: -1})
	if len(p.Launches) != 2 {
		t.Fatalf("launches %+v, want 2", p.Launches)
	}
	var all mesos.Resources
	for i, l := range p.Launches {
		if got := resource.Amount(l.Resources, resource.CPUs); got != 2 {
			t.Errorf("launch %d takes %g cpus, want 2", i, got)
		}
		if got := resource.Amount(l.Resources, resource.Mem); got != 1024 {
			t.Errorf("launch %d takes %g mem, want 1024", i, got)
		}
		if got := resource.Values(l.Resources, resource.Ports); !slices.Equal(got, l.Ports) || len(got) != 2 {
			t.Errorf("launch %d: ports in resources %v, named %v", i, got, l.Ports)
		}
		all = append(all, l.Resources...)
	}
	if !slices.Equal(p.Launches[0].Ports, []uint64{31000, 31001}) || !slices.Equal(p.Launches[1].Ports, []uint64{31002, 31003}) {
		t.Errorf("ports %v and %v, want the lowest first and none twice", p.Launches[0].Ports, p.Launches[1].Ports)
	}
	if !p.Launches[0].Resources[0].IsReserved("batch") {
		t.Errorf("the first launch's cpus %v: want the reserved cpu first", p.Launches[0].Resources)
	}
	if _, _, ok := resource.Take(offer, resource.Ask{resource.ScalarNeed(resource.CPUs, resource.Amount(all, resource.CPUs)),
		resource.RangeNeed(resource.Ports, len(resource.Values(all, resource.Ports)))}); !ok {
		t.Errorf("the launches together take more than the offer: %v", all)
	}
}

// The slot plan says what a new executor and each slot take, the last
// slot the cpus beside the executor's share.
func TestSlotPlanSaysWhatToTake(t *testing.T) {
	agent := AgentOffers{AgentID: "a1", Host: "h1", Resources: mesos.Resources{resource.ScalarResource(resource.CPUs, 3),
		resource.ScalarResource(resource.Mem, 2048), resource.RangeResource(resource.Ports, 31000, 31009)}}
	p := Slots(SlotRequest{Agents: []AgentOffers{agent}, TaskCPUs: 1, ExecCPUs: 0.25, ExecMemMB: 512, ExecPorts: 1, CoresMax: math.Inf(1)})
	s := p.Agents[0]
	if !s.NewExecutor || s.Slots != 3 || s.ShortCPUs != 0.75 || len(s.Slot) != 3 {
		t.Fatalf("plan %+v: want a new executor and 3 slots, the last of 0.75 cpus", s)
	}
	if resource.Amount(s.Executor, resource.CPUs) != 0.25 || resource.Amount(s.Executor, resource.Mem) != 512 || !slices.Equal(s.ExecutorPorts, []uint64{31000}) {
		t.Errorf("executor takes %v (ports %v)", s.Executor, s.ExecutorPorts)
	}
	for i, want := range []float64{1, 1, 0.75} {
		if got := resource.Amount(s.Slot[i], resource.CPUs); got != want {
			t.Errorf("slot %d takes %g cpus, want %g", i, got, want)
		}
		if len(s.Slot[i]) != 1 {
			t.Errorf("slot %d takes %v, want cpus only", i, s.Slot[i])
		}
	}
	// The cores cap cuts Slots, not what the fitting slots would take.
	p = Slots(SlotRequest{Agents: []AgentOffers{agent}, TaskCPUs: 1, ExecCPUs: 0.25, ExecMemMB: 512, CoresMax: 1.5})
	if s := p.Agents[0]; s.Slots != 1 || s.Fits != 3 || len(s.Slot) != 3 {
		t.Errorf("capped plan %+v: want 1 slot of 3 that fit", s)
	}
}

// Admit is the one whole-offer checker chain: fine mode admits offers with
// it, and coarse mode's Executors filters with the same reasons and words.
func TestAdmitIsTheChainExecutorsRuns(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs, err := constraints.Parse("zone:a")
	if err != nil {
		t.Fatal(err)
	}
	zone := func(z string) []mesos.Attribute {
		return []mesos.Attribute{{Name: "zone", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: z}}}
	}
	res := mesos.Resources{resource.ScalarResource(resource.CPUs, 4), resource.ScalarResource(resource.Mem, 4096)}
	offers := []Offer{
		{ID: "o1", AgentID: "a1", Host: "h1", Resources: res, Attributes: zone("a")},
		{ID: "o2", AgentID: "a2", Host: "h2", Resources: res, Attributes: zone("b")},
		{ID: "o3", AgentID: "a3", Host: "h3", Resources: res, Attributes: zone("a")},
		{ID: "o4", AgentID: "a4", Host: "h4", Resources: res, Attributes: zone("a")},
	}
	c := Checks{Constraints: cs, Now: now,
		Excluded: map[string]Exclusion{"a3": {Until: now.Add(time.Minute), Failures: 2, Last: "exit 1"}},
		Backoff:  map[string]time.Time{"a4": now.Add(time.Second)}}
	pass, filtered := Admit(offers, c)
	if len(pass) != 1 || pass[0].ID != "o1" {
		t.Fatalf("admitted %+v, want o1 only", pass)
	}
	want := []Reason{ConstraintUnmet, AgentExcluded, AgentBackoff}
	for i, f := range filtered {
		if f.Reason != want[i] {
			t.Errorf("filtered[%d] = %v, want %v", i, f.Reason, want[i])
		}
	}
	plan := Executors(ExecutorRequest{Offers: offers, Now: now, ExecutorCores: 1, TaskCPUs: 1, MemMB: 512, CoresMax: math.MaxInt, Limit: -1,
		Constraints: c.Constraints, Excluded: c.Excluded, Backoff: c.Backoff})
	if !slices.Equal(plan.Declined, filtered) {
		t.Errorf("Executors declined %+v, Admit filtered %+v: want the same", plan.Declined, filtered)
	}
}
