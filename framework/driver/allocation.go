package driver

import (
	"fmt"
	"strings"
	"time"

	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/backend"
)

// Dynamic allocation (framework/allocation) is stepped by the driver core
// on every tick, after the tick's offer round, from the core's own state:
// tasks waiting and running (the task core), each registered executor's
// running attempts and since when it is idle (the slot registry), the
// executors holding cached partitions and, without a shuffle service, live
// map outputs (the DAG core). Its decision goes to the backend in the
// step's batch (backend.Allocation). An executor the decision releases
// gets no task from then on (offerRound skips it): it is idle now, and
// since the loop both places tasks and decides releases, no launch can
// race the release; its loss, when the backend reports it, is expected.

// setAllocation enables dynamic allocation with cfg (before any step).
func (c *driverCore) setAllocation(cfg allocation.Config) error {
	m, err := allocation.New(cfg)
	if err != nil {
		return fmt.Errorf("framework: %w", err)
	}
	c.alloc, c.allocService = m, cfg.ShuffleService
	return nil
}

// stepAllocation steps the decision core at now and puts its decision in
// the step's batch when there is one to apply: the first, a new target or
// executors to release.
func (c *driverCore) stepAllocation(now time.Time) {
	d := c.alloc.Step(now, c.allocSnapshot())
	for _, why := range d.Reasons {
		// a changed target and a release at Info; what repeats every
		// step (kept executors, a backlog at maxExecutors) at Debug
		if d.Changed && strings.HasPrefix(why, "target ") || strings.HasPrefix(why, "release ") {
			c.log.Infof("dynamic allocation: %s", why)
		} else {
			c.log.Debugf("dynamic allocation: %s", why)
		}
	}
	if c.allocSent && !d.Changed && len(d.Release) == 0 {
		return
	}
	c.allocSent = true
	a := &backend.Allocation{Target: d.Target}
	for _, id := range d.Release {
		reason := "released by dynamic allocation: " + releaseWhy(d.Reasons, id)
		if e := c.execs[id]; e != nil {
			e.release = reason
		}
		a.Release = append(a.Release, backend.ExecutorRelease{ExecutorID: id, Reason: reason})
	}
	c.out.Allocation = a
}

// allocSnapshot is the driver core's state the decision reads.
func (c *driverCore) allocSnapshot() allocation.Snapshot {
	s := allocation.Snapshot{Waiting: c.sched.PendingTasks(), Running: c.sched.RunningTasks(),
		Executors: make([]allocation.Executor, 0, len(c.order))}
	cached := c.dag.CachedExecutors()
	var outputs map[string]bool
	if !c.allocService {
		outputs = c.dag.Tracker().Executors()
	}
	for _, e := range c.order {
		s.Executors = append(s.Executors, allocation.Executor{ID: e.id, Running: e.tasks, IdleSince: e.idleSince,
			Cached: cached[e.id], Shuffle: outputs[e.id]})
	}
	return s
}

// releaseWhy is the reason the decision gave for releasing id.
func releaseWhy(reasons []string, id string) string {
	prefix := "release " + id + ": "
	for _, r := range reasons {
		if strings.HasPrefix(r, prefix) {
			return strings.TrimPrefix(r, prefix)
		}
	}
	return "idle"
}
