package allocation

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flint-mesos/flint/internal/plural"
)

// Never is a timeout that never expires (Spark's "infinity").
const Never time.Duration = math.MaxInt64

// Config is dynamic allocation's settings (flint.dynamicAllocation.*), with
// Spark's meanings.
type Config struct {
	MinExecutors     int // never fewer executors (spark.dynamicAllocation.minExecutors)
	MaxExecutors     int // never more (maxExecutors)
	InitialExecutors int // the target before the first task (initialExecutors)

	ExecutorIdleTimeout       time.Duration // an idle executor is released after this
	CachedExecutorIdleTimeout time.Duration // … one holding cached partitions after this
	SchedulerBacklogTimeout   time.Duration // tasks waiting this long ask for executors
	// SustainedSchedulerBacklogTimeout is how often a backlog that lasts
	// asks for more.
	SustainedSchedulerBacklogTimeout time.Duration

	// TasksPerExecutor is how many tasks one executor runs at once
	// (executor cores / cores per task).
	TasksPerExecutor int
	// ShuffleService says released executors' shuffle outputs stay
	// readable; without it, executors holding live ones are kept.
	ShuffleService bool
}

// DefaultConfig is Spark's defaults: 0 to unbounded executors, released
// after 60 s idle (never when holding cached partitions), a 1 s backlog.
func DefaultConfig() Config {
	return Config{
		MaxExecutors:                     math.MaxInt32,
		ExecutorIdleTimeout:              60 * time.Second,
		CachedExecutorIdleTimeout:        Never,
		SchedulerBacklogTimeout:          time.Second,
		SustainedSchedulerBacklogTimeout: time.Second,
		TasksPerExecutor:                 1,
	}
}

// ErrConfig is wrapped by every error Validate reports.
var ErrConfig = errors.New("invalid dynamic allocation settings")

// Validate reports the first setting that cannot work, naming its key.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.MinExecutors < 0:
		return bad("flint.dynamicAllocation.minExecutors is %d; it must be ≥ 0", c.MinExecutors)
	case c.MaxExecutors <= 0:
		return bad("flint.dynamicAllocation.maxExecutors is %d; it must be > 0", c.MaxExecutors)
	case c.MinExecutors > c.MaxExecutors:
		return bad("flint.dynamicAllocation.minExecutors (%d) is above flint.dynamicAllocation.maxExecutors (%d)", c.MinExecutors, c.MaxExecutors)
	case c.InitialExecutors < 0 || c.InitialExecutors > c.MaxExecutors:
		return bad("flint.dynamicAllocation.initialExecutors is %d; it must be between 0 and flint.dynamicAllocation.maxExecutors (%d)", c.InitialExecutors, c.MaxExecutors)
	case c.ExecutorIdleTimeout <= 0:
		return bad("flint.dynamicAllocation.executorIdleTimeout is %v; it must be > 0 (at 0 every executor would be released between two tasks)", c.ExecutorIdleTimeout)
	case c.CachedExecutorIdleTimeout <= 0:
		return bad("flint.dynamicAllocation.cachedExecutorIdleTimeout is %v; it must be > 0 (unset: never)", c.CachedExecutorIdleTimeout)
	case c.SchedulerBacklogTimeout <= 0:
		return bad("flint.dynamicAllocation.schedulerBacklogTimeout is %v; it must be > 0", c.SchedulerBacklogTimeout)
	case c.SustainedSchedulerBacklogTimeout <= 0:
		return bad("flint.dynamicAllocation.sustainedSchedulerBacklogTimeout is %v; it must be > 0", c.SustainedSchedulerBacklogTimeout)
	case c.TasksPerExecutor <= 0:
		return bad("an executor runs %d tasks at once; it must run at least one (flint.executor.cores ≥ flint.task.cpus)", c.TasksPerExecutor)
	}
	return nil
}

// Executor is what the driver core knows of one live executor.
type Executor struct {
	ID      string
	Running int // task attempts running on it
	// IdleSince is when it last became idle: its registration or its last
	// task's end. Read only when Running is 0.
	IdleSince time.Time
	Cached    bool // it holds cached partitions
	Shuffle   bool // it holds map outputs a live shuffle still needs
}

// Snapshot is the driver core's state a step reads.
type Snapshot struct {
	Waiting   int        // tasks waiting to run, speculative copies included
	Running   int        // tasks running
	Executors []Executor // live executors (registered, not yet lost)
}

// Decision is what one step asks of the backend.
type Decision struct {
	// Target is the executors wanted, registered or launching; the
	// backend launches up to it and never kills for it.
	Target int
	// Changed says Target differs from the previous step's.
	Changed bool
	// Release names idle executors to kill, longest idle first.
	Release []string
	// Reasons explain the target's change and each idle executor kept or
	// released, in order.
	Reasons []string
}

// Manager holds what dynamic allocation remembers between steps.
type Manager struct {
	cfg          Config
	target       int
	toAdd        int       // executors the next backlog step adds
	addAt        time.Time // when the backlog next adds; zero: no backlog
	initializing bool
	released     map[string]bool // asked to go, still in the snapshot
}

// New starts at max(MinExecutors, InitialExecutors) executors.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Manager{
		cfg:          cfg,
		target:       max(cfg.MinExecutors, cfg.InitialExecutors),
		toAdd:        1,
		initializing: true,
		released:     map[string]bool{},
	}, nil
}

// Target is the executors currently wanted.
func (m *Manager) Target() int { return m.target }

// Step decides at now from the driver's state s.
func (m *Manager) Step(now time.Time, s Snapshot) Decision {
	m.forgetGone(s.Executors)
	var d Decision
	expired := m.expired(now, s.Executors, &d)
	if s.Waiting+s.Running > 0 || len(expired) > 0 {
		m.initializing = false
	}
	old := m.target
	m.trackBacklog(now, s.Waiting)
	if !m.initializing {
		m.updateTarget(now, s, &d)
	}
	d.Target, d.Changed = m.target, m.target != old
	d.Release = m.release(expired, s.Executors, &d)
	return d
}

// forgetGone drops released executors no longer live.
func (m *Manager) forgetGone(execs []Executor) {
	for id := range m.released {
		if !slices.ContainsFunc(execs, func(e Executor) bool { return e.ID == id }) {
			delete(m.released, id)
		}
	}
}

// trackBacklog starts the backlog clock when tasks wait and stops it (with
// the step back to 1) when none do.
func (m *Manager) trackBacklog(now time.Time, waiting int) {
	switch {
	case waiting == 0:
		m.addAt, m.toAdd = time.Time{}, 1
	case m.addAt.IsZero():
		m.addAt = now.Add(m.cfg.SchedulerBacklogTimeout)
	}
}

// needed is the executors the waiting and running tasks would fill.
func (m *Manager) needed(s Snapshot) int {
	tasks := s.Waiting + s.Running
	return (tasks + m.cfg.TasksPerExecutor - 1) / m.cfg.TasksPerExecutor
}

func (m *Manager) updateTarget(now time.Time, s Snapshot, d *Decision) {
	need := m.needed(s)
	switch {
	case need < m.target:
		m.toAdd = 1
		if t := max(need, m.cfg.MinExecutors); t != m.target {
			m.target = t
			why := fmt.Sprintf("target %d: executors needed for %s: %d", t, plural.N(s.Waiting+s.Running, "task"), need)
			if need < m.cfg.MinExecutors {
				why += fmt.Sprintf(", minExecutors is %d", m.cfg.MinExecutors)
			}
			d.Reasons = append(d.Reasons, why)
		}
	case !m.addAt.IsZero() && !now.Before(m.addAt):
		m.add(need, len(s.Executors)-len(m.released), d)
		m.addAt = now.Add(m.cfg.SustainedSchedulerBacklogTimeout)
	}
}

// add raises the target by the current step, bounded by the executors
// needed and MaxExecutors, and doubles the step when it was taken whole.
func (m *Manager) add(need, live int, d *Decision) {
	if m.target >= m.cfg.MaxExecutors {
		m.toAdd = 1
		d.Reasons = append(d.Reasons, fmt.Sprintf("target %d: tasks wait, but maxExecutors is %d", m.target, m.cfg.MaxExecutors))
		return
	}
	old := m.target
	t := max(m.target, live) + m.toAdd
	t = min(t, need, m.cfg.MaxExecutors)
	m.target = max(t, m.cfg.MinExecutors, old)
	delta := m.target - old
	if delta == 0 {
		m.toAdd = 1
		return
	}
	d.Reasons = append(d.Reasons, fmt.Sprintf("target %d: tasks waited past the backlog timeout; adding %d (%d needed)", m.target, delta, need))
	if delta == m.toAdd {
		m.toAdd *= 2
	} else {
		m.toAdd = 1
	}
}

// expired lists idle executors whose timeout has passed, longest idle
// first, noting the idle ones kept for their shuffle outputs.
func (m *Manager) expired(now time.Time, execs []Executor, d *Decision) []Executor {
	var out []Executor
	for _, e := range execs {
		if e.Running > 0 || m.released[e.ID] {
			continue
		}
		timeout := m.cfg.ExecutorIdleTimeout
		if e.Cached {
			timeout = m.cfg.CachedExecutorIdleTimeout
		}
		if timeout == Never || now.Sub(e.IdleSince) < timeout {
			continue
		}
		if e.Shuffle && !m.cfg.ShuffleService {
			d.Reasons = append(d.Reasons, fmt.Sprintf("keep %s: idle, but it holds shuffle outputs and no shuffle service would serve them", e.ID))
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Executor) int {
		if c := a.IdleSince.Compare(b.IdleSince); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// release picks, from the expired executors, those that can go without
// leaving fewer than MinExecutors or the target.
func (m *Manager) release(expired []Executor, execs []Executor, d *Decision) []string {
	left := len(execs) - len(m.released)
	var ids []string
	for _, e := range expired {
		switch {
		case left-1 < m.cfg.MinExecutors:
			d.Reasons = append(d.Reasons, fmt.Sprintf("keep %s: idle, but only %s left (minExecutors %d)", e.ID, plural.N(left, "executor"), m.cfg.MinExecutors))
		case left-1 < m.target:
			d.Reasons = append(d.Reasons, fmt.Sprintf("keep %s: idle, but only %s left (target %d)", e.ID, plural.N(left, "executor"), m.target))
		default:
			why := "idle past executorIdleTimeout"
			if e.Cached {
				why = "idle past cachedExecutorIdleTimeout"
			}
			d.Reasons = append(d.Reasons, fmt.Sprintf("release %s: %s", e.ID, why))
			ids = append(ids, e.ID)
			m.released[e.ID] = true
			left--
		}
	}
	return ids
}
