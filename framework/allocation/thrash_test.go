package allocation

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// cluster is a small model of a coarse application around a Manager: the
// backend launches executors up to the target at once and kills the ones
// released; tasks take free slots, longest waiting first, and run for a
// fixed time.
type cluster struct {
	m        *Manager
	cfg      Config
	now      time.Time
	execs    map[string]*Executor
	order    []string  // live executors, launch order
	ends     []taskEnd // running tasks
	waiting  int       // tasks not yet started
	launches int
	lastUp   time.Time // the last launch
	kills    int
	peakNeed int
}

type taskEnd struct {
	exec string
	at   time.Time
}

func newCluster(t *testing.T, cfg Config) *cluster {
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{m: m, cfg: cfg, now: t0, execs: map[string]*Executor{}}
}

// tick ends due tasks, starts waiting ones, asks the Manager and applies
// its decision, then checks the decision's bounds.
func (c *cluster) tick(t *testing.T, taskTime time.Duration) {
	kept := c.ends[:0]
	for _, e := range c.ends {
		if e.at.After(c.now) {
			kept = append(kept, e)
			continue
		}
		x := c.execs[e.exec]
		if x.Running--; x.Running == 0 {
			x.IdleSince = e.at
		}
	}
	c.ends = kept
	for _, id := range c.order {
		x := c.execs[id]
		for c.waiting > 0 && x.Running < c.cfg.TasksPerExecutor {
			x.Running++
			c.waiting--
			c.ends = append(c.ends, taskEnd{id, c.now.Add(taskTime)})
		}
	}
	s := Snapshot{Waiting: c.waiting, Running: len(c.ends)}
	for _, id := range c.order {
		s.Executors = append(s.Executors, *c.execs[id])
	}
	c.peakNeed = max(c.peakNeed, c.m.needed(s))
	d := c.m.Step(c.now, s)
	if d.Target < c.cfg.MinExecutors || d.Target > c.cfg.MaxExecutors {
		t.Fatalf("%v: target %d outside [%d, %d]", c.now.Sub(t0), d.Target, c.cfg.MinExecutors, c.cfg.MaxExecutors)
	}
	for _, id := range d.Release {
		x := c.execs[id]
		if x.Running > 0 {
			t.Fatalf("%v: released %s while it runs a task", c.now.Sub(t0), id)
		}
		if idle := c.now.Sub(x.IdleSince); idle < c.cfg.ExecutorIdleTimeout {
			t.Fatalf("%v: released %s after %v idle, before the idle timeout %v", c.now.Sub(t0), id, idle, c.cfg.ExecutorIdleTimeout)
		}
		c.remove(id)
	}
	if left := len(c.order); len(d.Release) > 0 && left < max(c.cfg.MinExecutors, d.Target) {
		t.Fatalf("%v: released down to %d executors, below max(min %d, target %d)", c.now.Sub(t0), left, c.cfg.MinExecutors, d.Target)
	}
	for len(c.order) < d.Target {
		c.launches++
		c.lastUp = c.now
		id := fmt.Sprintf("e%d", c.launches)
		c.execs[id] = &Executor{ID: id, IdleSince: c.now}
		c.order = append(c.order, id)
	}
}

func (c *cluster) remove(id string) {
	c.kills++
	delete(c.execs, id)
	for i, x := range c.order {
		if x == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			return
		}
	}
}

// A backlog that comes and goes faster than the idle timeout does not
// thrash: the target falling between bursts kills nothing, and the next
// burst counts the executors still there before adding any. While the
// first bursts' tasks pile up the target may overshoot the 15 executors a
// burst needs (never maxExecutors); the extra ones go after their idle
// timeout, and from then on nothing is launched or released.
func TestOscillatingBacklogDoesNotThrash(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxExecutors, cfg.TasksPerExecutor = 20, 2
	c := newCluster(t, cfg)
	for i := 0; i < 6000; i++ { // 10 minutes at 100 ms, a burst of 30 two-second tasks every 3 s
		if i%30 == 0 {
			c.waiting += 30
		}
		c.tick(t, 2*time.Second)
		c.now = c.now.Add(100 * time.Millisecond)
	}
	if c.launches > cfg.MaxExecutors || c.kills != c.launches-15 || len(c.order) != 15 {
		t.Errorf("%d launches, %d releases, %d executors left; want at most %d launches, the ones beyond 15 released, 15 left", c.launches, c.kills, len(c.order), cfg.MaxExecutors)
	}
	if settled := c.lastUp.Sub(t0); settled > time.Minute {
		t.Errorf("an executor was launched at %v: the bursts keep launching", settled)
	}
}

// Bursts of random size still launch only to replace executors released
// after their idle timeout (tick checks each release was idle that long).
func TestRandomBurstsRelaunchOnlyWhatWasReleased(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxExecutors, cfg.TasksPerExecutor = 20, 2
	c := newCluster(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 6000; i++ {
		if i%30 == 0 {
			c.waiting += 10 + rng.IntN(30)
		}
		c.tick(t, 2*time.Second)
		c.now = c.now.Add(100 * time.Millisecond)
	}
	if c.launches > cfg.MaxExecutors+c.kills {
		t.Errorf("%d launches with %d releases: more than maxExecutors (%d) plus one per release", c.launches, c.kills, cfg.MaxExecutors)
	}
	if c.launches == 0 || c.launches > 2*cfg.MaxExecutors {
		t.Errorf("%d launches over 10 minutes of bursts needing up to 20 executors", c.launches)
	}
}

// Bursts further apart than the idle timeout give every executor back in
// between and launch again for the next burst: one release per launch,
// no more.
func TestBurstsApartReleaseAndRelaunchOncePerBurst(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxExecutors, cfg.TasksPerExecutor = 8, 2
	cfg.ExecutorIdleTimeout = 10 * time.Second
	c := newCluster(t, cfg)
	const step = 100 * time.Millisecond
	bursts := 0
	for i := 0; i < 3000; i++ { // 5 minutes, a burst each minute
		if i%600 == 0 {
			c.waiting += 16
			bursts++
		}
		c.tick(t, 5*time.Second)
		c.now = c.now.Add(step)
	}
	if c.launches > bursts*cfg.MaxExecutors {
		t.Errorf("%d launches for %d bursts of 16 two-slot tasks (at most %d executors each)", c.launches, bursts, cfg.MaxExecutors)
	}
	if c.kills < c.launches-cfg.MaxExecutors || c.kills > c.launches {
		t.Errorf("%d releases for %d launches: idle executors should be given back between bursts", c.kills, c.launches)
	}
	if len(c.order) != 0 {
		t.Errorf("%d executors held after the last burst's idle timeout, want 0 (minExecutors 0)", len(c.order))
	}
}
