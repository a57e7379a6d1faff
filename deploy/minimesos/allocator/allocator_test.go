package allocator

import (
	"errors"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]Config{
		"negative cap":    {MaxOutstandingOffers: -1},
		"zero weight":     {Weights: map[string]float64{"a": 0}},
		"bad role":        {Weights: map[string]float64{"a b": 1}},
		"negative refuse": {DefaultRefuseSeconds: -1},
	} {
		if _, err := New(cfg, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestDRFSharesConverge(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	a.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	agentsNamed(a, 10, node(4, 4096))
	offers := a.Allocate(t0)
	if got := countBy(offers); got["A"] != 5 || got["B"] != 5 {
		t.Fatalf("offers per framework = %v, want 5 each", got)
	}
	for _, o := range offers {
		if sum(o.Resources, "cpus") != 4 || len(o.Resources) != 3 {
			t.Fatalf("offer %+v is not the whole agent", o)
		}
	}
	if again := a.Allocate(t0); len(again) != 0 {
		t.Fatalf("second round re-offered %v", fwIDs(again))
	}
	checkConsistent(t, a)
}

func TestDRFLowerShareGetsNextAgents(t *testing.T) {
	a := newTest(t, Config{})
	a.AddFramework(FrameworkInfo{ID: "A"}, true, nil)
	a.AddFramework(FrameworkInfo{ID: "B"}, true, nil)
	a.AddAgent("s1", "h1", node(4, 4096), map[string]mesos.Resources{"A": node(4, 4096)})
	a.AddAgent("s2", "h2", node(4, 4096), map[string]mesos.Resources{"A": node(4, 4096)})
	a.AddAgent("s3", "h3", node(4, 4096), nil)
	a.AddAgent("s4", "h4", node(4, 4096), nil)
	a.AddAgent("s5", "h5", node(4, 4096), nil)
	offers := a.Allocate(t0)
	// A holds 2/5 of the cluster: B (0, 1/5, 2/5 — tie broken by name, A first) gets two of
	// the three free agents, A the last one.
	if got := countBy(offers); got["B"] != 2 || got["A"] != 1 {
		t.Fatalf("offers = %v, want B 2, A 1", got)
	}
	checkConsistent(t, a)
}
