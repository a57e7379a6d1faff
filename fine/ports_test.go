package fine

import (
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/resource"
)

// A new executor that takes ports (mesosbackend.Executor.Ports: its
// servers' port mappings) is launched with exactly the port numbers
// placement's plan names; an agent whose offers hold too few ports gets no
// slot, its offer is declined as unfit and the reason shows in "why not
// placed". Each task takes the slot the plan made for it, the last the
// cpus beside the executor's share.
func TestExecutorPortsComeFromThePlan(t *testing.T) {
	r := newRig(t)
	r.b.set.Ports = 2 // after newRig's Flush: the owner reads it only on the next input
	e := executorID("S0")
	withPorts := offer("o1", "S0", 3, 1024)
	withPorts.Resources = append(withPorts.Resources, resource.RangeResource(resource.Ports, 31005, 31009))
	r.h.Handler().Offers([]mesos.Offer{withPorts, offer("o2", "S1", 3, 1024)})
	r.expect([]string{"decline o2 (unfit)", "demand off"}, []string{"up " + e + " h-S0 3"})
	var filtered []placement.Filtered
	for _, f := range r.b.OfferFilters() {
		if f.AgentID == "S1" {
			filtered = append(filtered, f)
		}
	}
	if len(filtered) != 1 || filtered[0].Reason != placement.OtherShort || !strings.Contains(filtered[0].Detail, "ports: 0 free < 2 needed") {
		t.Fatalf("S1's placement reasons %+v, want ports short", filtered)
	}

	r.b.Apply(launches(e, 1, 2, 3))
	r.settle()
	calls := r.h.Conn.Calls()
	if len(calls) != 1 || calls[0].String() != "launch o1 [1 2 3]" {
		t.Fatalf("connection calls %v, want one launch of tasks 1-3 on o1", calls)
	}
	for i, ti := range calls[0].Tasks {
		if got := resource.Values(ti.Executor.Resources, resource.Ports); !slices.Equal(got, []uint64{31005, 31006}) {
			t.Fatalf("the executor takes ports %v, want the plan's 31005 and 31006", got)
		}
		want := []float64{1, 1, 0.5}[i]
		if got := resource.Amount(ti.Resources, resource.CPUs); got != want {
			t.Errorf("task %s takes %g cpus, want %g", ti.TaskID.Value, got, want)
		}
		if got := resource.Values(ti.Resources, resource.Ports); len(got) != 0 {
			t.Errorf("task %s takes ports %v, want none", ti.TaskID.Value, got)
		}
	}
}
