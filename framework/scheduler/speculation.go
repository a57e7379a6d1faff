package scheduler

import (
	"math"
	"slices"
	"time"
)

func (m *taskSetManager) speculatableOK(i int32) bool {
	return m.flags[i]&(fSpeculative|fSucceeded) == fSpeculative && m.copies[i] == 1
}

func (m *taskSetManager) hasSpeculatable() bool {
	for len(m.speculatable) > 0 {
		i := m.speculatable[len(m.speculatable)-1]
		if m.speculatableOK(i) {
			return true
		}
		m.flags[i] &^= fSpeculative
		m.speculatable = m.speculatable[:len(m.speculatable)-1]
	}
	return false
}

// medianDuration is the median of successful attempt durations (mean of the
// two middle values for an even count), cached until more tasks succeed.
func (m *taskSetManager) medianDuration() time.Duration {
	if m.medianN != len(m.durations) {
		d := slices.Clone(m.durations)
		slices.Sort(d)
		n := len(d)
		if n%2 == 1 {
			m.median = d[n/2]
		} else {
			m.median = (d[n/2-1] + d[n/2]) / 2
		}
		m.medianN = n
	}
	return m.median
}

// speculationThreshold returns the runtime above which a running task of m
// is speculatable, or false when m is not eligible yet.
func (s *TaskScheduler) speculationThreshold(m *taskSetManager) (time.Duration, bool) {
	n := m.numTasks()
	if m.zombie || n == 1 {
		return 0, false
	}
	sc := s.cfg.Speculation
	minFinished := max(int(math.Floor(sc.Quantile*float64(n))), 1)
	if m.succeeded < minFinished {
		return 0, false
	}
	thr := time.Duration(sc.Multiplier * float64(m.medianDuration()))
	return max(thr, sc.MinTaskRuntime), true
}

// checkSpeculatable marks slow single-attempt running tasks speculatable
// (Spark's checkSpeculatableTasks).
func (s *TaskScheduler) checkSpeculatable(now time.Time) {
	thresholds := map[*taskSetManager]time.Duration{}
	for _, m := range s.ordered {
		if thr, ok := s.speculationThreshold(m); ok {
			thresholds[m] = thr
		}
	}
	if len(thresholds) == 0 {
		return
	}
	var ids []TaskID
	for id, a := range s.running {
		thr, ok := thresholds[a.m]
		i := a.index
		if ok && a.m.flags[i]&(fSucceeded|fSpeculative) == 0 && a.m.copies[i] == 1 && now.Sub(a.launched) > thr {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		a := s.running[id]
		a.m.flags[a.index] |= fSpeculative
		a.m.speculatable = append(a.m.speculatable, a.index)
	}
}

// runningOnHost reports whether index i has a running attempt on host.
func (s *TaskScheduler) runningOnHost(m *taskSetManager, i int32, host string) bool {
	for _, tid := range m.tidsOf(i) {
		if a, ok := s.running[tid]; ok && a.host == host {
			return true
		}
	}
	return false
}

// dequeueSpeculative picks a speculatable task for an offer on a host where
// the task is not running yet, within the allowed locality.
func (m *taskSetManager) dequeueSpeculative(s *TaskScheduler, exec, host, rack string, max Level) (int32, Level) {
	for j := len(m.speculatable) - 1; j >= 0; j-- {
		i := m.speculatable[j]
		if !m.speculatableOK(i) {
			m.flags[i] &^= fSpeculative
			m.speculatable = slices.Delete(m.speculatable, j, j+1)
			continue
		}
		if m.excl != nil && m.excl.hasTaskExclusions() && m.excl.taskExcluded(i, exec, host) {
			continue
		}
		if s.runningOnHost(m, i, host) {
			continue
		}
		need, report := m.taskLevel(s, i, exec, host, rack)
		if need > max {
			continue
		}
		m.speculatable = slices.Delete(m.speculatable, j, j+1)
		m.flags[i] &^= fSpeculative
		return i, report
	}
	return -1, 0
}
