package master

import (
	"errors"
	"time"
)

// ErrNotFound is returned by fault hooks naming an unknown agent or framework.
var ErrNotFound = errors.New("master: not found")

// Faults injects failures. It is for tests only (minimesostest uses it);
// the CLI never exposes it.
type Faults struct{ m *Master }

// Faults returns the test-only fault injection hooks.
func (m *Master) Faults() Faults { return Faults{m} }

// RemoveAgent removes an agent as the health check would (byOperator
// false: tasks become TASK_UNREACHABLE/TASK_LOST) or as an operator
// would (TASK_GONE_BY_OPERATOR/TASK_LOST).
func (f Faults) RemoveAgent(agentID string, byOperator bool) error {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	ag := m.agents[agentID]
	if ag == nil {
		return ErrNotFound
	}
	m.removeAgent(ag, byOperator, m.cfg.Clock.Now())
	return nil
}

// PauseAgentPings makes the master ignore (paused) or heed an agent's
// pongs, so the health check removes it after AgentMaxMissedPings.
func (f Faults) PauseAgentPings(agentID string, paused bool) error {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	ag := m.agents[agentID]
	if ag == nil {
		return ErrNotFound
	}
	ag.pingPaused = paused
	return nil
}

// DropFrameworkStream closes a framework's event stream as if the
// connection broke; the framework is then handled as disconnected.
func (f Faults) DropFrameworkStream(frameworkID string) error {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.fws[frameworkID]
	if fw == nil || fw.sub == nil {
		return ErrNotFound
	}
	sub := fw.sub
	sub.end(nil)
	m.streamGone(fw, sub)
	return nil
}

// RescindAllOffers rescinds every outstanding offer.
func (f Faults) RescindAllOffers() int {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, id := range sortedKeys(m.offers) {
		m.removeOffer(m.offers[id], true, nil)
		n++
	}
	return n
}

// AllocateNow runs one allocation round at once.
func (f Faults) AllocateNow() {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.allocateLocked(m.cfg.Clock.Now())
	}
}

// Now is the master's clock reading.
func (f Faults) Now() time.Time { return f.m.cfg.Clock.Now() }
