package mesosconn

import (
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// ReconcileTask names a task for explicit reconciliation.
type ReconcileTask = scheduler.Call_Reconcile_Task

// trackedTask is a task the Conn knows to be non-terminal.
type trackedTask struct {
	agentID *mesos.AgentID
	state   mesos.TaskState
	pending bool          // explicit reconciliation asked and not yet answered
	next    time.Time     // when to ask again
	delay   time.Duration // the wait after the next ask
}

// Terminal reports whether a task state is final for a framework that is not partition aware.
func Terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN:
		return true
	}
	return false
}

// Reconcile without tasks asks the master for the state of every task it knows (implicit
// reconciliation). With tasks it starts explicit reconciliation of those: RECONCILE is sent
// now and again with backoff until an update for each has arrived.
func (c *Conn) Reconcile(tasks ...ReconcileTask) error {
	if len(tasks) == 0 {
		return c.send(calls.Reconcile())
	}
	now := c.clock.Now()
	c.mu.Lock()
	for _, t := range tasks {
		tt := c.tasks[t.TaskID.Value]
		if tt == nil {
			tt = &trackedTask{state: mesos.TASK_STAGING}
			c.tasks[t.TaskID.Value] = tt
		}
		if t.AgentID != nil {
			tt.agentID = t.AgentID
		}
		tt.pending, tt.next, tt.delay = true, now, c.cfg.ReconcileMinDelay
	}
	c.mu.Unlock()
	c.kick()
	return nil
}

// markPendingLocked starts explicit reconciliation of every tracked task.
func (c *Conn) markPendingLocked(now time.Time) {
	for _, t := range c.tasks {
		t.pending, t.next, t.delay = true, now, c.cfg.ReconcileMinDelay
	}
}

func (c *Conn) trackLaunches(ops []mesos.Offer_Operation) []string {
	var ids []string
	c.mu.Lock()
	defer c.mu.Unlock()
	add := func(ts []mesos.TaskInfo) {
		for i := range ts {
			id := ts[i].TaskID.Value
			if _, ok := c.tasks[id]; !ok {
				c.tasks[id] = &trackedTask{agentID: &ts[i].AgentID, state: mesos.TASK_STAGING}
				ids = append(ids, id)
			}
		}
	}
	for _, op := range ops {
		switch op.Type {
		case mesos.Offer_Operation_LAUNCH:
			add(op.GetLaunch().GetTaskInfos())
		case mesos.Offer_Operation_LAUNCH_GROUP:
			add(op.GetLaunchGroup().GetTaskGroup().Tasks)
		}
	}
	return ids
}

func (c *Conn) untrack(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		delete(c.tasks, id)
	}
}

// taskUpdate records a task's state: its reconciliation is answered; terminal tasks are
// forgotten, unknown non-terminal ones (found by implicit reconciliation) tracked.
func (c *Conn) taskUpdate(st mesos.TaskStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := st.TaskID.Value
	if Terminal(st.GetState()) {
		delete(c.tasks, id)
		return
	}
	t := c.tasks[id]
	if t == nil {
		t = &trackedTask{}
		c.tasks[id] = t
	}
	t.state, t.pending = st.GetState(), false
	if st.AgentID != nil {
		t.agentID = st.AgentID
	}
}

// control sends the calls that are due: SUPPRESS/REVIVE, periodic and explicit reconciliation.
func (c *Conn) control() {
	defer c.wg.Done()
	for {
		var timer <-chan time.Time
		if next := c.controlStep(); !next.IsZero() {
			// Relative to the clock now, not to the step's start: time may have moved on
			// while the step's calls were in flight.
			timer = c.clock.After(next.Sub(c.clock.Now()))
		}
		select {
		case <-c.ctx.Done():
			return
		case <-c.kickCh:
		case <-timer:
		}
	}
}

// controlStep sends what is due now and returns when something else is (zero: nothing until
// kicked).
func (c *Conn) controlStep() time.Time {
	now := c.clock.Now()
	var todo []*scheduler.Call
	var next time.Time
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	c.mu.Lock()
	if c.caller == nil || c.stopping {
		c.mu.Unlock()
		return time.Time{}
	}
	roles := c.cfg.Roles
	if c.wantSuppress {
		todo = append(todo, calls.SuppressWith(roles))
	}
	if c.wantRevive {
		todo = append(todo, calls.ReviveWith(roles))
		c.lastRevive = now
	}
	c.wantRevive, c.wantSuppress = false, false
	if c.demand && !c.cfg.DisableAutoRevive {
		last := c.lastOffer
		if c.lastRevive.After(last) {
			last = c.lastRevive
		}
		if at := last.Add(c.cfg.ReviveInterval); !now.Before(at) {
			c.log.Debugf("mesosconn: no offer for %s with tasks pending: reviving", now.Sub(last))
			todo = append(todo, calls.ReviveWith(roles))
			c.lastRevive = now
			due(now.Add(c.cfg.ReviveInterval))
		} else {
			due(at)
		}
	}
	if !c.cfg.DisablePeriodicRec {
		if !now.Before(c.nextPeriodic) {
			todo = append(todo, calls.Reconcile())
			c.markPendingLocked(now)
			c.nextPeriodic = now.Add(c.cfg.ReconcileInterval)
		}
		due(c.nextPeriodic)
	}
	if rec := c.dueReconcileLocked(now, due); len(rec) > 0 {
		todo = append(todo, calls.Reconcile(func(r *scheduler.Call_Reconcile) { r.Tasks = rec }))
	}
	c.mu.Unlock()
	for _, call := range todo {
		if err := c.send(call); err != nil {
			c.log.WithError(err).Warn("mesosconn: background call failed")
		}
	}
	return next
}

// dueReconcileLocked returns the pending tasks to ask about now and schedules their next ask.
func (c *Conn) dueReconcileLocked(now time.Time, due func(time.Time)) []ReconcileTask {
	var rec []ReconcileTask
	for id, t := range c.tasks {
		if !t.pending {
			continue
		}
		if now.Before(t.next) {
			due(t.next)
			continue
		}
		rec = append(rec, ReconcileTask{TaskID: mesos.TaskID{Value: id}, AgentID: t.agentID})
		t.next = now.Add(t.delay)
		t.delay = min(2*t.delay, c.cfg.ReconcileMaxDelay)
		due(t.next)
	}
	sort.Slice(rec, func(i, j int) bool { return rec[i].TaskID.Value < rec[j].TaskID.Value })
	return rec
}
