package uistore

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"time"
)

// App is what the store knows of the application itself.
type App struct {
	ID, Name, User, Version, Master string
	Start, End                      time.Time
	Completed                       bool
	// LastEvent is the time of the newest event folded in.
	LastEvent time.Time
	Events    int64
}

// App returns the application's identity and times.
func (s *Store) App() App {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return App{ID: s.app.id, Name: s.app.name, User: s.app.user, Version: s.app.version, Master: s.app.master,
		Start: s.app.start, End: s.app.end, Completed: s.app.ended, LastEvent: s.last, Events: s.events}
}

// Application returns Spark's ApplicationInfo; a running application's
// duration runs to now and its endTime is the epoch, as Spark writes it.
func (s *Store) Application(now time.Time) ApplicationInfo {
	a := s.App()
	end, last := a.End, a.LastEvent
	dur := a.End.Sub(a.Start)
	if !a.Completed {
		end, dur = time.UnixMilli(0), now.Sub(a.Start)
	}
	if last.IsZero() {
		last = a.Start
	}
	cores := 0
	for _, x := range s.Executors(true) {
		cores += x.TotalCores
	}
	return ApplicationInfo{ID: a.ID, Name: a.Name, CoresGranted: &cores, Attempts: []ApplicationAttemptInfo{{
		StartTime: Date{a.Start}, EndTime: Date{end}, LastUpdated: Date{last}, Duration: dur.Milliseconds(),
		SparkUser: a.User, Completed: a.Completed, AppSparkVersion: a.Version,
		StartTimeEpoch: a.Start.UnixMilli(), EndTimeEpoch: end.UnixMilli(), LastUpdatedEpoch: last.UnixMilli(),
	}}}
}

func wanted(statuses []string, st string) bool {
	if len(statuses) == 0 {
		return true
	}
	for _, s := range statuses {
		if s == st {
			return true
		}
	}
	return false
}

func copyJob(j *JobData) JobData {
	c := *j
	c.StageIDs = append([]int{}, j.StageIDs...)
	c.KilledTasksSummary = maps.Clone(j.KilledTasksSummary)
	return c
}

// Jobs returns the jobs with one of statuses (all when none), newest first
// as Spark lists them.
func (s *Store) Jobs(statuses ...string) []JobData {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []JobData{}
	for i := len(s.jobOrder) - 1; i >= 0; i-- {
		if j := s.jobs[s.jobOrder[i]]; wanted(statuses, j.Status) {
			out = append(out, copyJob(j))
		}
	}
	return out
}

// ErrNotFound is wrapped by lookups of unknown jobs, stages and executors.
var ErrNotFound = fmt.Errorf("uistore: not found")

// Job returns one job.
func (s *Store) Job(id int64) (JobData, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j := s.jobs[id]
	if j == nil {
		return JobData{}, fmt.Errorf("%w: unknown job %d", ErrNotFound, id)
	}
	return copyJob(j), nil
}

func (st *stage) copy(withTasks bool, now time.Time) StageData {
	c := st.StageData
	c.ParentIDs = append([]int{}, st.ParentIDs...)
	c.KilledTasksSummary = maps.Clone(st.KilledTasksSummary)
	c.Tasks, c.ExecutorSummary = nil, nil
	if withTasks {
		c.Tasks = make(map[string]TaskData, len(st.list))
		for i := range st.list {
			c.Tasks[strconv.FormatUint(st.list[i].TaskID, 10)] = st.list[i].data(now)
		}
		c.ExecutorSummary = make(map[string]ExecutorStageSummary, len(st.byExec))
		for id, es := range st.byExec {
			c.ExecutorSummary[id] = *es
		}
	}
	return c
}

// Stages returns every stage attempt with one of statuses (all when
// none), newest first, without tasks.
func (s *Store) Stages(statuses ...string) []StageData {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []StageData{}
	for i := len(s.stageList) - 1; i >= 0; i-- {
		if st := s.stages[s.stageList[i]]; wanted(statuses, st.Status) {
			out = append(out, st.copy(false, time.Time{}))
		}
	}
	return out
}

// StageAttempts returns every attempt of stage id, oldest first, with
// tasks (a running one's duration runs to now).
func (s *Store) StageAttempts(id int, now time.Time) ([]StageData, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []StageData
	for _, k := range s.stageList {
		if k.ID == id {
			out = append(out, s.stages[k].copy(true, now))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: unknown stage %d", ErrNotFound, id)
	}
	return out, nil
}

// Stage returns one stage attempt, with its tasks when withTasks (a
// running one's duration runs to now).
func (s *Store) Stage(k StageKey, withTasks bool, now time.Time) (StageData, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stages[k]
	if st == nil {
		return StageData{}, fmt.Errorf("%w: unknown stage %d attempt %d", ErrNotFound, k.ID, k.Attempt)
	}
	return st.copy(withTasks, now), nil
}

// TaskQuery selects and orders a stage's tasks (Spark's taskList
// parameters): SortBy is ID, -ID, runtime or -runtime (default ID); Status
// filters by task status when set; Length < 0 means all.
type TaskQuery struct {
	Offset, Length int
	SortBy, Status string
}

// ErrBadQuery is wrapped by errors for invalid query parameters.
var ErrBadQuery = fmt.Errorf("uistore: bad query")

// Tasks returns a page of a stage attempt's tasks; a running task's
// duration runs to now.
func (s *Store) Tasks(k StageKey, q TaskQuery, now time.Time) ([]TaskData, error) {
	s.mu.RLock()
	st := s.stages[k]
	if st == nil {
		s.mu.RUnlock()
		return nil, fmt.Errorf("%w: unknown stage %d attempt %d", ErrNotFound, k.ID, k.Attempt)
	}
	all := make([]TaskData, 0, len(st.list))
	for i := range st.list {
		if t := &st.list[i]; q.Status == "" || t.Status == q.Status {
			all = append(all, t.data(now))
		}
	}
	s.mu.RUnlock()
	less, err := taskOrder(q.SortBy, all)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, less)
	lo := min(max(q.Offset, 0), len(all))
	hi := len(all)
	if q.Length >= 0 {
		hi = min(lo+q.Length, len(all))
	}
	return all[lo:hi], nil
}

func taskOrder(by string, ts []TaskData) (func(i, j int) bool, error) {
	switch by {
	case "", "ID":
		return func(i, j int) bool { return ts[i].TaskID < ts[j].TaskID }, nil
	case "-ID":
		return func(i, j int) bool { return ts[i].TaskID > ts[j].TaskID }, nil
	case "runtime":
		return func(i, j int) bool { return *ts[i].Duration < *ts[j].Duration }, nil
	case "-runtime":
		return func(i, j int) bool { return *ts[i].Duration > *ts[j].Duration }, nil
	}
	return nil, fmt.Errorf("%w: sortBy %q: want ID, -ID, runtime or -runtime", ErrBadQuery, by)
}

// PendingIndices returns the task indices of an active stage attempt that
// have neither a running nor a successful attempt: the tasks waiting to be
// placed, whose reasons the UI asks the scheduler for.
func (s *Store) PendingIndices(k StageKey) []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stages[k]
	if st == nil || st.Status != StageActive {
		return nil
	}
	var busy bitset
	for i := range st.list {
		if !st.list[i].ended {
			busy.add(st.list[i].Index)
		}
	}
	var out []int
	for i := 0; i < st.NumTasks; i++ {
		if !busy.has(i) && !st.done.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// Executors returns the executors (only the active ones when activeOnly),
// in the order they were added.
func (s *Store) Executors(activeOnly bool) []ExecutorSummary {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []ExecutorSummary{}
	for _, id := range s.execOrder {
		x := s.execs[id]
		if activeOnly && !x.IsActive {
			continue
		}
		c := *x
		c.ExecutorLogs = maps.Clone(x.ExecutorLogs)
		out = append(out, c)
	}
	return out
}

// Executor returns one executor.
func (s *Store) Executor(id string) (ExecutorSummary, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x := s.execs[id]
	if x == nil {
		return ExecutorSummary{}, fmt.Errorf("%w: unknown executor %q", ErrNotFound, id)
	}
	c := *x
	c.ExecutorLogs = maps.Clone(x.ExecutorLogs)
	return c, nil
}

// SetExecutorLogs records the URLs of an executor's logs (stdout, stderr),
// as Spark's executorLogs.
func (s *Store) SetExecutorLogs(id string, logs map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.execs[id]; x != nil {
		x.ExecutorLogs = maps.Clone(logs)
	}
}

// Environment returns the application's configuration (secrets redacted
// by the poster) and runtime.
func (s *Store) Environment() ApplicationEnvironmentInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.env
	e.Runtime = maps.Clone(e.Runtime)
	if e.Runtime == nil {
		e.Runtime = map[string]string{}
	}
	e.SparkProperties = append([][2]string{}, e.SparkProperties...)
	e.SystemProperties = append([][2]string{}, e.SystemProperties...)
	e.ClasspathEntries = append([][2]string{}, e.ClasspathEntries...)
	return e
}
