package scheduler

import (
	"fmt"
	"strings"
	"time"
)

// Reason says why a task is (or is not) placed.
type Reason int

// Explanation reasons.
const (
	ReasonUnknown      Reason = iota // no such active task set or index
	ReasonSucceeded                  // the task succeeded
	ReasonRunning                    // an attempt is running
	ReasonZombie                     // the task set finished or was aborted
	ReasonNoOffers                   // no resource offer was ever received
	ReasonNoOfferFits                // no offer had TaskCPUs free cores
	ReasonExcluded                   // excluded on every known executor
	ReasonLocalityWait               // delay scheduling waits for a preferred place
	ReasonOffersUsedUp               // offers were used up before its turn in pool order
	ReasonPending                    // nothing blocks it: it waits for the next offer
)

var reasonNames = [...]string{"UNKNOWN", "SUCCEEDED", "RUNNING", "ZOMBIE", "NO_OFFERS", "NO_OFFER_FITS",
	"EXCLUDED", "LOCALITY_WAIT", "OFFERS_USED_UP", "PENDING"}

func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Explanation tells why a task is where it is.
type Explanation struct {
	Reason Reason
	Detail string // human-readable
	// for ReasonLocalityWait
	Allowed   Level
	Preferred []string // preferred hosts (executor@host for executor preferences)
	WaitLeft  time.Duration
	// for ReasonNoOfferFits: the most cores a single offer had in the last
	// ResourceOffers call
	LargestOffer int
}

// Explain reports why index of taskSetID is not placed (or that it is). It
// reads bookkeeping from the last ResourceOffers call and does not change
// state.
func (s *TaskScheduler) Explain(taskSetID string, index int, now time.Time) Explanation {
	m := s.sets[taskSetID]
	if m == nil {
		return Explanation{Reason: ReasonUnknown, Detail: fmt.Sprintf("no active task set %q", taskSetID)}
	}
	if index < 0 || index >= m.numTasks() {
		return Explanation{Reason: ReasonUnknown, Detail: fmt.Sprintf("task set %q has no task %d", taskSetID, index)}
	}
	i := int32(index)
	switch {
	case m.flags[i]&fSucceeded != 0:
		return Explanation{Reason: ReasonSucceeded, Detail: "task succeeded"}
	case m.aborted:
		return Explanation{Reason: ReasonZombie, Detail: "task set aborted: " + m.abortReason}
	case m.fetchFailed && !m.finished:
		return Explanation{Reason: ReasonZombie, Detail: "a task of this stage attempt failed to fetch shuffle data: no more launches, the stage is resubmitted"}
	case m.zombie:
		return Explanation{Reason: ReasonZombie, Detail: "task set finished"}
	case m.copies[i] > 0:
		return s.explainRunning(m, i, now)
	}
	return s.explainPending(m, i, now)
}

func (s *TaskScheduler) explainRunning(m *taskSetManager, i int32, now time.Time) Explanation {
	var parts []string
	for _, tid := range m.tidsOf(i) {
		if a, ok := s.running[tid]; ok {
			p := fmt.Sprintf("attempt %d (TID %d) on executor %s host %s at %v for %v", a.attempt, tid, a.exec, a.host, a.locality, now.Sub(a.launched))
			if a.speculative {
				p += " (speculative)"
			}
			parts = append(parts, p)
		}
	}
	return Explanation{Reason: ReasonRunning, Detail: "running: " + strings.Join(parts, "; ")}
}

func (s *TaskScheduler) explainPending(m *taskSetManager, i int32, now time.Time) Explanation {
	cpus := s.cfg.TaskCPUs
	if !s.sawOffers {
		return Explanation{Reason: ReasonNoOffers, Detail: "no resource offers received yet"}
	}
	if s.health != nil && s.completelyExcluded(m, i) {
		d := "excluded on every known executor after failures"
		if !m.unschedExpiry.IsZero() {
			d += fmt.Sprintf("; the task set aborts in %v unless an executor becomes usable", m.unschedExpiry.Sub(now))
		}
		return Explanation{Reason: ReasonExcluded, Detail: d}
	}
	if s.lastOffers > 0 && s.lastExcludedOffers == s.lastOffers {
		return Explanation{Reason: ReasonExcluded, Detail: "every executor offered in the last round is excluded after failures"}
	}
	if s.lastMaxCores < cpus {
		return Explanation{Reason: ReasonNoOfferFits, LargestOffer: s.lastMaxCores,
			Detail: fmt.Sprintf("needs %d cpus; the largest offer in the last round had %d", cpus, s.lastMaxCores)}
	}
	idx, last := m.allowedLevelAt(now)
	allowed := m.levels[idx]
	prefs := m.ts.Tasks[i].Preferred
	if (len(prefs) > 0 && allowed < Any) || (len(prefs) == 0 && allowed < NoPref) {
		left := max(last.Add(m.waits[idx]).Sub(now), 0)
		var hosts []string
		for _, p := range prefs {
			if p.ExecutorID != "" {
				hosts = append(hosts, p.ExecutorID+"@"+p.Host)
			} else {
				hosts = append(hosts, p.Host)
			}
		}
		d := fmt.Sprintf("waiting for locality: allowed level %v", allowed)
		if len(hosts) > 0 {
			d += ", preferred " + strings.Join(hosts, ",")
		}
		d += fmt.Sprintf(", %v left before relaxing to the next level", left)
		return Explanation{Reason: ReasonLocalityWait, Allowed: allowed, Preferred: hosts, WaitLeft: left, Detail: d}
	}
	if m.starved {
		return Explanation{Reason: ReasonOffersUsedUp,
			Detail: fmt.Sprintf("offers were used up before its turn (pool %q order)", m.pool.name)}
	}
	return Explanation{Reason: ReasonPending, Detail: "pending: waiting for the next resource offer"}
}
