package framework

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// The DAG core (framework/dagscheduler) sits beside the scheduling core in
// the driver core: every job goes through it. A Job of independent tasks
// is a one-stage job for it — one node whose partitions are the tasks — so
// stage and job ids, the job's end and its listener events come from the
// DAG core, while the task core places, retries and aborts the tasks as
// before. The DAG core hears every success, every abort and every lost
// executor, which is what stages reading shuffles need (their map outputs
// live on executors).

// singleNode is the node id of a job of independent tasks.
const singleNode dagscheduler.NodeID = "tasks"

// setConfig replaces the DAG core's configuration (before any job).
func (c *driverCore) setDAGConfig(cfg dagscheduler.Config) error {
	dag, err := dagscheduler.New(cfg)
	if err != nil {
		return fmt.Errorf("framework: %w", err)
	}
	c.dag = dag
	return nil
}

// submitThroughDAG plans job as a one-stage DAG job; the stage's task set
// is bound to the job as the DAG core submits it.
func (c *driverCore) submitThroughDAG(job *Job, now time.Time) (*jobState, error) {
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
	spec := dagscheduler.JobSpec{Name: job.Name, Pool: job.Pool, Nodes: []dagscheduler.Node{node}, Final: singleNode}
	js := &jobState{job: job, done: make(chan struct{}), results: make([]Result, len(job.Tasks)), lastIndex: -1}
	c.binding = js
	defer func() { c.binding = nil }()
	id, evs, err := c.dag.SubmitJob(spec, now)
	if err != nil {
		return nil, fmt.Errorf("framework: submit job %q: %w", job.Name, err)
	}
	js.id = id
	c.byID[id] = js
	if err := c.applyDAG(evs, now); err != nil {
		delete(c.byID, id)
		c.dag.CancelJob(id, err.Error(), now)
		return nil, err
	}
	c.dirty, c.changed = true, true
	return js, nil
}

// applyDAG carries out the DAG core's events.
func (c *driverCore) applyDAG(evs []dagscheduler.Event, now time.Time) error {
	var first error
	for _, e := range evs {
		switch e := e.(type) {
		case dagscheduler.SubmitTaskSet:
			var err error
			if run := c.runOf(e.TaskSet.JobID); run != nil {
				err = c.submitRunSet(run, e.TaskSet, now)
			} else {
				err = c.submitSet(e.TaskSet, now)
			}
			if err != nil && first == nil {
				first = err
			}
		case dagscheduler.ResultAccepted:
			if run := c.runs[e.JobID]; run != nil {
				run.umbrella.results[e.OutputID] = Result{Index: e.OutputID, Attempt: e.Task.StageAttempt, Output: c.resultValue}
			}
		case dagscheduler.ResultsRevoked:
			if run := c.runs[e.JobID]; run != nil {
				clear(run.umbrella.results)
			}
			c.log.Warnf("%d results of job %d revoked and recomputed: %s", e.Count, e.JobID, e.Reason)
		case dagscheduler.CancelTaskSet:
			c.process(c.sched.KillTaskSet(setIDOf(e.TaskSetID), e.Reason), nil, now)
		case dagscheduler.JobSucceeded:
			if run := c.runs[e.JobID]; run != nil {
				c.endRun(run, "", false, now)
			} else if js := c.byID[e.JobID]; js != nil {
				c.endJob(js.setID, nil, now)
			}
		case dagscheduler.JobFailed:
			if run := c.runs[e.JobID]; run != nil {
				c.endRun(run, e.Reason, true, now)
			} else if js := c.byID[e.JobID]; js != nil {
				ab := js.aborted
				if ab == nil {
					ab = &scheduler.TaskSetAborted{TaskSetID: js.setID, Reason: e.Reason}
				}
				c.endJob(js.setID, ab, now)
			}
		case dagscheduler.StageCompleted:
			// a job of stages' stage ends here, before the next stage's
			// submission and the job's end, in the order Spark posts them
			if js := c.runSetOf(e.StageID, e.Attempt); js != nil {
				c.endRunSet(js, e.Failure, now)
			}
		case dagscheduler.TaskIgnored:
			c.log.Debugf("DAG core ignored the end of %v: %s", e.Task, e.Reason)
		}
	}
	return first
}

// runOf is the job of stages a DAG task set belongs to, if any.
func (c *driverCore) runOf(jobID int64) *stagesRun {
	if c.bindingRun != nil {
		return c.bindingRun
	}
	return c.runs[jobID]
}

// runSetOf is the task set of a job of stages running attempt attempt of
// stage stageID, if any.
func (c *driverCore) runSetOf(stageID, attempt int) *jobState {
	for _, js := range c.jobs {
		if js.run != nil && js.stage == stageID && js.stageAttempt() == attempt {
			return js
		}
	}
	return nil
}

// setIDOf is the task core's id of a DAG task set ("stage-<stage>.<attempt>").
func setIDOf(dagSetID string) string { return "stage-" + dagSetID }

// submitSet hands a DAG task set to the scheduling core for the job being
// submitted.
func (c *driverCore) submitSet(ts *dagscheduler.TaskSet, now time.Time) error {
	js := c.binding
	if js == nil {
		return fmt.Errorf("framework: the DAG core submitted task set %s outside a job submission", ts.ID)
	}
	js.stage, js.setID, js.dagSet = ts.StageID, setIDOf(ts.ID), ts
	js.files = c.files
	if err := c.sched.Submit(taskSet(js), now); err != nil {
		return fmt.Errorf("framework: submit job %q: %w", js.job.Name, err)
	}
	c.jobs[js.setID] = js
	c.stageStarted(js, now)
	return nil
}

// taskSucceeded tells the DAG core that an attempt's result is in.
func (c *driverCore) taskSucceeded(a attempt, now time.Time) {
	ts := a.job.dagSet
	if ts == nil || a.job.ended {
		return
	}
	t := ts.Task(a.index)
	c.applyDAG(c.dag.TaskEnded(dagscheduler.TaskEnd{Task: t, Reason: dagscheduler.Succeeded, ExecutorID: a.executor}, now), now)
}

// taskSetAborted fails the stage, and with it the job, in the DAG core.
func (c *driverCore) taskSetAborted(e scheduler.TaskSetAborted, now time.Time) {
	js := c.jobs[e.TaskSetID]
	if js == nil || js.ended {
		return
	}
	js.aborted = &e
	if js.run != nil && js.run.aborted == nil {
		js.run.aborted, js.run.abortedStage = &e, js.stage
		js.run.abortedIndex, js.run.attempt = js.lastIndex, js.lastAttempt
	}
	c.applyDAG(c.dag.TaskSetFailed(js.dagSet.StageID, js.dagSet.Attempt, e.Reason, now), now)
	if js.run != nil {
		c.endRunSet(js, e.Reason, now)
		return
	}
	if !js.ended { // the DAG core had already let the stage go
		c.endJob(e.TaskSetID, &e, now)
	}
}

// explainStage is the DAG core's account of a stage.
func (c *driverCore) explainStage(stageID int) dagscheduler.StageExplanation {
	return c.dag.Explain(stageID)
}
