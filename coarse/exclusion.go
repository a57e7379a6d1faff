package coarse

import (
	"time"

	"github.com/flint-mesos/flint/framework/placement"
)

// agentFailures counts executor failures per agent and excludes an agent
// for a while once it reaches the limit (Spark's MAX_SLAVE_FAILURES, but
// expiring). It is not safe for concurrent use; the Backend locks it.
type agentFailures struct {
	limit   int
	timeout time.Duration
	agents  map[string]*agentRecord
}

type agentRecord struct {
	failures int
	until    time.Time // zero: not excluded
	last     string    // the last failure, for explanations
}

func newAgentFailures(limit int, timeout time.Duration) *agentFailures {
	return &agentFailures{limit: limit, timeout: timeout, agents: map[string]*agentRecord{}}
}

// fail records an executor failure on agent; it reports whether the agent
// became excluded by it.
func (a *agentFailures) fail(agent, why string, now time.Time) bool {
	r := a.agents[agent]
	if r == nil {
		r = &agentRecord{}
		a.agents[agent] = r
	}
	r.failures++
	r.last = why
	if r.failures >= a.limit && r.until.IsZero() {
		r.until = now.Add(a.timeout)
		return true
	}
	return false
}

// excluded reports whether agent is excluded at now; an expired exclusion
// is forgotten together with the agent's failure count.
func (a *agentFailures) excluded(agent string, now time.Time) bool {
	r := a.agents[agent]
	if r == nil || r.until.IsZero() {
		return false
	}
	if !now.Before(r.until) {
		delete(a.agents, agent)
		return false
	}
	return true
}

// why explains an agent's exclusion.
func (a *agentFailures) why(agent string) (failures int, until time.Time, last string) {
	if r := a.agents[agent]; r != nil {
		return r.failures, r.until, r.last
	}
	return 0, time.Time{}, ""
}

// exclusions lists the agents excluded at now, for placement; expired
// exclusions are forgotten with their failure counts.
func (a *agentFailures) exclusions(now time.Time) map[string]placement.Exclusion {
	out := map[string]placement.Exclusion{}
	for id, r := range a.agents {
		if r.until.IsZero() {
			continue
		}
		if !now.Before(r.until) {
			delete(a.agents, id)
			continue
		}
		out[id] = placement.Exclusion{Until: r.until, Failures: r.failures, Last: r.last}
	}
	return out
}
