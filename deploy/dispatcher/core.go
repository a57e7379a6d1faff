package dispatcher

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// State is a driver's state, with the names of Spark's cluster-mode driver states
// where they mean the same.
type State string

const (
	Queued      State = "QUEUED"      // waiting for an offer (or for a running driver to end)
	Launched    State = "LAUNCHED"    // its task was launched; no TASK_RUNNING yet
	Running     State = "RUNNING"     // its task runs
	Relaunching State = "RELAUNCHING" // supervised, failed, waiting for its back-off to end
	Finished    State = "FINISHED"    // its task ended with exit status 0
	Failed      State = "FAILED"      // its task failed (and is not supervised, or out of retries), or it can never be placed
	Killed      State = "KILLED"      // killed by a kill request
)

// Terminal reports whether s is a final state.
func (s State) Terminal() bool { return s == Finished || s == Failed || s == Killed }

// Active reports whether a driver in state s holds a task (counts against MaxDrivers).
func (s State) Active() bool { return s == Launched || s == Running }

// TaskEnd is how the core sees a Mesos task state.
type TaskEnd int

const (
	TaskStarting  TaskEnd = iota // STAGING, STARTING
	TaskRunning                  // RUNNING
	TaskSucceeded                // FINISHED
	TaskFailed                   // FAILED, ERROR
	TaskKilled                   // KILLED (by a kill request or not)
	TaskLost                     // LOST, DROPPED, GONE, UNREACHABLE, UNKNOWN: the driver's fate is unknown
	TaskUnknown                  // the master does not know the task (reconciliation): it may never have been launched
)

// Record is one submitted driver as the dispatcher keeps it (and stores it).
type Record struct {
	ID       string `json:"id"`
	Seq      uint64 `json:"seq"` // submission order: the queue is FIFO by Seq
	Spec     Spec   `json:"spec"`
	State    State  `json:"state"`
	Attempts int    `json:"attempts"` // launches so far
	Retries  int    `json:"retries"`  // supervised relaunches so far
	TaskID   string `json:"taskId,omitempty"`
	AgentID  string `json:"agentId,omitempty"`
	Host     string `json:"host,omitempty"`
	Killing  bool   `json:"killing,omitempty"` // a kill was requested while its task runs
	// DriverFrameworkID is the framework id a supervised driver subscribes with
	// (flint.mesos.driver.frameworkId): kept across relaunches while the master
	// still has that framework, so the master keeps its tasks for the next attempt.
	DriverFrameworkID string    `json:"driverFrameworkId,omitempty"`
	Submitted         time.Time `json:"submitted"`
	Started           time.Time `json:"started,omitzero"` // last launch
	Ended             time.Time `json:"ended,omitzero"`
	RetryAt           time.Time `json:"retryAt,omitzero"`
	Message           string    `json:"message,omitempty"` // why it is in its state (the last task's reason)
}

// CoreConfig configures a Core.
type CoreConfig struct {
	MaxDrivers int           // drivers launched or running at once; <= 0 is unlimited
	MaxRetries int           // relaunches of a supervised driver; default 3
	MinBackoff time.Duration // first relaunch delay; default 1 s
	MaxBackoff time.Duration // relaunch delay cap; default 1 min
}

// ErrUnknownDriver is returned for a submission id the dispatcher does not know.
var ErrUnknownDriver = errors.New("dispatcher: no such submission")

// ErrEnded is returned for a kill of a driver that already ended.
var ErrEnded = errors.New("dispatcher: the driver already ended")

// Core is the dispatcher's pure state: the drivers, their queue and states. It is
// not safe for concurrent use; it reads no clock (every input carries now) and
// does no I/O. Methods that change records return them, so that the shell stores
// exactly those.
type Core struct {
	cfg    CoreConfig
	recs   map[string]*Record
	byTask map[string]*Record // current attempt's task id → record
	seq    uint64
}

// NewCore returns an empty Core.
func NewCore(cfg CoreConfig) *Core {
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	return &Core{cfg: cfg, recs: map[string]*Record{}, byTask: map[string]*Record{}}
}

// Restore loads stored records (after a restart). Records keep their states: a
// launched or running driver stays so until reconciliation says otherwise.
func (c *Core) Restore(recs []Record) {
	for i := range recs {
		r := recs[i]
		c.recs[r.ID] = &r
		if r.TaskID != "" && r.State.Active() {
			c.byTask[r.TaskID] = &r
		}
		c.seq = max(c.seq, r.Seq)
	}
}

// Submit queues a new driver.
func (c *Core) Submit(id string, spec Spec, now time.Time) (*Record, error) {
	if _, ok := c.recs[id]; ok {
		return nil, fmt.Errorf("dispatcher: submission %s exists", id)
	}
	c.seq++
	r := &Record{ID: id, Seq: c.seq, Spec: spec, State: Queued, Submitted: now}
	c.recs[id] = r
	return r, nil
}

// Get returns a copy of a record.
func (c *Core) Get(id string) (Record, bool) {
	r, ok := c.recs[id]
	if !ok {
		return Record{}, false
	}
	return *r, true
}

// List returns copies of every record in submission order.
func (c *Core) List() []Record {
	out := make([]Record, 0, len(c.recs))
	for _, r := range c.recs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// Active returns the records holding a task (launched or running).
func (c *Core) Active() []Record {
	var out []Record
	for _, r := range c.List() {
		if r.State.Active() {
			out = append(out, r)
		}
	}
	return out
}

// Launchable returns the drivers that may be launched now, in FIFO order: queued
// ones and relaunching ones whose back-off ended, no more than MaxDrivers less
// the active ones. A relaunching driver keeps its place in the queue.
func (c *Core) Launchable(now time.Time) []Record {
	var out []Record
	active := 0
	for _, r := range c.List() {
		switch {
		case r.State.Active():
			active++
		case r.State == Queued, r.State == Relaunching && !now.Before(r.RetryAt):
			out = append(out, r)
		}
	}
	if c.cfg.MaxDrivers > 0 {
		out = out[:max(0, min(len(out), c.cfg.MaxDrivers-active))]
	}
	return out
}

// Waiting reports whether any driver is queued or relaunching (the dispatcher
// wants offers).
func (c *Core) Waiting() bool {
	for _, r := range c.recs {
		if r.State == Queued || r.State == Relaunching {
			return true
		}
	}
	return false
}

// NextRetry is the earliest back-off end of a relaunching driver, or zero.
func (c *Core) NextRetry() time.Time {
	var t time.Time
	for _, r := range c.recs {
		if r.State == Relaunching && (t.IsZero() || r.RetryAt.Before(t)) {
			t = r.RetryAt
		}
	}
	return t
}

// TaskID is the Mesos task id of a driver's attempt n (1-based): ids of attempts
// differ, so an update of an earlier attempt is recognised as stale.
func TaskID(id string, attempt int) string { return fmt.Sprintf("%s-%d", id, attempt) }

// Launched records the launch of a driver's next attempt on an agent and returns
// it with its task id set.
func (c *Core) Launched(id, agentID, host string, now time.Time) (*Record, error) {
	r, ok := c.recs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownDriver, id)
	}
	if r.State != Queued && r.State != Relaunching {
		return nil, fmt.Errorf("dispatcher: launch of %s in state %s", id, r.State)
	}
	r.Attempts++
	r.TaskID, r.AgentID, r.Host = TaskID(id, r.Attempts), agentID, host
	r.State, r.Started, r.RetryAt, r.Message = Launched, now, time.Time{}, ""
	c.byTask[r.TaskID] = r
	return r, nil
}

// Update applies a task status. It returns the changed record (nil when the
// update changes nothing, as a repeated RUNNING does) and stale=true when the task
// is no current attempt's: the shell then kills it if it is not terminal.
func (c *Core) Update(taskID string, end TaskEnd, msg string, now time.Time) (rec *Record, stale bool) {
	r := c.byTask[taskID]
	if r == nil {
		return nil, true
	}
	switch end {
	case TaskStarting:
		return nil, false
	case TaskRunning:
		if r.State == Running {
			return nil, false
		}
		r.State = Running
		return r, false
	}
	if end == TaskUnknown && r.State == Launched && !r.Killing {
		return c.Requeue(taskID), false // stored as launched, never reached the master
	}
	delete(c.byTask, taskID)
	r.Ended, r.Message = now, msg
	switch {
	case r.Killing:
		r.State = Killed
		if msg == "" || end == TaskKilled {
			r.Message = "killed by request"
		}
	case end == TaskSucceeded:
		r.State = Finished
	case r.Spec.Supervise && r.Retries < c.cfg.MaxRetries:
		r.Retries++
		r.State, r.RetryAt, r.Ended = Relaunching, now.Add(c.backoff(r.Retries)), time.Time{}
	default:
		r.State = Failed
		if r.Spec.Supervise {
			r.Message = fmt.Sprintf("%s (gave up after %d relaunches)", msg, r.Retries)
		}
	}
	r.Killing = false
	return r, false
}

// Requeue puts a driver whose task was never launched (the launch call failed,
// or the master does not know it) back in the queue at its place; the attempt
// still counts in its task ids.
func (c *Core) Requeue(taskID string) *Record {
	r := c.byTask[taskID]
	if r == nil || r.State != Launched {
		return nil
	}
	delete(c.byTask, taskID)
	r.State, r.TaskID, r.AgentID, r.Host, r.Started = Queued, "", "", "", time.Time{}
	return r
}

// backoff is the delay before relaunch n (1-based): MinBackoff doubled per
// relaunch, capped at MaxBackoff.
func (c *Core) backoff(n int) time.Duration {
	d := c.cfg.MinBackoff
	for i := 1; i < n && d < c.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.cfg.MaxBackoff)
}

// Kill asks for a driver's end. A queued or relaunching driver is KILLED at once
// (rec returned, taskID empty); a launched or running one is marked and its task
// id returned: it becomes KILLED when its task's terminal update comes.
func (c *Core) Kill(id string, now time.Time) (rec *Record, taskID string, err error) {
	r, ok := c.recs[id]
	if !ok {
		return nil, "", fmt.Errorf("%w: %s", ErrUnknownDriver, id)
	}
	switch {
	case r.State.Terminal():
		return nil, "", fmt.Errorf("%w: %s is %s", ErrEnded, id, r.State)
	case r.State.Active():
		r.Killing = true
		return r, r.TaskID, nil
	}
	r.State, r.Ended, r.RetryAt, r.Message = Killed, now, time.Time{}, "killed by request before it was launched"
	return r, "", nil
}

// SetDriverFramework records the framework id a waiting driver's next attempt
// subscribes with.
func (c *Core) SetDriverFramework(id, frameworkID string) {
	if r, ok := c.recs[id]; ok && (r.State == Queued || r.State == Relaunching) {
		r.DriverFrameworkID = frameworkID
	}
}

// Unplaceable fails a waiting driver that no agent of the cluster can ever run.
func (c *Core) Unplaceable(id, why string, now time.Time) *Record {
	r, ok := c.recs[id]
	if !ok || (r.State != Queued && r.State != Relaunching) {
		return nil
	}
	r.State, r.Ended, r.RetryAt, r.Message = Failed, now, time.Time{}, why
	return r
}
