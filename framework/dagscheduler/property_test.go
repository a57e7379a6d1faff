package dagscheduler

import (
	"testing"

	"pgregory.net/rapid"
)

type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) intn(n int, label string) int { return rapid.IntRange(0, n-1).Draw(c.t, label) }

// TestProperties drives the simulation from rapid: random lineages, jobs
// and failure schedules, shrunk to a minimal history when an invariant
// breaks. For any history: every job ends exactly once; every accepted
// result equals the lineage evaluated directly (so it was computed from a
// complete, correct set of map outputs); no result is accepted twice; no
// task set is submitted for a map output that is available or a result
// already accepted; duplicate and late status updates change nothing.
func TestProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stats := &simStats{reasons: map[string]int{}, ignored: map[string]int{}}
		s := newSim(t, 0, rapidChooser{t}, stats)
		s.run(3000, rapid.IntRange(0, 300).Draw(t, "fault steps"))
	})
}
