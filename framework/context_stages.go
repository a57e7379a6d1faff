package framework

import (
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/internal/driverseam"
)

// ExplainStage says where a stage is in the DAG core: which parent stages
// it waits on, which partitions are missing and why (never computed, being
// computed, or lost with an executor or a fetch failure), and its failed
// attempts. Explain says why one task of an active stage is not running.
func (c *Context) ExplainStage(stageID int) dagscheduler.StageExplanation {
	return c.driver.ExplainStage(stageID)
}

// The dataset layer's plumbing (jobs of stages, shuffle ids and releases,
// cached-partition locations, the UI store) is not the user's API: it is
// reached through internal/driverseam.
func init() {
	driverseam.Register(func(fc any) (driverseam.Seam, bool) {
		c, ok := fc.(*Context)
		if !ok || c == nil {
			return driverseam.Seam{}, false
		}
		return driverseam.Seam{Driver: c.driver, UIStore: c.op.store}, true
	})
}
