package driver

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// The DAG core (framework/dagscheduler) sits beside the scheduling core in
// the driver core, and every job goes through it on one path: a Job of
// independent tasks is a one-stage job of one node whose partitions are
// the tasks (jobRun.plain holds their inputs), a StageJob a lineage of
// stages split at shuffles. Stage and job ids, the job's end and its
// listener events come from the DAG core, while the task core places,
// retries and aborts each stage attempt's tasks. The DAG core hears every
// success, every abort and every lost executor, which is what stages
// reading shuffles need (their map outputs live on executors).

// singleNode is the node id of a job of independent tasks.
const singleNode dagscheduler.NodeID = "tasks"

// setDAGConfig replaces the DAG core's configuration (before any job).
func (c *driverCore) setDAGConfig(cfg dagscheduler.Config) error {
	dag, err := dagscheduler.New(cfg)
	if err != nil {
		return fmt.Errorf("framework: %w", err)
	}
	c.dag = dag
	return nil
}

// plainRun is the one-stage job of stages a Job of independent tasks is.
func plainRun(job *Job) *jobRun {
	node := dagscheduler.Node{ID: singleNode, Name: job.Name, Partitions: len(job.Tasks)}
	for i := range job.Tasks {
		if len(job.Tasks[i].Preferred) > 0 {
			node.Preferred = make([][]scheduler.Location, len(job.Tasks))
			for j := range job.Tasks {
				node.Preferred[j] = job.Tasks[j].Preferred
			}
			break
		}
	}
	sj := &StageJob{Spec: dagscheduler.JobSpec{Name: job.Name, Pool: job.Pool, Nodes: []dagscheduler.Node{node}, Final: singleNode}}
	return &jobRun{job: sj, plain: job.Tasks}
}

// applyDAG carries out the DAG core's events. res is the result of the
// task whose end produced them, if it was a success (ResultAccepted
// stores it).
func (c *driverCore) applyDAG(evs []dagscheduler.Event, now time.Time, res *Result) error {
	var first error
	for _, e := range evs {
		switch e := e.(type) {
		case dagscheduler.SubmitTaskSet:
			err := fmt.Errorf("framework: the DAG core submitted task set %s of unknown job %d", e.TaskSet.ID, e.TaskSet.JobID)
			if run := c.runs[e.TaskSet.JobID]; run != nil {
				err = c.submitRunSet(run, e.TaskSet, now)
			}
			if err != nil && first == nil {
				first = err
			}
		case dagscheduler.ResultAccepted:
			if run := c.runs[e.JobID]; run != nil && res != nil {
				r := *res
				r.Index = e.OutputID
				run.umbrella.results[e.OutputID] = r
			}
		case dagscheduler.ResultsRevoked:
			if run := c.runs[e.JobID]; run != nil {
				clear(run.umbrella.results)
			}
			c.log.Warnf("%d results of job %d revoked and recomputed: %s", e.Count, e.JobID, e.Reason)
		case dagscheduler.CancelTaskSet:
			reason := e.Reason
			if e.Cause != "" { // the set is aborted for what its job was cancelled for
				reason = e.Cause
			}
			c.process(c.sched.KillTaskSet(setIDOf(e.TaskSetID), reason), nil, now)
		case dagscheduler.JobSucceeded:
			if run := c.runs[e.JobID]; run != nil {
				c.endRun(run, "", false, now)
			}
		case dagscheduler.JobFailed:
			if run := c.runs[e.JobID]; run != nil {
				c.endRun(run, e.Reason, true, now)
			}
		case dagscheduler.StageCompleted:
			// a stage ends here, before the next stage's submission and
			// the job's end, in the order Spark posts them
			if js := c.runSetOf(e.StageID, e.Attempt); js != nil {
				c.endRunSet(js, e.Failure, now)
				if e.Failure == "" {
					// Every partition is in, some from an earlier
					// attempt's tasks (a late success after a fetch
					// failure): this attempt's task set may still have
					// tasks pending or running, which the task core
					// must not launch for a set the driver forgot
					// (Spark's killAllTaskAttempts: "Stage finished").
					// A set the task core finished is left alone.
					c.process(c.sched.KillTaskSet(js.setID, "stage finished: its partitions were computed by an earlier attempt"), nil, now)
				}
			}
		case dagscheduler.TaskIgnored:
			c.log.Debugf("DAG core ignored the end of %v: %s", e.Task, e.Reason)
		}
	}
	return first
}

// runSetOf is the task set running attempt attempt of stage stageID, if any.
func (c *driverCore) runSetOf(stageID, attempt int) *jobState {
	for _, js := range c.jobs {
		if js.stage == stageID && js.stageAttempt() == attempt {
			return js
		}
	}
	return nil
}

// setIDOf is the task core's id of a DAG task set ("stage-<stage>.<attempt>").
func setIDOf(dagSetID string) string { return "stage-" + dagSetID }

// taskSetAborted fails the stage, and with it the job, in the DAG core.
func (c *driverCore) taskSetAborted(e scheduler.TaskSetAborted, now time.Time) {
	js := c.jobs[e.TaskSetID]
	if js == nil || js.ended {
		return
	}
	js.aborted = &e
	if js.run.aborted == nil {
		js.run.aborted, js.run.abortedStage = &e, js.stage
		js.run.abortedIndex, js.run.attempt = js.lastIndex, js.lastAttempt
	}
	c.applyDAG(c.dag.TaskSetFailed(js.dagSet.StageID, js.dagSet.Attempt, e.Reason, now), now, nil)
	c.endRunSet(js, e.Reason, now)
}

// explainStage is the DAG core's account of a stage.
func (c *driverCore) explainStage(stageID int) dagscheduler.StageExplanation {
	return c.dag.Explain(stageID)
}
