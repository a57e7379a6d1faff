package dagscheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

type stageState int

const (
	stIdle    stageState = iota // not submitted, finished, or skipped
	stWaiting                   // waiting for parent stages
	stRunning                   // an attempt is running
	stFailed                    // failed; waiting for the resubmit timer
)

var stageStateNames = [...]string{"idle", "waiting", "running", "failed"}

func (s stageState) String() string { return stageStateNames[s] }

// stage is a ShuffleMapStage (kind MapTask) or a ResultStage.
type stage struct {
	id         int
	kind       TaskKind
	node       *nodeInfo
	jobName    string
	pool       string
	parents    []*stage
	children   []*stage // stages with st as a parent, while they exist
	shuffleID  int      // map stages
	numReduces int
	job        *job           // result stages
	jobs       map[int64]bool // active jobs needing the stage
	firstJobID int64

	state         stageState
	nextAttempt   int
	latest        int      // latest attempt, -1 before the first
	latestSet     *TaskSet // latest attempt's task set
	pending       partSet
	failedAttempt map[int]bool // consecutive failed attempts
	// indeterminate stages ignore results of attempts before validFrom
	// (rolled back) or older than latest.
	indeterminate bool
	validFrom     int
	lost          map[int]string // map stages: why a partition's output is missing
}

func (st *stage) name() string {
	if st.node.Name != "" {
		return st.node.Name
	}
	return string(st.node.ID)
}

// partSet is a set of partitions of one node.
type partSet struct {
	in []bool
	n  int
}

func (s *partSet) reset(size int) {
	if cap(s.in) >= size {
		s.in = s.in[:size]
		clear(s.in)
	} else {
		s.in = make([]bool, size)
	}
	s.n = 0
}

func (s *partSet) add(p int) {
	if !s.in[p] {
		s.in[p] = true
		s.n++
	}
}

func (s *partSet) remove(p int) {
	if p >= 0 && p < len(s.in) && s.in[p] {
		s.in[p] = false
		s.n--
	}
}

func (s *partSet) has(p int) bool { return p >= 0 && p < len(s.in) && s.in[p] }

func (s *partSet) list() []int {
	var out []int
	for p, in := range s.in {
		if in {
			out = append(out, p)
		}
	}
	return out
}

type job struct {
	id         int64
	name, pool string
	final      *stage
	partitions []int
	finished   []bool
	nFinished  int
	held       bool // JobSpec.ResultsHeld
}

type cacheKey struct {
	node NodeID
	part int
}

// Scheduler is the DAG core (Spark's DAGScheduler): a pure,
// single-threaded state machine. See the package documentation.
type Scheduler struct {
	cfg     Config
	tracker *mapoutput.Tracker

	nextJobID   int64
	nextStageID int
	stages      map[int]*stage
	shuffles    map[int]*stage // shuffle id → map stage
	jobs        map[int64]*job
	waiting     map[int]*stage
	failed      map[int]*stage
	resubmitAt  time.Time

	execFailureEpoch map[string]int64
	fileLostEpoch    map[string]int64
	cache            map[cacheKey][]scheduler.Location

	ev []Event // output of the current call
}

// New returns a DAG core with its own map-output tracker.
func New(cfg Config) (*Scheduler, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Scheduler{
		cfg: cfg, tracker: mapoutput.NewTracker(cfg.Tracker),
		stages: map[int]*stage{}, shuffles: map[int]*stage{}, jobs: map[int64]*job{},
		waiting: map[int]*stage{}, failed: map[int]*stage{},
		execFailureEpoch: map[string]int64{}, fileLostEpoch: map[string]int64{},
		cache: map[cacheKey][]scheduler.Location{},
	}, nil
}

// Config returns the effective configuration.
func (s *Scheduler) Config() Config { return s.cfg }

// Tracker is the core's map-output tracker: reducers' location queries are
// answered from it. Callers must not change it.
func (s *Scheduler) Tracker() *mapoutput.Tracker { return s.tracker }

// NextWake returns when Tick must next be called (the resubmit timer).
func (s *Scheduler) NextWake() (time.Time, bool) {
	return s.resubmitAt, !s.resubmitAt.IsZero()
}

// ActiveJobs returns the ids of the jobs that have not ended, ascending.
func (s *Scheduler) ActiveJobs() []int64 {
	ids := slices.Collect(maps.Keys(s.jobs))
	slices.Sort(ids)
	return ids
}

func (s *Scheduler) emit(e Event) { s.ev = append(s.ev, e) }

func (s *Scheduler) flush() []Event {
	ev := s.ev
	s.ev = nil
	return ev
}

// SubmitJob validates the job, builds its stages (reusing map stages and
// outputs of shuffles already known) and submits what is missing.
func (s *Scheduler) SubmitJob(spec JobSpec, now time.Time) (int64, []Event, error) {
	_, final, err := buildGraph(&spec)
	if err != nil {
		return 0, nil, err
	}
	if err := s.checkShuffles(&spec, final); err != nil {
		return 0, nil, err
	}
	id := s.nextJobID
	s.nextJobID++
	parts := spec.Partitions
	if parts == nil {
		parts = make([]int, final.Partitions)
		for i := range parts {
			parts[i] = i
		}
	} else {
		parts = slices.Clone(parts)
	}
	if len(parts) == 0 {
		// nothing to compute (Spark finishes such a job at once)
		return id, []Event{JobStarted{JobID: id, Name: spec.Name}, JobSucceeded{JobID: id}}, nil
	}
	j := &job{id: id, name: spec.Name, pool: spec.Pool, partitions: parts, finished: make([]bool, len(parts)), held: spec.ResultsHeld}
	var parents []*stage // parents first: stage ids grow towards the result, as in Spark
	for _, ref := range shuffleDeps(final) {
		parents = append(parents, s.mapStage(ref, j))
	}
	rs := s.newStage(ResultTask, final, j)
	rs.setParents(parents)
	rs.indeterminate = rs.indeterminate || slices.ContainsFunc(rs.parents, func(p *stage) bool { return p.indeterminate })
	rs.job = j
	j.final = rs
	s.jobs[id] = j
	s.addJob(rs, id)

	s.submitStage(rs, now)
	stageEvents := s.flush()
	var ids, skipped []int
	for _, st := range s.sortedStages(func(st *stage) bool { return st.jobs[id] }) {
		ids = append(ids, st.id)
		if st.state == stIdle {
			skipped = append(skipped, st.id)
		}
	}
	s.emit(JobStarted{JobID: id, Name: spec.Name, Stages: ids, Skipped: skipped})
	s.ev = append(s.ev, stageEvents...)
	return id, s.flush(), nil
}

// checkShuffles rejects shuffle ids used inconsistently within the job or
// with stages and outputs already known, before any state changes.
func (s *Scheduler) checkShuffles(spec *JobSpec, final *nodeInfo) error {
	type shape struct {
		writer        NodeID
		maps, reduces int
		reader        NodeID
	}
	seen := map[int]shape{}
	var walkErr error
	visited := map[*nodeInfo]bool{}
	var walk func(n *nodeInfo)
	walk = func(n *nodeInfo) {
		if visited[n] || walkErr != nil {
			return
		}
		visited[n] = true
		for j, d := range n.Deps {
			p := n.parents[j]
			if d.Kind == Shuffle {
				sh := shape{p.ID, p.Partitions, n.Partitions, n.ID}
				if prev, ok := seen[d.ShuffleID]; ok && (prev.writer != sh.writer || prev.maps != sh.maps || prev.reduces != sh.reduces) {
					walkErr = fmt.Errorf("%w %q: shuffle %d is %q (%d maps) read by %q in %d partitions and %q (%d maps) read by %q in %d",
						ErrInvalidJob, spec.Name, d.ShuffleID, prev.writer, prev.maps, prev.reader, prev.reduces, sh.writer, sh.maps, sh.reader, sh.reduces)
					return
				}
				seen[d.ShuffleID] = sh
				if st := s.shuffles[d.ShuffleID]; st != nil && (st.node.ID != p.ID || st.node.Partitions != p.Partitions || st.numReduces != n.Partitions) {
					walkErr = fmt.Errorf("%w %q: shuffle %d is already known as the output of %q (%d maps, %d reducers), not of %q (%d maps, %d reducers)",
						ErrInvalidJob, spec.Name, d.ShuffleID, st.node.ID, st.node.Partitions, st.numReduces, p.ID, p.Partitions, n.Partitions)
					return
				}
				if m, r, ok := s.tracker.Shape(d.ShuffleID); ok && (m != p.Partitions || r != n.Partitions) {
					walkErr = fmt.Errorf("%w %q: shuffle %d has outputs for %d maps and %d reducers, not %d and %d",
						ErrInvalidJob, spec.Name, d.ShuffleID, m, r, p.Partitions, n.Partitions)
					return
				}
			}
			walk(p)
		}
	}
	walk(final)
	return walkErr
}

func (s *Scheduler) newStage(kind TaskKind, n *nodeInfo, j *job) *stage {
	st := &stage{id: s.nextStageID, kind: kind, node: n, jobName: j.name, pool: j.pool, jobs: map[int64]bool{},
		firstJobID: j.id, latest: -1, failedAttempt: map[int]bool{},
		indeterminate: pipelineIndeterminate(n)}
	s.nextStageID++
	s.stages[st.id] = st
	return st
}

// mapStage returns the map stage writing ref's shuffle, creating it (and
// its missing ancestors) if needed (Spark's getOrCreateShuffleMapStage).
func (s *Scheduler) mapStage(ref shuffleRef, j *job) *stage {
	if st := s.shuffles[ref.id]; st != nil {
		return st
	}
	var parents []*stage
	for _, p := range shuffleDeps(ref.writer) {
		parents = append(parents, s.mapStage(p, j))
	}
	st := s.newStage(MapTask, ref.writer, j)
	st.setParents(parents)
	st.shuffleID, st.numReduces = ref.id, ref.reader.Partitions
	st.indeterminate = st.indeterminate || slices.ContainsFunc(parents, func(p *stage) bool { return p.indeterminate })
	st.lost = map[int]string{}
	// checkShuffles made sure an existing registration has this shape:
	// its outputs are reused (shuffles outlive jobs).
	if err := s.tracker.RegisterShuffle(ref.id, ref.writer.Partitions, ref.reader.Partitions); err != nil {
		panic(fmt.Sprintf("dagscheduler: shuffle %d passed checks but: %v", ref.id, err))
	}
	s.shuffles[ref.id] = st
	return st
}

func (st *stage) setParents(parents []*stage) {
	st.parents = parents
	for _, p := range parents {
		p.children = append(p.children, st)
	}
}

// addJob marks st and its ancestors as needed by job id.
func (s *Scheduler) addJob(st *stage, id int64) {
	if st.jobs[id] {
		return
	}
	st.jobs[id] = true
	for _, p := range st.parents {
		s.addJob(p, id)
	}
}

// sortedStages returns the stages matching keep by id.
func (s *Scheduler) sortedStages(keep func(*stage) bool) []*stage {
	var out []*stage
	for _, st := range s.stages {
		if keep(st) {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b *stage) int { return cmp.Compare(a.id, b.id) })
	return out
}

func byJobThenID(a, b *stage) int {
	if c := cmp.Compare(a.firstJobID, b.firstJobID); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// activeJob is the earliest active job needing st.
func (s *Scheduler) activeJob(st *stage) (int64, bool) {
	first, ok := int64(0), false
	for id := range st.jobs {
		if !ok || id < first {
			first, ok = id, true
		}
	}
	return first, ok
}

// submitStage submits st if its parents are available, else its missing
// parents, parking st as waiting (Spark's submitStage).
func (s *Scheduler) submitStage(st *stage, now time.Time) {
	jobID, ok := s.activeJob(st)
	if !ok || st.state != stIdle {
		return
	}
	missing := s.missingParents(st)
	if len(missing) == 0 {
		s.submitMissingTasks(st, jobID, now)
		return
	}
	for _, p := range missing {
		s.submitStage(p, now)
	}
	st.state = stWaiting
	s.waiting[st.id] = st
}

// missingParents lists the parent map stages whose outputs st needs and
// that are not all available, by id. The walk stops at fully cached nodes.
func (s *Scheduler) missingParents(st *stage) []*stage {
	var out []*stage
	visited := map[*nodeInfo]bool{}
	var walk func(n *nodeInfo)
	walk = func(n *nodeInfo) {
		if visited[n] {
			return
		}
		visited[n] = true
		if n.Cached && s.fullyCached(n) {
			return
		}
		for j, d := range n.Deps {
			if d.Kind != Shuffle {
				walk(n.parents[j])
				continue
			}
			if !s.tracker.IsAvailable(d.ShuffleID) {
				if ms := s.shuffles[d.ShuffleID]; ms != nil && !slices.Contains(out, ms) {
					out = append(out, ms)
				}
			}
		}
	}
	walk(st.node)
	slices.SortFunc(out, func(a, b *stage) int { return cmp.Compare(a.id, b.id) })
	return out
}

func (s *Scheduler) fullyCached(n *nodeInfo) bool {
	for p := range n.Partitions {
		if len(s.cache[cacheKey{n.ID, p}]) == 0 {
			return false
		}
	}
	return true
}

// missingPartitions: map outputs not registered, or result partitions not
// finished (with their output ids).
func (s *Scheduler) missingPartitions(st *stage) (parts, outputIDs []int) {
	if st.kind == MapTask {
		return s.tracker.Missing(st.shuffleID), nil
	}
	j := st.job
	for o, done := range j.finished {
		if !done {
			parts = append(parts, j.partitions[o])
			outputIDs = append(outputIDs, o)
		}
	}
	return parts, outputIDs
}

func (s *Scheduler) submitMissingTasks(st *stage, jobID int64, now time.Time) {
	if st.kind == MapTask && st.indeterminate && !s.tracker.IsAvailable(st.shuffleID) &&
		(s.tracker.NumAvailable(st.shuffleID) > 0 || len(st.lost) > 0) {
		// An indeterminate stage's outputs must come from one run, and so
		// must everything computed from them: stages downstream that kept
		// outputs of the old run (they read them before the loss) are
		// rolled back with it.
		s.rollback(st, "a lost output", fmt.Sprintf("%d of its outputs are lost", len(st.lost)), now)
	}
	parts, outs := s.missingPartitions(st)
	attempt := st.nextAttempt
	st.nextAttempt++
	st.latest = attempt
	st.pending.reset(st.node.Partitions)
	for _, p := range parts {
		st.pending.add(p)
	}
	if len(parts) == 0 {
		st.latestSet = nil
		s.submitWaitingChildren(st, now)
		return
	}
	st.state = stRunning
	ts := &TaskSet{ID: fmt.Sprintf("%d.%d", st.id, attempt), JobID: jobID, StageID: st.id, Attempt: attempt,
		Kind: st.kind, Job: st.jobName, Node: st.node.ID, Epoch: s.tracker.Epoch(), Pool: st.pool,
		Partitions: parts, OutputIDs: outs, Preferred: make([][]scheduler.Location, len(parts)), node: st.node}
	if st.kind == MapTask {
		ts.ShuffleID, ts.NumReduces = st.shuffleID, st.numReduces
	}
	for _, ref := range shuffleDeps(st.node) {
		ts.Reads = append(ts.Reads, ref.id)
	}
	// the memo serves ancestors reached from several partitions; the
	// stage's own node is visited once per partition
	memo := map[cacheKey]prefMemo{}
	for i, p := range parts {
		ts.Preferred[i] = s.computePrefs(st.node, p, memo)
	}
	if st.kind == ResultTask && slices.Equal(outs, parts) {
		ts.OutputIDs = nil // the usual case: result i is partition i
	}
	st.latestSet = ts
	parents := make([]int, len(st.parents))
	for i, p := range st.parents {
		parents[i] = p.id
	}
	s.emit(StageSubmitted{StageID: st.id, Attempt: attempt, Name: st.name(), NumTasks: len(parts), Parents: parents})
	s.emit(SubmitTaskSet{TaskSet: ts})
}

// submitWaitingChildren submits the waiting stages that have parent as a
// parent (their other parents may still be missing).
func (s *Scheduler) submitWaitingChildren(parent *stage, now time.Time) {
	var children []*stage
	for _, st := range parent.children {
		if st.state == stWaiting {
			children = append(children, st)
		}
	}
	slices.SortFunc(children, byJobThenID)
	for _, st := range children {
		delete(s.waiting, st.id)
		st.state = stIdle
		s.submitStage(st, now)
	}
}

// finishStage ends st's running attempt; an empty failure is a success,
// which resets the count of consecutive failed attempts.
func (s *Scheduler) finishStage(st *stage, failure string, willRetry bool) {
	if st.state != stRunning {
		return
	}
	st.state = stIdle
	if failure == "" {
		clear(st.failedAttempt)
	}
	s.emit(StageCompleted{StageID: st.id, Attempt: st.latest, Failure: failure, WillRetry: willRetry})
}
