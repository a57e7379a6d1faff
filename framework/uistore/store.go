package uistore

import (
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

// Limits bound what a Store keeps (Spark's spark.ui.retainedJobs,
// spark.ui.retainedStages and spark.ui.retainedTasks): beyond them the
// oldest finished jobs, stages and (per stage) task attempts are
// forgotten; a stage's counts and totals stay exact. Zero means the
// default: 1000 jobs, 1000 stages, 100,000 tasks per stage.
type Limits struct {
	Jobs, Stages, Tasks int
}

// bitset is a set of small non-negative ints.
type bitset []uint64

// add adds i and reports whether it was new.
func (b *bitset) add(i int) bool {
	w := i / 64
	for len(*b) <= w {
		*b = append(*b, 0)
	}
	m := uint64(1) << (i % 64)
	if (*b)[w]&m != 0 {
		return false
	}
	(*b)[w] |= m
	return true
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// StageKey names one attempt of a stage.
type StageKey struct{ ID, Attempt int }

// Store is the application's state folded from its events. It is safe for
// concurrent use: one goroutine feeds it (OnEvent), any number read.
type Store struct {
	mu        sync.RWMutex
	lim       Limits
	app       app
	env       ApplicationEnvironmentInfo
	jobs      map[int64]*JobData
	jobOrder  []int64
	stages    map[StageKey]*stage
	stageList []StageKey
	stageJob  map[int]int64 // stage id → job, from JobStart
	jobTasks  map[int64]int // tasks of the stages submitted for a job and not announced by its JobStart
	execs     map[string]*ExecutorSummary
	execOrder []string
	events    int64
	last      time.Time
	changed   chan struct{} // closed at the next event (Changed)
}

type app struct {
	id, name, user, version, master string
	start, end                      time.Time
	ended                           bool
}

type stage struct {
	StageData
	list    []task           // attempts in launch order (trimmed by Limits.Tasks)
	index   map[uint64]int32 // task id → position in list
	done    bitset           // indices with a successful attempt
	byExec  map[string]*ExecutorStageSummary
	started bool
}

// New returns an empty store.
func New(lim Limits) *Store {
	if lim.Jobs <= 0 {
		lim.Jobs = 1000
	}
	if lim.Stages <= 0 {
		lim.Stages = 1000
	}
	if lim.Tasks <= 0 {
		lim.Tasks = 100_000
	}
	return &Store{lim: lim, jobs: map[int64]*JobData{}, stages: map[StageKey]*stage{}, stageJob: map[int]int64{}, jobTasks: map[int64]int{},
		execs: map[string]*ExecutorSummary{}}
}

var _ event.Listener = (*Store)(nil)

// OnEvent folds e into the store.
func (s *Store) OnEvent(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events++
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	if t := event.TimeOf(e); t.After(s.last) {
		s.last = t
	}
	switch e := e.(type) {
	case event.ApplicationStart:
		s.app = app{id: e.AppID, name: e.Name, user: e.User, version: e.Version, master: e.Master, start: e.Time}
	case event.ApplicationEnd:
		s.app.end, s.app.ended = e.Time, true
	case event.EnvironmentUpdate:
		s.onEnvironment(e)
	case event.JobStart:
		s.onJobStart(e)
	case event.JobEnd:
		s.onJobEnd(e)
	case event.StageSubmitted:
		s.onStageSubmitted(e)
	case event.StageCompleted:
		s.onStageCompleted(e)
	case event.TaskStart:
		s.onTaskStart(e)
	case event.TaskEnd:
		s.onTaskEnd(e)
	case event.ExecutorAdded:
		s.onExecutorAdded(e)
	case event.ExecutorRemoved:
		if x := s.execs[e.ExecutorID]; x != nil {
			x.IsActive, x.RemoveTime, x.RemoveReason = false, NewDate(e.Time), e.Reason
		}
	}
}

func (s *Store) onEnvironment(e event.EnvironmentUpdate) {
	s.env = ApplicationEnvironmentInfo{Runtime: map[string]string{}, SparkProperties: append([][2]string(nil), e.Properties...),
		SystemProperties: [][2]string{}, ClasspathEntries: [][2]string{}}
	for _, kv := range e.Runtime {
		s.env.Runtime[kv[0]] = kv[1]
	}
}

func (s *Store) onJobStart(e event.JobStart) {
	j := &JobData{JobID: e.JobID, Name: e.Name, SubmissionTime: NewDate(e.Time), StageIDs: append([]int{}, e.StageIDs...),
		Status: JobRunning, NumTasks: e.NumTasks, KilledTasksSummary: map[string]int{}}
	s.jobs[e.JobID] = j
	s.jobOrder = append(s.jobOrder, e.JobID)
	for _, id := range e.StageIDs {
		s.stageJob[id] = e.JobID
	}
	// Stages the job announces with their DAG are pending until submitted.
	for _, si := range e.Stages {
		k := StageKey{si.StageID, 0}
		if s.stages[k] == nil {
			s.addStage(k, e.JobID, si.Name, si.NumTasks, si.ParentIDs, StagePending, time.Time{})
		}
	}
	s.trimJobs()
}

func (s *Store) onJobEnd(e event.JobEnd) {
	j := s.jobs[e.JobID]
	if j == nil {
		return
	}
	j.CompletionTime = NewDate(e.Time)
	j.Status = JobSucceeded
	if e.Err != nil {
		j.Status, j.FailureReason = JobFailed, e.Err.Error()
	}
	// Stages of the job that never ran were skipped (Spark's skipped stages).
	for _, id := range j.StageIDs {
		if st := s.stages[StageKey{id, 0}]; st != nil && st.Status == StagePending {
			st.Status = StageSkipped
			j.NumSkippedStages++
			j.NumSkippedTasks += st.NumTasks
		}
	}
	j.NumActiveStages = 0
}

func (s *Store) addStage(k StageKey, job int64, name string, n int, parents []int, status string, at time.Time) *stage {
	st := &stage{StageData: StageData{Status: status, StageID: k.ID, AttemptID: k.Attempt, NumTasks: n, Name: name,
		SubmissionTime: NewDate(at), SchedulingPool: "default", KilledTasksSummary: map[string]int{},
		ParentIDs: append([]int{}, parents...), JobID: job},
		list: make([]task, 0, min(n, s.lim.Tasks)), index: make(map[uint64]int32, min(n, s.lim.Tasks)), byExec: map[string]*ExecutorStageSummary{}}
	s.stages[k] = st
	s.stageList = append(s.stageList, k)
	s.trimStages()
	return st
}

func (s *Store) onStageSubmitted(e event.StageSubmitted) {
	k := StageKey{e.StageID, e.Attempt}
	st := s.stages[k]
	if st == nil {
		st = s.addStage(k, e.JobID, e.Name, e.NumTasks, e.ParentIDs, StageActive, e.Time)
		if j := s.jobs[e.JobID]; j != nil && e.Attempt == 0 {
			// A stage the job did not announce: the job's tasks are all its
			// stages' (Spark's numTasks), at least what JobStart said.
			s.jobTasks[e.JobID] += e.NumTasks
			j.NumTasks = max(j.NumTasks, s.jobTasks[e.JobID])
		}
	} else {
		st.Status, st.SubmissionTime, st.NumTasks = StageActive, NewDate(e.Time), e.NumTasks
		if c := min(e.NumTasks, s.lim.Tasks); cap(st.list) < c {
			st.list = append(make([]task, 0, c), st.list...)
		}
		if len(e.ParentIDs) > 0 {
			st.ParentIDs = append([]int{}, e.ParentIDs...)
		}
	}
	st.Details = e.Name
	if _, ok := s.stageJob[e.StageID]; !ok {
		s.stageJob[e.StageID] = e.JobID
	}
	if j := s.jobs[e.JobID]; j != nil {
		j.NumActiveStages++
		if !containsInt(j.StageIDs, e.StageID) {
			j.StageIDs = append(j.StageIDs, e.StageID)
		}
	}
}

func (s *Store) onStageCompleted(e event.StageCompleted) {
	st := s.stages[StageKey{e.StageID, e.Attempt}]
	if st == nil {
		return
	}
	st.CompletionTime = NewDate(e.Time)
	st.Status, st.FailureReason = StageComplete, e.FailureReason
	if e.FailureReason != "" {
		st.Status = StageFailed
	}
	if j := s.jobs[st.JobID]; j != nil {
		j.NumActiveStages = max(0, j.NumActiveStages-1)
		if st.Status == StageFailed {
			j.NumFailedStages++
		} else {
			j.NumCompletedStages++
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// trimJobs forgets the oldest finished jobs beyond the limit.
func (s *Store) trimJobs() {
	for len(s.jobOrder) > s.lim.Jobs {
		i := 0
		for i < len(s.jobOrder) && s.jobs[s.jobOrder[i]].Status == JobRunning {
			i++
		}
		if i == len(s.jobOrder) {
			return
		}
		delete(s.jobs, s.jobOrder[i])
		delete(s.jobTasks, s.jobOrder[i])
		s.jobOrder = append(s.jobOrder[:i], s.jobOrder[i+1:]...)
	}
}

// trimStages forgets the oldest ended stages beyond the limit, with their tasks.
func (s *Store) trimStages() {
	for len(s.stageList) > s.lim.Stages {
		i := 0
		for i < len(s.stageList) {
			if st := s.stages[s.stageList[i]].Status; st != StageActive && st != StagePending {
				break
			}
			i++
		}
		if i == len(s.stageList) {
			return
		}
		k := s.stageList[i]
		delete(s.stages, k)
		s.stageList = append(s.stageList[:i], s.stageList[i+1:]...)
	}
}

// Changed returns a channel closed when the next event is folded in:
// readers wait on it instead of polling.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}
