package dataset

import (
	"context"
	"iter"

	"github.com/flint-mesos/flint/framework"
)

// TaskContext is what a dataset closure that asks for it learns of the
// task running it (Spark's TaskContext with SparkFiles): the partition it
// computes, the stage and attempt numbers, a context done when the task
// is killed, the job's configuration and the files added to the Context.
// Get one with MapPartitionsWithContext. It is valid only during the call
// it was passed to.
type TaskContext struct {
	tc   *taskContext
	part int
}

// Context is done when the task is killed (its job cancelled, a
// speculative copy won, the run ended) or its executor stops: a closure
// that waits or loops for long should return ctx.Err() when it is.
func (c TaskContext) Context() context.Context { return c.tc.ctx }

// Partition is the index of the partition the closure computes (Spark's
// partitionId for a closure on the stage's last dataset; for a closure
// under a Coalesce or Union it is that dataset's own partition).
func (c TaskContext) Partition() int { return c.part }

// StageID is the driver's id of the stage the task belongs to.
func (c TaskContext) StageID() int { return c.tc.env.task.StageID }

// StageAttempt counts the earlier attempts of the task's stage (0 for the
// first; Spark's stageAttemptNumber).
func (c TaskContext) StageAttempt() int { return c.tc.env.task.StageAttempt }

// Attempt counts the earlier attempts of this task (0 for the first;
// Spark's attemptNumber): a retry after a failure or a speculative copy
// has a higher number.
func (c TaskContext) Attempt() int { return c.tc.env.task.AttemptNumber }

// TaskAttemptID is the driver's id of this task attempt, unique within
// the application (Spark's taskAttemptId).
func (c TaskContext) TaskAttemptID() uint64 { return c.tc.env.task.Attempt }

// ExecutorID is the executor running the task.
func (c TaskContext) ExecutorID() string { return c.tc.env.task.Executor.ExecutorID }

// Config is the job's configuration as the task sees it: every flint.*
// setting the driver had, its credentials excepted (framework.TaskConfig).
func (c TaskContext) Config() *framework.Config { return framework.TaskConfig(c.tc.ctx) }

// File is the local path of the file added to the Context as name (its
// base name; Context.AddFile, AddDir, AddArchive) before the task's stage
// was submitted: Spark's SparkFiles.get. Each executor fetches a file
// once.
func (c TaskContext) File(name string) (string, error) {
	return framework.TaskContextOf(c.tc.ctx).File(name)
}

// MapPartitionsWithContext is MapPartitions whose fn also gets the task's
// context (Spark's mapPartitions reading TaskContext.get()): fn is called
// once per partition with the task context, an iterator over the
// partition's records, and yield for its output. det is as for
// MapPartitions: by default fn is taken to depend on its input's order.
// An fn whose output depends on tc.Attempt() or tc.ExecutorID() is
// nondeterministic: pass Nondeterministic.
func MapPartitionsWithContext[T, U any](ds Dataset[T], fn func(tc TaskContext, records iter.Seq[T], yield func(U)) error, det ...Determinism) Dataset[U] {
	if len(det) > 1 {
		panic("dataset: MapPartitionsWithContext takes at most one Determinism")
	}
	out := mapPartitionsTask(ds, func(tc *taskContext, p int, records func(func(T) bool), yield func(U)) error {
		return fn(TaskContext{tc: tc, part: p}, records, yield)
	})
	if len(det) == 0 {
		det = []Determinism{OrderSensitive}
	}
	det[0].apply(&out.n.nodeInfo)
	return out
}
