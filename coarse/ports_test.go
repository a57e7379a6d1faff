package coarse

import (
	"slices"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/resource"
)

// An executor that takes ports (mesosbackend.Executor.Ports: its servers'
// port mappings) is launched with exactly the port numbers placement's
// plan names, out of the offer's ports ranges; an offer whose ports run
// out is declined as unfit, and the reason shows in "why not placed" and
// in the no-executor explanation.
func TestExecutorPortsComeFromThePlan(t *testing.T) {
	b := testBackend(t, "flint.executor.cores=1", "flint.executor.memory=256m")
	b.set.Ports = 2
	withPorts := offer("o1", "a1", 2, 4096, 0)
	withPorts.Resources = append(withPorts.Resources, resource.RangeResource(resource.Ports, 31000, 31002, 31100, 31100))
	without := offer("o2", "a2", 2, 4096, 0)
	p := b.planOffers([]mesos.Offer{withPorts, without}, nil, time.Unix(1000, 0))
	if got := summary(b, p); got != "o1:1,1 unfit:o2" {
		t.Fatalf("plan %q, want two executors on o1 and o2 declined", got)
	}
	tis := p.launches[mesos.OfferID{Value: "o1"}]
	for i, want := range [][]uint64{{31000, 31001}, {31002, 31100}} {
		if got := resource.Values(tis[i].Resources, resource.Ports); !slices.Equal(got, want) {
			t.Errorf("executor %d's task takes ports %v, want %v", i, got, want)
		}
		if got := p.execs[i].ports; !slices.Equal(got, want) {
			t.Errorf("executor %d records ports %v, want %v", i, got, want)
		}
	}
	var filtered []placement.Filtered
	for _, f := range b.diag.filtered { // what OfferFilters publishes (the owner's view)
		if f.OfferID == "o2" {
			filtered = append(filtered, f)
		}
	}
	if len(filtered) != 1 || filtered[0].Reason != placement.OtherShort || !strings.Contains(filtered[0].Detail, "ports: 0 free < 2 needed") {
		t.Fatalf("o2's placement reasons %+v, want ports short", filtered)
	}
	if why := b.explain(); !strings.Contains(why, "offer from a2.host: ports: 0 free < 2 needed (executor port mappings)") {
		t.Fatalf("explanation %q does not name the ports", why)
	}
}
