package framework

import (
	"time"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// ExplainStage says where a stage is in the DAG core: which parent stages
// it waits on, which partitions are missing and why (never computed, being
// computed, or lost with an executor or a fetch failure), and its failed
// attempts. Explain says why one task of an active stage is not running.
func (c *Context) ExplainStage(stageID int) dagscheduler.StageExplanation {
	var ex dagscheduler.StageExplanation
	c.driver.query(func(core *driverCore, _ time.Time) { ex = core.explainStage(stageID) })
	return ex
}
