package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"
)

// Errors returned by Submit.
var (
	ErrDuplicateTaskSet = errors.New("scheduler: duplicate task set")
	ErrEmptyTaskSet     = errors.New("scheduler: task set has no tasks")
	ErrInvalidTaskSet   = errors.New("scheduler: invalid task set")
)

// TaskScheduler is the scheduling core (Spark's TaskSchedulerImpl): a pure,
// single-threaded state machine. See the package documentation.
type TaskScheduler struct {
	cfg     Config
	rng     *rand.Rand
	nextTID TaskID
	seq     uint64

	sets    map[string]*taskSetManager
	ordered []*taskSetManager // active sets in submission order
	running map[TaskID]attempt
	// hostPending: pending tasks of live sets preferring each host
	// (Spark's hostToLocalTaskCount), kept up to date by the sets.
	hostPending map[string]int

	execs    map[string]*executorInfo
	hosts    map[string]*hostInfo
	racks    map[string]int    // alive hosts per rack
	hostRack map[string]string // learned from offers, kept after loss

	fifo      *pool
	pools     map[string]*pool
	poolOrder []*pool
	health    *healthTracker

	lastSpecCheck time.Time
	specDone      bool

	// explain bookkeeping, updated once per ResourceOffers call
	sawOffers          bool
	lastOfferAt        time.Time
	lastMaxCores       int
	lastOffers         int
	lastExcludedOffers int

	// scratch buffers reused across ResourceOffers calls
	offerOrder []int32
	free       []int
	live       []int32
}

type attempt struct {
	m           *taskSetManager
	index       int32
	attempt     int32
	speculative bool
	locality    Level
	exec, host  string
	launched    time.Time
}

type executorInfo struct {
	host, rack string
	running    int
}

type hostInfo struct {
	rack  string
	execs []string
}

// New validates cfg and returns a scheduler. rng shuffles offers to spread
// tasks; a nil rng keeps offers in the order given (tests, local mode).
func New(cfg Config, rng *rand.Rand) (*TaskScheduler, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	waits := make(map[Level]time.Duration, len(cfg.LocalityWait))
	for k, v := range cfg.LocalityWait {
		waits[k] = v
	}
	cfg.LocalityWait = waits
	cfg.Pools = slices.Clone(cfg.Pools)
	s := &TaskScheduler{
		cfg: cfg, rng: rng,
		sets: map[string]*taskSetManager{}, running: map[TaskID]attempt{}, hostPending: map[string]int{},
		execs: map[string]*executorInfo{}, hosts: map[string]*hostInfo{},
		racks: map[string]int{}, hostRack: map[string]string{},
		fifo:  newPool(PoolConfig{Name: "root", Mode: FIFO, Weight: 1}),
		pools: map[string]*pool{},
	}
	if cfg.Exclude.Enabled {
		s.health = newHealthTracker(&s.cfg.Exclude)
	}
	if cfg.Mode == FAIR {
		for _, pc := range cfg.Pools {
			s.addPool(pc)
		}
		if s.pools[DefaultPoolName] == nil {
			s.addPool(PoolConfig{Name: DefaultPoolName, Mode: FIFO, Weight: 1})
		}
	}
	return s, nil
}

func (s *TaskScheduler) addPool(pc PoolConfig) *pool {
	p := newPool(pc)
	s.pools[pc.Name] = p
	s.poolOrder = append(s.poolOrder, p)
	return p
}

// Config returns the effective configuration (defaults applied).
func (s *TaskScheduler) Config() Config { return s.cfg }

// Submit adds a task set. Its tasks become pending at once.
func (s *TaskScheduler) Submit(ts TaskSet, now time.Time) error {
	switch {
	case ts.ID == "":
		return fmt.Errorf("%w: empty ID", ErrInvalidTaskSet)
	case s.sets[ts.ID] != nil:
		return fmt.Errorf("%w: %q is already active", ErrDuplicateTaskSet, ts.ID)
	case len(ts.Tasks) == 0:
		return fmt.Errorf("%w: %q", ErrEmptyTaskSet, ts.ID)
	case len(ts.Tasks) > 1<<31-1:
		return fmt.Errorf("%w: %q has %d tasks, more than 2^31-1", ErrInvalidTaskSet, ts.ID, len(ts.Tasks))
	}
	for _, m := range s.ordered {
		if !m.zombie && m.ts.StageID == ts.StageID && m.ts.StageAttempt == ts.StageAttempt {
			return fmt.Errorf("%w: %q: stage %d attempt %d already has active task set %q",
				ErrDuplicateTaskSet, ts.ID, ts.StageID, ts.StageAttempt, m.ts.ID)
		}
	}
	s.seq++
	m := newTaskSetManager(s, ts, s.seq, now)
	p := s.fifo
	if s.cfg.Mode == FAIR {
		name := ts.Pool
		name = cmp.Or(name, DefaultPoolName)
		if p = s.pools[name]; p == nil {
			p = s.addPool(PoolConfig{Name: name, Mode: FIFO, Weight: 1})
		}
	}
	m.pool = p
	p.sets = append(p.sets, m)
	s.sets[ts.ID] = m
	s.ordered = append(s.ordered, m)
	return nil
}

// WantsOffers reports whether some task set has pending or speculatable
// tasks: backends revive offers when true and suppress them when false.
func (s *TaskScheduler) WantsOffers() bool {
	for _, m := range s.ordered {
		if !m.zombie && (m.pendingCount[Any] > 0 || m.hasSpeculatable()) {
			return true
		}
	}
	return false
}

// PendingHostPreferences returns, for each host some pending task prefers,
// how many pending tasks of live task sets prefer it (Spark's
// hostToLocalTaskCount; a task preferring several hosts counts for each).
// The counts are maintained as tasks become pending and stop being pending,
// so the call costs a copy of the map: O(hosts), not O(tasks).
func (s *TaskScheduler) PendingHostPreferences() map[string]int {
	return maps.Clone(s.hostPending)
}

// RunningTasks returns the number of running attempts.
func (s *TaskScheduler) RunningTasks() int { return len(s.running) }

// PendingTasks returns the number of tasks of live task sets waiting for a
// slot, speculative copies included (dynamic allocation's backlog).
func (s *TaskScheduler) PendingTasks() int { return s.pendingTotal() }

// StatusUpdate applies a state change of an attempt. Unknown or already
// ended attempts are ignored: updates may be delivered more than once.
func (s *TaskScheduler) StatusUpdate(id TaskID, u Update, now time.Time) []Event {
	a, ok := s.running[id]
	if !ok {
		return nil
	}
	switch u.State {
	case Finished:
		return s.handleSuccess(id, a, u.ResultSize, now)
	case Failed, KilledState, Lost:
		return s.handleFailure(id, a, failureOf(u), now)
	}
	return nil
}

// failureOf is the failure an ended attempt reports. A Lost attempt is the
// infrastructure's loss (its agent or executor went away, an offer went
// stale), never the task's: its Kind is forced to ExecutorLost, so that it
// counts toward neither exclusion nor MaxTaskFailures unless the backend
// says the application caused the executor's exit (ExitCausedByApp).
// Several agents may share a host: counting their losses would exclude the
// host for a loss that was not its fault.
func failureOf(u Update) Failure {
	if u.State == Lost {
		f := Failure{Kind: ExecutorLost, Message: "task lost"}
		if u.Failure != nil {
			f = *u.Failure
			f.Kind = ExecutorLost
		}
		return f
	}
	if u.Failure != nil {
		return *u.Failure
	}
	if u.State == KilledState {
		return Failure{Kind: Killed, Message: "killed"}
	}
	return Failure{Kind: Exception, Message: "task failed with no reason given"}
}

// endAttempt removes a finished attempt from the running state.
func (s *TaskScheduler) endAttempt(id TaskID, a attempt) {
	delete(s.running, id)
	m := a.m
	m.copies[a.index]--
	m.running--
	m.pool.running--
	if e := s.execs[a.exec]; e != nil {
		e.running--
	}
}

// maybeRemove drops a zombie task set once its last attempt has ended.
func (s *TaskScheduler) maybeRemove(m *taskSetManager) {
	if !m.zombie || m.running > 0 || s.sets[m.ts.ID] != m {
		return
	}
	delete(s.sets, m.ts.ID)
	if i := slices.Index(s.ordered, m); i >= 0 {
		s.ordered = slices.Delete(s.ordered, i, i+1)
	}
	m.pool.removeSet(m)
}

// KillTask asks for a running attempt to be killed. The attempt's end is
// reported later through StatusUpdate; a killed task is retried.
func (s *TaskScheduler) KillTask(id TaskID, reason string) []Event {
	a, ok := s.running[id]
	if !ok {
		return nil
	}
	return []Event{KillTask{TaskID: id, ExecutorID: a.exec, Reason: reason}}
}

// KillTaskSet aborts a task set: running attempts get KillTask events and
// the set becomes a zombie, removed once they end. A set that is already a
// zombie after a fetch failure can still be killed.
func (s *TaskScheduler) KillTaskSet(taskSetID, reason string) []Event {
	m := s.sets[taskSetID]
	if m == nil || m.aborted || m.finished {
		return nil
	}
	return s.abort(m, reason, nil)
}

// abort makes m a zombie, kills its running attempts and reports why.
func (s *TaskScheduler) abort(m *taskSetManager, reason string, last *Failure) []Event {
	if m.aborted || m.finished {
		return nil
	}
	m.zombie, m.aborted, m.abortReason = true, true, reason
	m.dropHostPending()
	m.unschedExpiry = time.Time{}
	var ev []Event
	for i := range m.copies {
		if m.copies[i] == 0 {
			continue
		}
		for _, tid := range m.tidsOf(int32(i)) {
			if a, ok := s.running[tid]; ok {
				ev = append(ev, KillTask{TaskID: tid, ExecutorID: a.exec, Reason: "task set aborted: " + reason})
			}
		}
	}
	ev = append(ev, TaskSetAborted{TaskSetID: m.ts.ID, Reason: reason, LastFailure: last})
	s.maybeRemove(m)
	return ev
}

// ExecutorLost fails every attempt running on the executor (with f, whose
// Kind is forced to ExecutorLost) and forgets the executor.
func (s *TaskScheduler) ExecutorLost(executorID string, f Failure, now time.Time) []Event {
	e := s.execs[executorID]
	if e == nil {
		return nil
	}
	f.Kind = ExecutorLost
	var ids []TaskID
	for id, a := range s.running {
		if a.exec == executorID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var ev []Event
	for _, id := range ids {
		ev = append(ev, s.handleFailure(id, s.running[id], f, now)...)
	}
	s.removeExecutor(executorID, e)
	return ev
}

func (s *TaskScheduler) removeExecutor(id string, e *executorInfo) {
	delete(s.execs, id)
	if h := s.hosts[e.host]; h != nil {
		if i := slices.Index(h.execs, id); i >= 0 {
			h.execs = slices.Delete(h.execs, i, i+1)
		}
		if len(h.execs) == 0 {
			delete(s.hosts, e.host)
			if h.rack != "" {
				if s.racks[h.rack]--; s.racks[h.rack] <= 0 {
					delete(s.racks, h.rack)
				}
			}
		}
	}
	for _, m := range s.ordered {
		if !m.zombie {
			m.computeLevels(s)
		}
	}
}

// Tick runs the periodic work: exclusion expiry, unschedulable task set
// aborts and the speculation check.
func (s *TaskScheduler) Tick(now time.Time) []Event {
	if s.health != nil {
		s.health.expire(now)
	}
	var ev []Event
	for _, m := range slices.Clone(s.ordered) {
		if !m.zombie && !m.unschedExpiry.IsZero() && !now.Before(m.unschedExpiry) {
			ev = append(ev, s.abort(m, s.unschedulableReason(m), m.excl.lastFailure)...)
		}
	}
	sc := s.cfg.Speculation
	if sc.Enabled && (!s.specDone || now.Sub(s.lastSpecCheck) >= sc.Interval) {
		s.specDone, s.lastSpecCheck = true, now
		s.checkSpeculatable(now)
	}
	return ev
}

func (s *TaskScheduler) unschedulableReason(m *taskSetManager) string {
	msg := fmt.Sprintf("task %d of stage %d cannot run anywhere: every executor is excluded for it after failures", m.unschedIndex, m.ts.StageID)
	if lf := m.excl.lastFailure; lf != nil {
		msg += ", most recent failure: " + lf.Message
	}
	return msg
}
