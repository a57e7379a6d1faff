package scheduler

import (
	"fmt"
	"strconv"
	"time"
)

// tidsOf lists every attempt ever launched for index i, oldest first.
func (m *taskSetManager) tidsOf(i int32) []TaskID {
	if ids, ok := m.extra[i]; ok {
		return ids
	}
	if m.attempts[i] == 0 {
		return nil
	}
	return []TaskID{m.lastTID[i]}
}

func (m *taskSetManager) recordAttempt(i int32, tid TaskID) {
	switch {
	case m.attempts[i] == 0:
		m.lastTID[i] = tid
	default:
		if m.extra == nil {
			m.extra = map[int32][]TaskID{}
		}
		if _, ok := m.extra[i]; !ok {
			m.extra[i] = []TaskID{m.lastTID[i]}
		}
		m.extra[i] = append(m.extra[i], tid)
		m.lastTID[i] = tid
	}
	m.attempts[i]++
}

// killOthers asks to kill the running attempts of index i other than id.
func (s *TaskScheduler) killOthers(m *taskSetManager, i int32, id TaskID) []Event {
	if m.copies[i] == 0 {
		return nil
	}
	reason := fmt.Sprintf("another attempt (TID %d) succeeded", id) // only built when there is another attempt
	var ev []Event
	for _, tid := range m.tidsOf(i) {
		if a, ok := s.running[tid]; ok && tid != id {
			ev = append(ev, KillTask{TaskID: tid, ExecutorID: a.exec, Reason: reason})
		}
	}
	return ev
}

func (s *TaskScheduler) handleSuccess(id TaskID, a attempt, size int64, now time.Time) []Event {
	m, i := a.m, a.index
	s.endAttempt(id, a)
	killed := TaskKilled{TaskID: id, TaskSetID: m.ts.ID, Index: int(i), Attempt: int(a.attempt)}
	switch {
	case m.flags[i]&fSucceeded != 0:
		killed.Reason = "another attempt of this task already succeeded"
		s.maybeRemove(m)
		return []Event{killed}
	case m.aborted:
		killed.Reason = "task set aborted: " + m.abortReason
		s.maybeRemove(m)
		return []Event{killed}
	}
	if max := s.cfg.MaxResultSize; max > 0 {
		m.totalResult += size
		if m.totalResult > max {
			reason := fmt.Sprintf("total size of results of %d tasks (%d bytes) is bigger than flint.driver.maxResultSize (%d bytes)",
				m.succeeded+1, m.totalResult, max)
			killed.Reason = reason
			ev := []Event{killed}
			return append(ev, s.abort(m, reason, &Failure{Kind: ResultTooLarge, Message: reason})...)
		}
	}
	m.flags[i] |= fSucceeded
	m.succeeded++
	m.durations = append(m.durations, now.Sub(a.launched))
	ev := []Event{TaskSucceeded{TaskID: id, TaskSetID: m.ts.ID, Index: int(i), Attempt: int(a.attempt)}}
	ev = append(ev, s.killOthers(m, i, id)...)
	if m.succeeded == m.numTasks() {
		m.zombie, m.finished = true, true
		m.dropHostPending()
		m.unschedExpiry = time.Time{}
		ev = append(ev, TaskSetFinished{TaskSetID: m.ts.ID})
		if s.health != nil {
			ev = append(ev, s.health.taskSetSucceeded(m.excl, now)...)
		}
	}
	s.maybeRemove(m)
	return ev
}

func (s *TaskScheduler) handleFailure(id TaskID, a attempt, f Failure, now time.Time) []Event {
	m, i := a.m, a.index
	s.endAttempt(id, a)
	if f.Kind == FetchFailed && !m.zombie {
		// Spark's TaskSetManager: the stage attempt is over (the DAG core
		// makes a new one), but running attempts may still finish usefully
		m.zombie, m.fetchFailed = true, true
		m.dropHostPending()
		m.unschedExpiry = time.Time{}
	}
	var after []Event
	if m.flags[i]&fSucceeded == 0 && !m.zombie {
		after = s.countFailure(m, a, f, now)
	}
	retry := m.flags[i]&fSucceeded == 0 && !m.zombie
	if retry && m.copies[i] == 0 {
		m.addPending(s, i)
	}
	var ev []Event
	if f.Kind == Killed {
		ev = append(ev, TaskKilled{TaskID: id, TaskSetID: m.ts.ID, Index: int(i), Attempt: int(a.attempt), Reason: f.Message, WillRetry: retry})
	} else {
		ev = append(ev, TaskFailed{TaskID: id, TaskSetID: m.ts.ID, Index: int(i), Attempt: int(a.attempt), Failure: f, WillRetry: retry})
	}
	s.maybeRemove(m)
	return append(ev, after...)
}

// countFailure applies a failure of a live, unfinished index: exclusion,
// the failure count and aborts.
func (s *TaskScheduler) countFailure(m *taskSetManager, a attempt, f Failure, now time.Time) []Event {
	i := a.index
	last := f
	if f.deterministic() {
		reason := fmt.Sprintf("task %d of stage %d failed with %v, which retrying cannot fix: %s", i, m.ts.StageID, f.Kind, f.Message)
		if f.Kind == NotRetryable {
			reason = fmt.Sprintf("task %d of stage %d failed, and retrying cannot fix it: %s", i, m.ts.StageID, f.Message)
		}
		return s.abort(m, reason, &last)
	}
	if !f.countsTowardsFailures() {
		return nil
	}
	var ev []Event
	if s.cfg.Exclude.Enabled {
		ev = m.excl.taskFailed(m.ts.ID, a.host, a.exec, i, &last, now)
	}
	if f.Kind == DiskFull {
		dev, abort := s.diskFull(m, a, &last)
		if ev = append(ev, dev...); abort {
			return ev
		}
	}
	m.failures[i]++
	if int(m.failures[i]) >= s.cfg.MaxTaskFailures {
		reason := fmt.Sprintf("task %d of stage %d failed %s, most recent failure: %s", i, m.ts.StageID, times(int(m.failures[i])), f.Message)
		ev = append(ev, s.abort(m, reason, &last)...)
	}
	return ev
}

// times is "1 time" or "n times".
func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return strconv.Itoa(n) + " times"
}
