package allocator

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

var t0 = time.Unix(1_700_000_000, 0)

func newTest(t testing.TB, cfg Config) *Allocator {
	t.Helper()
	a, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func ports(b, e uint64) mesos.Resource {
	return resources.Build().Name(resources.NamePorts).Ranges(resources.BuildRanges().Span(b, e).Ranges).Resource
}

// node is cpus, mem and ports 31000-31999.
func node(cpus, mem float64) mesos.Resources {
	return mesos.Resources{scalar("cpus", cpus), scalar("mem", mem), ports(31000, 31999)}
}

// reserved returns r statically reserved for role (post-refinement format).
func reserved(r mesos.Resource, role string) mesos.Resource {
	r.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_STATIC.Enum(), Role: &role}}
	return r
}

// legacyReserved returns r reserved for role through the pre-refinement role field.
func legacyReserved(r mesos.Resource, role string) mesos.Resource {
	r.Role = &role
	return r
}

func sum(rs mesos.Resources, name string) float64 {
	v := 0.0
	for i := range rs {
		if rs[i].Name == name {
			v += rs[i].GetScalar().GetValue()
		}
	}
	return v
}

func dur(d time.Duration) *time.Duration { return &d }

// countBy counts offers per framework id.
func countBy(offers []Offer) map[string]int {
	m := map[string]int{}
	for _, o := range offers {
		m[o.FrameworkID]++
	}
	return m
}

func fwIDs(offers []Offer) []string {
	var ids []string
	for _, o := range offers {
		ids = append(ids, o.FrameworkID)
	}
	return ids
}

func agentsNamed(a *Allocator, n int, total mesos.Resources) []string {
	var ids []string
	for i := range n {
		id := "S" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		a.AddAgent(id, id+".host", total, nil)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// checkConsistent verifies the allocator's internal books: per agent available + all records
// equals the total, and nothing is negative.
func checkConsistent(t interface {
	Helper()
	Fatalf(string, ...any)
}, a *Allocator) {
	t.Helper()
	for id, ag := range a.agents {
		var all mesos.Resources
		addAll(&all, ag.available)
		for _, rec := range ag.alloc {
			addAll(&all, rec)
		}
		if !resources.Equivalent(all, ag.total) {
			t.Fatalf("agent %s: available+allocated = %v, total %v", id, all, ag.total)
		}
	}
}
