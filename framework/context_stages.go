package framework

import (
	"context"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/driver"
)

// ExplainStage says where a stage is in the DAG core: which parent stages
// it waits on, which partitions are missing and why (never computed, being
// computed, or lost with an executor or a fetch failure), and its failed
// attempts. Explain says why one task of an active stage is not running.
func (c *Context) ExplainStage(stageID int) dagscheduler.StageExplanation {
	return c.driver.ExplainStage(stageID)
}

// StageJob is a job of stages (driver.StageJob).
type StageJob = driver.StageJob

// RunStages runs a job of stages (driver.Driver.RunStages).
func (c *Context) RunStages(ctx context.Context, job *StageJob) ([][]byte, error) {
	return c.driver.RunStages(ctx, job)
}

// ReleaseShuffle forgets a shuffle's map outputs (driver.Driver.ReleaseShuffle).
func (c *Context) ReleaseShuffle(shuffleID int) bool { return c.driver.ReleaseShuffle(shuffleID) }

// ReleaseShuffleFiles tells every executor to delete the files of map
// outputs the driver no longer tracks (driver.Driver.ReleaseShuffleFiles).
func (c *Context) ReleaseShuffleFiles(r backend.ShuffleRelease) { c.driver.ReleaseShuffleFiles(r) }

// ForgetCached drops the locations of cached partitions of nodes whose id
// starts with prefix (driver.Driver.ForgetCached).
func (c *Context) ForgetCached(prefix string) { c.driver.ForgetCached(prefix) }

// NewShuffleID returns a shuffle id no job of this Context used or uses
// (driver.Driver.NewShuffleID).
func (c *Context) NewShuffleID() int { return c.driver.NewShuffleID() }
