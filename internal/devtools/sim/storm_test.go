package sim

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestOfferStorm is a master failover under a cluster of SIM_STORM_AGENTS
// agents (8 cpus each; skipped when unset) running one job of SIM_TASKS
// map tasks (default two waves of the cluster's task slots) and
// SIM_REDUCERS reducers (default 100), no other fault: at SIM_FAILOVER_MS
// of virtual time (default 3,000: the second wave runs) the master fails
// over; while it is down the tasks that end hold their updates; once the
// framework re-subscribed to the new leader, the held updates arrive and
// the next allocation round re-offers every agent's free resources at
// once. It logs, in virtual time, the failover, the re-subscription, the
// storm (the first offers after it, and how many) and the resumption (the
// first ACCEPT after it), and the process's CPU seconds (user+system:
// the driver, the fine backend and the simulated master alike) and wall
// time from the re-subscription to the resumption — the driver's
// reconciliation (held updates, the storm's offers) until it launches
// again. The job must still end with every partition correct.
func TestOfferStorm(t *testing.T) {
	if os.Getenv("SIM_STORM_AGENTS") == "" {
		t.Skip("SIM_STORM_AGENTS unset")
	}
	cfg := DefaultConfig()
	cfg.Agents = envInt(t, "SIM_STORM_AGENTS", 0)
	cfg.Tasks = envInt(t, "SIM_TASKS", 2*8*cfg.Agents)
	cfg.Reducers = envInt(t, "SIM_REDUCERS", 100)
	cfg.Jobs = 1
	cfg.Faults = Faults{Failovers: 1}
	cfg.FailoverAt = time.Duration(envInt(t, "SIM_FAILOVER_MS", 3000)) * time.Millisecond
	cfg.SkipTrackerCheck = true
	cfg.MaxVirtual = 24 * time.Hour
	var ph stormPhases
	cfg.OnTrace = func(line string) { ph.see(t, line) }
	cpu0, start := cpuTime(t), time.Now()
	r := Run(int64(envInt(t, "SIM_SEED", 1)), cfg)
	cpu, el := cpuTime(t)-cpu0, time.Since(start)
	if r.Failed() {
		t.Fatal(r.Report())
	}
	if ph.resumed.virtual == 0 {
		t.Fatalf("no launch after the re-subscription (failover at %s, re-subscribed at %s, storm at %s)", ph.failover.virtual, ph.subscribed.virtual, ph.storm.virtual)
	}
	t.Logf("%d agents × 8 cpus, %d maps, %d reducers: %d attempts, %s virtual, CPU %.1f s, wall %s in all", cfg.Agents, cfg.Tasks, cfg.Reducers,
		r.Attempts, r.Virtual.Round(time.Millisecond), cpu.Seconds(), el.Round(time.Millisecond))
	t.Logf("virtual: failover at %s, re-subscribed at %s (+%s), storm of %d offers at %s (+%s), %d updates delivered before the first ACCEPT at %s (+%s after the re-subscription)",
		ph.failover.virtual, ph.subscribed.virtual, ph.subscribed.virtual-ph.failover.virtual, ph.offers, ph.storm.virtual, ph.storm.virtual-ph.subscribed.virtual,
		ph.updates, ph.resumed.virtual, ph.resumed.virtual-ph.subscribed.virtual)
	t.Logf("re-subscription → first ACCEPT: CPU %.3f s, wall %s; storm offers → first ACCEPT: CPU %.3f s, wall %s",
		(ph.resumed.cpu - ph.subscribed.cpu).Seconds(), ph.resumed.wall.Sub(ph.subscribed.wall).Round(time.Millisecond),
		(ph.resumed.cpu - ph.storm.cpu).Seconds(), ph.resumed.wall.Sub(ph.storm.wall).Round(time.Millisecond))
}

// stormPhases follows a run's trace through the failover.
type stormPhases struct {
	failover, subscribed, storm, resumed stormMark
	offers, updates                      int  // offers in the storm's round; updates delivered from the re-subscription to the first ACCEPT
	inStorm                              bool // the storm's offer lines are being read
}

// stormMark is when a phase began: virtual time, process CPU, wall clock.
type stormMark struct {
	virtual time.Duration
	cpu     time.Duration
	wall    time.Time
}

func (p *stormPhases) see(t *testing.T, line string) {
	at, text, _ := strings.Cut(strings.TrimLeft(line, " "), "s ")
	mark := func(m *stormMark) {
		d, err := time.ParseDuration(at + "s")
		if err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		*m = stormMark{virtual: d, cpu: cpuTime(t), wall: time.Now()}
	}
	switch {
	case p.failover.wall.IsZero():
		if strings.HasPrefix(text, "FAULT master failover") {
			mark(&p.failover)
		}
	case p.subscribed.wall.IsZero():
		if strings.HasSuffix(text, "the framework re-subscribes") {
			mark(&p.subscribed)
		}
	case p.resumed.wall.IsZero():
		isOffer := strings.HasPrefix(text, "offer ")
		switch {
		case isOffer && p.storm.wall.IsZero():
			mark(&p.storm)
			p.inStorm = true
		case !isOffer:
			p.inStorm = false
		}
		if isOffer && p.inStorm {
			p.offers++
		}
		if strings.HasPrefix(text, "update ") {
			p.updates++
		}
		if strings.HasPrefix(text, "accept ") {
			mark(&p.resumed)
		}
	}
}
