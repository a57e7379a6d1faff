package scheduler

import (
	"slices"
	"time"
)

// Per-task flag bits. The low five bits name the pending lists a task is in
// and line up with Level values, so pendingCount[level] counts pending tasks
// that a list of that level can serve.
const (
	fExec        uint8 = 1 << ProcessLocal
	fHost        uint8 = 1 << NodeLocal
	fNoPref      uint8 = 1 << NoPref
	fRack        uint8 = 1 << RackLocal
	fAll         uint8 = 1 << Any
	fListMask          = fExec | fHost | fNoPref | fRack | fAll
	fSucceeded   uint8 = 1 << 5
	fSpeculative uint8 = 1 << 6 // in the speculatable list
)

// taskSetManager schedules the tasks of one TaskSet (Spark's TaskSetManager).
// Per-task state is kept as parallel slices of small integers; pending lists
// are stacks of int32 indices with lazy deletion: an entry is dropped when it
// reaches the top and its task is no longer pending.
type taskSetManager struct {
	ts   TaskSet
	seq  uint64
	pool *pool

	copies   []uint8  // running attempts per index
	flags    []uint8  // fExec... bits
	failures []uint16 // failures counting towards MaxTaskFailures
	attempts []int32  // attempts launched per index
	lastTID  []TaskID // most recent attempt per index
	extra    map[int32][]TaskID

	listOf       [3]map[string]int32 // executor, host, rack → index into lists
	lists        [][]int32
	noPrefs, all []int32
	speculatable []int32
	pendingCount [numLevels]int

	// hostPending counts, per preferred host, this set's pending tasks that
	// prefer it; hostTotals is the scheduler's sum over live sets (the same
	// map for every set). Both change only with pending state.
	hostPending, hostTotals map[string]int

	succeeded, running int
	zombie, aborted    bool
	finished           bool // TaskSetFinished emitted
	fetchFailed        bool // zombie after a task's fetch failure
	abortReason        string

	levels     []Level
	waits      []time.Duration
	curLevel   int
	lastLaunch time.Time

	totalResult int64
	durations   []time.Duration
	medianN     int
	median      time.Duration

	excl *taskSetExclude

	// explain / unschedulable bookkeeping
	starved         bool      // last ResourceOffers ran out of offers before this set was done
	offeredAt       time.Time // time of the last ResourceOffers that considered this set
	unschedExpiry   time.Time // zero = not unschedulable
	unschedIndex    int32
	launchedInCall  bool
	offersRejectedL bool // last call rejected an offer because of the locality wait

	// per ResourceOffers call: level being tried and the round-robin pass
	// over candidate offers (cand[:w] launched in this pass, cand[pos:] not
	// yet tried)
	callLevel int
	cand      []int32
	pos, w    int
}

const (
	listExec = 0
	listHost = 1
	listRack = 2
)

func newTaskSetManager(s *TaskScheduler, ts TaskSet, seq uint64, now time.Time) *taskSetManager {
	n := len(ts.Tasks)
	m := &taskSetManager{
		ts: ts, seq: seq,
		copies: make([]uint8, n), flags: make([]uint8, n), failures: make([]uint16, n),
		attempts: make([]int32, n), lastTID: make([]TaskID, n),
		all:        make([]int32, 0, n),
		lastLaunch: now,
		hostTotals: s.hostPending,
	}
	for i := range m.listOf {
		m.listOf[i] = map[string]int32{}
	}
	if s.cfg.Exclude.Enabled {
		m.excl = newTaskSetExclude(&s.cfg.Exclude)
	}
	for i := n - 1; i >= 0; i-- { // reversed so that index 0 is popped first
		m.addPending(s, int32(i))
	}
	m.computeLevels(s)
	return m
}

func (m *taskSetManager) numTasks() int { return len(m.flags) }

func (m *taskSetManager) isPending(i int32) bool {
	return m.copies[i] == 0 && m.flags[i]&fSucceeded == 0
}

func (m *taskSetManager) adjustPending(i int32, d int) {
	f := m.flags[i]
	for l := Level(0); l < numLevels; l++ {
		if f&(1<<l) != 0 {
			m.pendingCount[l] += d
		}
	}
	if f&fHost != 0 {
		m.adjustHosts(i, d)
	}
}

// adjustHosts adds d to the pending counts of every distinct host task i
// prefers.
func (m *taskSetManager) adjustHosts(i int32, d int) {
	if m.hostPending == nil {
		m.hostPending = map[string]int{}
	}
	prefs := m.ts.Tasks[i].Preferred
next:
	for j, loc := range prefs {
		if loc.Host == "" {
			continue
		}
		for _, p := range prefs[:j] {
			if p.Host == loc.Host {
				continue next
			}
		}
		addCount(m.hostPending, loc.Host, d)
		addCount(m.hostTotals, loc.Host, d)
	}
}

// dropHostPending removes the set's pending tasks from the scheduler's
// per-host counts: the set became a zombie and launches nothing more.
func (m *taskSetManager) dropHostPending() {
	for h, n := range m.hostPending {
		addCount(m.hostTotals, h, -n)
	}
	m.hostPending = nil
}

// addCount adds d to counts[k], deleting the entry when it reaches zero.
func addCount(counts map[string]int, k string, d int) {
	if n := counts[k] + d; n != 0 {
		counts[k] = n
	} else {
		delete(counts, k)
	}
}

func (m *taskSetManager) pushList(kind int, key string, i int32) {
	id, ok := m.listOf[kind][key]
	if !ok {
		id = int32(len(m.lists))
		m.lists = append(m.lists, nil)
		m.listOf[kind][key] = id
	}
	m.lists[id] = append(m.lists[id], i)
}

// addPending puts index i on every pending list it belongs to. It is called
// at submission and whenever the last running attempt of i ends unsuccessfully.
func (m *taskSetManager) addPending(s *TaskScheduler, i int32) {
	prefs := m.ts.Tasks[i].Preferred
	f := fAll
	for _, loc := range prefs {
		if loc.ExecutorID != "" {
			m.pushList(listExec, loc.ExecutorID, i)
			f |= fExec
		}
		if loc.Host != "" {
			m.pushList(listHost, loc.Host, i)
			f |= fHost
			if rack := s.hostRack[loc.Host]; rack != "" {
				m.pushList(listRack, rack, i)
				f |= fRack
			}
		}
	}
	if len(prefs) == 0 {
		m.noPrefs = append(m.noPrefs, i)
		f |= fNoPref
	}
	m.all = append(m.all, i)
	m.flags[i] = m.flags[i]&^fListMask | f
	m.adjustPending(i, 1)
}

// learnRack records that host is on rack: tasks preferring host become
// rack-local candidates there.
func (m *taskSetManager) learnRack(host, rack string) {
	id, ok := m.listOf[listHost][host]
	if !ok {
		return
	}
	for _, i := range m.lists[id] {
		if m.flags[i]&fRack != 0 {
			continue
		}
		m.flags[i] |= fRack
		if m.isPending(i) {
			m.pendingCount[RackLocal]++
			m.pushList(listRack, rack, i)
		}
	}
}

// computeLevels recomputes the valid locality levels (Spark's
// computeValidLocalityLevels), keeping the current level where possible.
func (m *taskSetManager) computeLevels(s *TaskScheduler) {
	prevIdx, prev := 0, ProcessLocal
	var old []Level
	if len(m.levels) > 0 {
		prevIdx, prev = m.curLevel, m.levels[m.curLevel]
		old = append(old, m.levels...)
	}
	m.levels = m.levels[:0]
	m.waits = m.waits[:0]
	alive := [3]func(string) bool{
		func(k string) bool { return s.execs[k] != nil },
		func(k string) bool { return s.hosts[k] != nil },
		func(k string) bool { return s.racks[k] > 0 },
	}
	for kind, lvl := range [3]Level{ProcessLocal, NodeLocal, RackLocal} {
		if lvl == RackLocal && m.pendingCount[NoPref] > 0 {
			m.levels = append(m.levels, NoPref)
		}
		if m.pendingCount[lvl] == 0 {
			continue
		}
		for k := range m.listOf[kind] {
			if alive[kind](k) {
				m.levels = append(m.levels, lvl)
				break
			}
		}
	}
	m.levels = append(m.levels, Any)
	for _, l := range m.levels {
		m.waits = append(m.waits, s.cfg.localityWait(l))
	}
	m.curLevel = m.levelIndex(prev)
	if m.curLevel > prevIdx {
		// SPARK-31837: a newly valid, more local level becomes current.
		for _, l := range m.levels {
			if !slices.Contains(old, l) {
				m.curLevel = m.levelIndex(l)
				break
			}
		}
	}
}

// levelIndex is the index of the first valid level >= l.
func (m *taskSetManager) levelIndex(l Level) int {
	i := 0
	for i < len(m.levels)-1 && l > m.levels[i] {
		i++
	}
	return i
}

// allowedLevelAt is Spark's getAllowedLocalityLevel without side effects: it
// returns the most distant level delay scheduling allows at now, plus the
// level index and wait reset time to store.
func (m *taskSetManager) allowedLevelAt(now time.Time) (int, time.Time) {
	idx, last := m.curLevel, m.lastLaunch
	for idx < len(m.levels)-1 {
		lvl := m.levels[idx]
		switch {
		case m.pendingCount[lvl] == 0:
			// nothing left at this level: no point waiting (SPARK-4939)
			last = now
			idx++
		case now.Sub(last) >= m.waits[idx]:
			last = last.Add(m.waits[idx])
			idx++
		default:
			return idx, last
		}
	}
	return idx, last
}

func (m *taskSetManager) allowedLevel(now time.Time) Level {
	m.curLevel, m.lastLaunch = m.allowedLevelAt(now)
	return m.levels[m.curLevel]
}

// dequeueFrom pops the most recently added pending index of list that may
// run on exec/host; stale entries on top are dropped.
func (m *taskSetManager) dequeueFrom(list *[]int32, exec, host string) int32 {
	l := *list
	checkExcl := m.excl != nil && m.excl.hasTaskExclusions()
	for j := len(l) - 1; j >= 0; j-- {
		i := l[j]
		if !m.isPending(i) {
			if j == len(l)-1 {
				l = l[:j]
			}
			continue
		}
		if checkExcl && m.excl.taskExcluded(i, exec, host) {
			continue
		}
		if j == len(l)-1 {
			l = l[:j]
		} else {
			l = append(l[:j], l[j+1:]...)
		}
		*list = l
		return i
	}
	*list = l
	return -1
}

func (m *taskSetManager) dequeueKeyed(kind int, key, exec, host string) int32 {
	if len(m.listOf[kind]) == 0 {
		return -1
	}
	id, ok := m.listOf[kind][key]
	if !ok {
		return -1
	}
	return m.dequeueFrom(&m.lists[id], exec, host)
}

// dequeueTask picks a task for an offer, most local list first (Spark's
// dequeueTask). No-preference tasks report PROCESS_LOCAL, as in Spark.
func (m *taskSetManager) dequeueTask(s *TaskScheduler, exec, host, rack string, max Level) (int32, Level, bool) {
	if i := m.dequeueKeyed(listExec, exec, exec, host); i >= 0 {
		return i, ProcessLocal, false
	}
	if max >= NodeLocal {
		if i := m.dequeueKeyed(listHost, host, exec, host); i >= 0 {
			return i, NodeLocal, false
		}
	}
	if max >= NoPref {
		if i := m.dequeueFrom(&m.noPrefs, exec, host); i >= 0 {
			return i, ProcessLocal, false
		}
	}
	if max >= RackLocal && rack != "" {
		if i := m.dequeueKeyed(listRack, rack, exec, host); i >= 0 {
			return i, RackLocal, false
		}
	}
	if max >= Any {
		if i := m.dequeueFrom(&m.all, exec, host); i >= 0 {
			return i, Any, false
		}
	}
	if len(m.speculatable) > 0 {
		if i, lvl := m.dequeueSpeculative(s, exec, host, rack, max); i >= 0 {
			return i, lvl, true
		}
	}
	return -1, 0, false
}

// taskLevel is the locality of running index i on exec/host/rack: the level
// needed to allow it and the level reported.
func (m *taskSetManager) taskLevel(s *TaskScheduler, i int32, exec, host, rack string) (need, report Level) {
	prefs := m.ts.Tasks[i].Preferred
	if len(prefs) == 0 {
		return NoPref, ProcessLocal
	}
	best := Any
	for _, p := range prefs {
		switch {
		case p.ExecutorID != "" && p.ExecutorID == exec:
			return ProcessLocal, ProcessLocal
		case p.Host == host:
			best = NodeLocal
		case best > RackLocal && rack != "" && s.hostRack[p.Host] == rack:
			best = RackLocal
		}
	}
	return best, best
}
