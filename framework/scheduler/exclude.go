package scheduler

import (
	"fmt"
	"slices"
	"time"
)

// taskSetExclude tracks failures within one task set (Spark's
// TaskSetExcludelist): a task avoids executors and nodes where it failed,
// and the whole set avoids executors and nodes with too many failed tasks.
type taskSetExclude struct {
	cfg           *ExcludeConfig
	execs         map[string]*execStageFailures
	nodeExecs     map[string][]string // executors with failures, per host
	nodeTaskExcl  map[string]map[int32]bool
	excludedExecs map[string]bool
	excludedNodes map[string]bool
	lastFailure   *Failure
}

type execStageFailures struct {
	host  string
	tasks map[int32]taskFailures
}

type taskFailures struct {
	count int
	last  time.Time
}

func newTaskSetExclude(cfg *ExcludeConfig) *taskSetExclude {
	return &taskSetExclude{cfg: cfg}
}

func (t *taskSetExclude) hasTaskExclusions() bool { return len(t.execs) > 0 }

// taskExcluded reports whether index i must avoid exec or host.
func (t *taskSetExclude) taskExcluded(i int32, exec, host string) bool {
	if ef := t.execs[exec]; ef != nil && ef.tasks[i].count >= t.cfg.MaxTaskAttemptsPerExecutor {
		return true
	}
	return t.nodeTaskExcl[host][i]
}

// setExcluded reports whether the whole task set avoids exec or host.
func (t *taskSetExclude) setExcluded(exec, host string) bool {
	return t.excludedExecs[exec] || t.excludedNodes[host]
}

// taskFailed records a counted failure of index i on exec/host and returns
// the stage-level exclusions it caused.
func (t *taskSetExclude) taskFailed(setID, host, exec string, i int32, f *Failure, now time.Time) []Event {
	t.lastFailure = f
	if t.execs == nil {
		t.execs = map[string]*execStageFailures{}
		t.nodeExecs = map[string][]string{}
		t.nodeTaskExcl = map[string]map[int32]bool{}
		t.excludedExecs = map[string]bool{}
		t.excludedNodes = map[string]bool{}
	}
	ef := t.execs[exec]
	if ef == nil {
		ef = &execStageFailures{host: host, tasks: map[int32]taskFailures{}}
		t.execs[exec] = ef
	}
	tf := ef.tasks[i]
	ef.tasks[i] = taskFailures{count: tf.count + 1, last: now}
	if !slices.Contains(t.nodeExecs[host], exec) {
		t.nodeExecs[host] = append(t.nodeExecs[host], exec)
	}
	onHost := 0
	for _, e := range t.nodeExecs[host] {
		onHost += t.execs[e].tasks[i].count
	}
	if onHost >= t.cfg.MaxTaskAttemptsPerNode {
		if t.nodeTaskExcl[host] == nil {
			t.nodeTaskExcl[host] = map[int32]bool{}
		}
		t.nodeTaskExcl[host][i] = true
	}
	var ev []Event
	if len(ef.tasks) >= t.cfg.MaxFailedTasksPerExecutor && !t.excludedExecs[exec] {
		t.excludedExecs[exec] = true
		ev = append(ev, ExecutorExcluded{ExecutorID: exec, TaskSetID: setID})
		n := 0
		for _, e := range t.nodeExecs[host] {
			if t.excludedExecs[e] {
				n++
			}
		}
		if n >= t.cfg.MaxFailedExecutorsPerNode && !t.excludedNodes[host] {
			t.excludedNodes[host] = true
			ev = append(ev, NodeExcluded{Host: host, TaskSetID: setID})
		}
	}
	return ev
}

// healthTracker is the application-wide exclusion list (Spark's
// HealthTracker). Only failures of task sets that succeeded count, so a
// broken job does not exclude the whole cluster.
type healthTracker struct {
	cfg        *ExcludeConfig
	failures   map[string][]time.Time // per executor: expiry of each failed task
	execExcl   map[string]execExclusion
	nodeExcl   map[string]time.Time
	nodeExecs  map[string]map[string]bool // excluded executors per host
	nextExpiry time.Time
}

type execExclusion struct {
	host  string
	until time.Time
}

func newHealthTracker(cfg *ExcludeConfig) *healthTracker {
	return &healthTracker{cfg: cfg, failures: map[string][]time.Time{}, execExcl: map[string]execExclusion{},
		nodeExcl: map[string]time.Time{}, nodeExecs: map[string]map[string]bool{}}
}

func (h *healthTracker) excluded(exec, host string) bool {
	if h == nil || len(h.execExcl) == 0 && len(h.nodeExcl) == 0 {
		return false
	}
	_, e := h.execExcl[exec]
	_, n := h.nodeExcl[host]
	return e || n
}

// taskSetSucceeded folds a successful task set's failures into the
// application-wide counts.
func (h *healthTracker) taskSetSucceeded(t *taskSetExclude, now time.Time) []Event {
	if t == nil || len(t.execs) == 0 {
		return nil
	}
	execs := make([]string, 0, len(t.execs))
	for e := range t.execs {
		execs = append(execs, e)
	}
	slices.Sort(execs)
	var ev []Event
	for _, exec := range execs {
		ef := t.execs[exec]
		list := h.failures[exec][:0:0]
		for _, exp := range h.failures[exec] {
			if exp.After(now) {
				list = append(list, exp)
			}
		}
		for _, tf := range ef.tasks {
			if exp := tf.last.Add(h.cfg.Timeout); exp.After(now) {
				list = append(list, exp)
			}
		}
		h.failures[exec] = list
		if _, already := h.execExcl[exec]; already || len(list) < h.cfg.AppMaxFailedTasksPerExecutor {
			continue
		}
		ev = append(ev, h.excludeExecutor(exec, ef.host, now)...)
	}
	return ev
}

func (h *healthTracker) excludeExecutor(exec, host string, now time.Time) []Event {
	until := now.Add(h.cfg.Timeout)
	h.execExcl[exec] = execExclusion{host: host, until: until}
	delete(h.failures, exec)
	h.noteExpiry(until)
	ev := []Event{ExecutorExcluded{ExecutorID: exec, Until: until}}
	if h.nodeExecs[host] == nil {
		h.nodeExecs[host] = map[string]bool{}
	}
	h.nodeExecs[host][exec] = true
	if _, already := h.nodeExcl[host]; !already && len(h.nodeExecs[host]) >= h.cfg.AppMaxFailedExecutorsPerNode {
		h.nodeExcl[host] = until
		ev = append(ev, NodeExcluded{Host: host, Until: until})
	}
	return ev
}

func (h *healthTracker) noteExpiry(t time.Time) {
	if h.nextExpiry.IsZero() || t.Before(h.nextExpiry) {
		h.nextExpiry = t
	}
}

// expire lifts exclusions whose time is up.
func (h *healthTracker) expire(now time.Time) {
	if h.nextExpiry.IsZero() || now.Before(h.nextExpiry) {
		return
	}
	h.nextExpiry = time.Time{}
	for exec, x := range h.execExcl {
		if !now.Before(x.until) {
			delete(h.execExcl, exec)
			delete(h.nodeExecs[x.host], exec)
		} else {
			h.noteExpiry(x.until)
		}
	}
	for host, until := range h.nodeExcl {
		if !now.Before(until) {
			delete(h.nodeExcl, host)
		} else {
			h.noteExpiry(until)
		}
	}
}

// excludeExecutor excludes exec from the whole task set, with no failure
// counted (a full disk: none of the set's tasks can succeed there).
func (t *taskSetExclude) excludeExecutor(setID, exec string) []Event {
	if t.excludedExecs == nil {
		t.excludedExecs = map[string]bool{}
	}
	if t.excludedExecs[exec] {
		return nil
	}
	t.excludedExecs[exec] = true
	return []Event{ExecutorExcluded{ExecutorID: exec, TaskSetID: setID}}
}

// diskFull applies a DiskFull failure of attempt a: its executor is
// excluded for the task set (exclusion on failure enabled or not), and
// when no other known executor can run the task the set aborts at once
// (abort is true) with one reason naming the executor and its host,
// instead of retrying where the disk is just as full.
func (s *TaskScheduler) diskFull(m *taskSetManager, a attempt, last *Failure) (ev []Event, abort bool) {
	if m.excl == nil {
		m.excl = newTaskSetExclude(&s.cfg.Exclude)
	}
	m.excl.lastFailure = last
	ev = m.excl.excludeExecutor(m.ts.ID, a.exec)
	if !s.completelyExcluded(m, a.index) {
		return ev, false
	}
	reason := fmt.Sprintf("task %d of stage %d failed on executor %s (host %s), whose disk is full, and no other executor can run it: %s",
		a.index, m.ts.StageID, a.exec, a.host, last.Message)
	return append(ev, s.abort(m, reason, last)...), true
}

// completelyExcluded reports whether index i of m cannot run on any known
// executor because of exclusions (Spark's getCompletelyExcludedTaskIfAny).
func (s *TaskScheduler) completelyExcluded(m *taskSetManager, i int32) bool {
	if m.excl == nil || len(s.hosts) == 0 {
		return false
	}
	t := m.excl
	for host, hi := range s.hosts {
		if s.health.excluded("", host) || t.excludedNodes[host] || t.nodeTaskExcl[host][i] {
			continue
		}
		for _, exec := range hi.execs {
			if !s.health.excluded(exec, "") && !t.excludedExecs[exec] && !t.taskExcluded(i, exec, "") {
				return false
			}
		}
	}
	return true
}
