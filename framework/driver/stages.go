package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/plural"
)

// Every job runs in the driver loop as a job of stages (jobRun): a Job of
// independent tasks (Context.RunJob) as one stage of one node whose
// partitions are its tasks, a StageJob (Context.RunStages) as the lineage
// the DAG core plans into stages split at shuffles. Each stage attempt's
// task set is a set state (a jobState) in the task core. A StageJob's
// every task is its job's stage task function (stagetask.Register),
// whose input — the stage task with the blocks it reads, from the
// map-output tracker at launch — is built when the task is launched. It
// runs on any executor against the executor's shuffle (shuffleenv: served
// to other hosts by coarse and fine executors, read from disk on the same
// host as in local mode). A map task's output comes back as its block
// sizes and location and becomes a map status in the tracker; a fetch
// failure ends the attempt with the FetchFailed end reason as the update
// arrives (finish): the task core sees scheduler.FetchFailed (the set
// becomes a zombie, no task failure is counted) and the DAG core a fetch
// failure, which recomputes the lost output and resubmits the stage. A lost executor's outputs are
// unregistered by the DAG core when the backend reports the loss.

// StageJob is a job of stages: the lineage the DAG core plans (Spec.Name is
// the job registered with stagetask.Register, whose runner executors use)
// and the job's encoded arguments, handed to every task.
type StageJob struct {
	Spec dagscheduler.JobSpec
	Args []byte
	// Description names the job for listeners and the UI (Spec.Name when
	// empty).
	Description string
	// ResultStage names the job's result stage ("count at dir/main.go:12",
	// the action's call site); empty: its last node's name.
	ResultStage string
	// OnMapOutput, when set, gets the Output.Value of every successful map
	// task of a stage this job's tasks run (a map stage another running
	// job submitted reports to that job). It is called on the driver
	// loop: it must return at once and not call the Context.
	OnMapOutput func(shuffleID, mapIndex int, value []byte)
}

func (j *StageJob) description() string {
	if j.Description != "" {
		return j.Description
	}
	return j.Spec.Name
}

// stageName names a stage for the stage list, the DAG picture and the
// event log by its last operation, as Spark does: a map stage by the
// dataset whose records it writes to the shuffle ("map at wc.go:99"; the
// two map stages of a join are named for their own sides), the result
// stage by the action ("saveAsTextFile at wc.go:115").
func (r *jobRun) stageName(ts *dagscheduler.TaskSet) string {
	if ts.Kind != dagscheduler.MapTask && r.job.ResultStage != "" {
		return r.job.ResultStage
	}
	if n := r.nodes[ts.Node]; n != nil && n.Name != "" {
		return n.Name
	}
	return r.job.description()
}

// jobRun is a job in flight: a job of stages, or a Job of independent
// tasks as one (plainRun).
type jobRun struct {
	job *StageJob
	// plain are a Job's tasks, partition i running plain[i] (nil for a
	// StageJob, whose tasks run its stage task function)
	plain    []Task
	umbrella *jobState // what RunJob and RunStages wait on: done, err, results by output id
	nodes    map[dagscheduler.NodeID]*dagscheduler.Node
	// aborted is the task set abort that failed the job, with the stage,
	// task and attempt of its last failure (the job's error carries its
	// message and stack)
	aborted               *scheduler.TaskSetAborted
	abortedStage          int
	abortedIndex, attempt int
	// stage attempts and tasks submitted, since submitted; summary is the
	// job's one line at its successful end
	stageRuns, tasks int
	submitted        time.Time
	summary          string
}

// RunStages runs a job of stages and returns each result partition's value
// in the order of Spec.Partitions (all partitions of Spec.Final when nil).
// An empty Spec.Pool is the default pool given to New.
func (d *Driver) RunStages(ctx context.Context, job *StageJob) ([][]byte, error) {
	if _, err := stagetask.Lookup(job.Spec.Name); err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidJob, job.Spec.Name, err)
	}
	// RunStages returns the results only once all are in: the DAG core
	// may revoke and recompute them when an indeterminate stage is rolled
	// back, instead of failing the job.
	j := *job
	j.Spec.ResultsHeld = true
	if j.Spec.Pool == "" {
		j.Spec.Pool = d.pool
	}
	js, err := d.submitRun(func() *jobRun { return newStagesRun(&j) })
	if err != nil {
		return nil, err
	}
	if err := d.wait(ctx, js); err != nil {
		return nil, err
	}
	// after the progress display's last lines for the job's stages
	d.log.WithField("job", js.id).Info(js.run.summary)
	out := make([][]byte, len(js.results))
	for i, r := range js.results {
		out[i] = r.Output
	}
	return out, nil
}

func newStagesRun(job *StageJob) *jobRun { return &jobRun{job: job} }

// submitRun plans a job and submits what is missing: the one submission
// path of every job.
func (c *driverCore) submitRun(run *jobRun, now time.Time) (*jobState, error) {
	if c.stopped {
		return nil, ErrStopped
	}
	job := run.job
	run.nodes, run.submitted = make(map[dagscheduler.NodeID]*dagscheduler.Node, len(job.Spec.Nodes)), now
	for i := range job.Spec.Nodes {
		run.nodes[job.Spec.Nodes[i].ID] = &job.Spec.Nodes[i]
		for _, d := range job.Spec.Nodes[i].Deps {
			if d.Kind == dagscheduler.Shuffle {
				c.nextShuffle = max(c.nextShuffle, d.ShuffleID+1)
			}
		}
	}
	um := &jobState{job: &Job{Name: job.description(), Pool: job.Spec.Pool}, done: make(chan struct{}), lastIndex: -1, run: run, stage: -1}
	run.umbrella = um
	id, evs, err := c.dag.SubmitJob(job.Spec, now)
	if err != nil {
		if run.plain != nil {
			return nil, fmt.Errorf("framework: submit job %q: %w", job.Spec.Name, err)
		}
		return nil, fmt.Errorf("framework: %w", err)
	}
	um.id = id
	n := len(job.Spec.Partitions)
	if job.Spec.Partitions == nil {
		for _, nd := range job.Spec.Nodes {
			if nd.ID == job.Spec.Final {
				n = nd.Partitions
			}
		}
	}
	um.results = make([]Result, n)
	c.runs[id] = run
	if c.listening() {
		var stages []int
		for _, e := range evs {
			if s, ok := e.(dagscheduler.SubmitTaskSet); ok {
				stages = append(stages, s.TaskSet.StageID)
			}
		}
		c.out.events = append(c.out.events, event.JobStart{Time: now, JobID: id, Name: job.description(), StageIDs: stages, NumTasks: n})
	}
	if err := c.applyDAG(evs, now, nil); err != nil {
		delete(c.runs, id)
		c.applyDAG(c.dag.CancelJob(id, err.Error(), now), now, nil)
		return nil, err
	}
	c.dirty, c.changed = true, true
	return um, nil
}

// submitRunSet hands a stage attempt of a run to the task core.
func (c *driverCore) submitRunSet(run *jobRun, ts *dagscheduler.TaskSet, now time.Time) error {
	n := len(ts.Partitions)
	// A stage attempt's results go to its job's umbrella (ResultAccepted);
	// it keeps none of its own. Its tasks are the plain job's own when it
	// runs all of them in order (no copy per pending task: 80 bytes each).
	js := &jobState{id: run.umbrella.id, stage: ts.StageID, setID: setIDOf(ts.ID), dagSet: ts, run: run,
		job:  &Job{Name: run.stageName(ts), Pool: run.job.Spec.Pool},
		done: make(chan struct{}), lastIndex: -1}
	if allInOrder(ts.Partitions, len(run.plain)) {
		js.job.Tasks = run.plain
	} else {
		js.job.Tasks = make([]Task, n)
		for i := range js.job.Tasks {
			// the input is built at launch (taskInput): a stage task carries
			// the blocks to read then
			js.job.Tasks[i] = Task{Preferred: ts.Preferred[i]}
		}
	}
	js.files = c.files
	if err := c.sched.Submit(taskSet(js), now); err != nil {
		if run.plain != nil {
			return fmt.Errorf("framework: submit job %q: %w", run.job.Spec.Name, err)
		}
		return fmt.Errorf("framework: submit stage %d of job %q: %w", ts.StageID, run.job.Spec.Name, err)
	}
	c.jobs[js.setID] = js
	run.stageRuns++
	run.tasks += n
	c.stages[js.stage] = newStageStatus(js, now)
	if c.listening() {
		c.out.events = append(c.out.events, event.StageSubmitted{Time: now, JobID: js.id, StageID: js.stage, Name: js.job.Name, NumTasks: n,
			Attempt: ts.Attempt, ParentIDs: c.stageParents(ts)})
	}
	c.log.WithFields(logrus.Fields{"job": js.id, "stage": js.stage, "attempt": ts.Attempt, "tasks": n}).Debugf("stage %d.%d of job %d (%s) submitted", js.stage, ts.Attempt, js.id, run.job.description())
	return nil
}

// taskInput is the task launch l of a set runs: a Job's task as given,
// or the encoded stage task with the reduce partitions it reads and where
// its executor finds their shuffles' map statuses (statusRefs; the files
// to add to the task's come back in Task.files).
func (c *driverCore) taskInput(js *jobState, l *scheduler.Launch) (Task, error) {
	ts := js.dagSet
	t := ts.Task(l.Index)
	if tasks := js.run.plain; tasks != nil {
		return tasks[t.Partition], nil
	}
	host := l.Host
	if e := c.execs[l.ExecutorID]; e != nil && host == "" {
		host = e.host
	}
	st := stagetask.Task{Kind: stagetask.Result, Job: ts.Job, Args: js.run.job.Args, Node: string(t.Node), Partition: t.Partition,
		JobID: t.JobID, StageID: t.StageID, StageAttempt: t.StageAttempt, Attempt: uint64(l.TaskID), AttemptNumber: l.Attempt, Epoch: t.Epoch,
		ShuffleID: t.ShuffleID, NumReduces: t.NumReduces, Executor: mapoutput.Location{ExecutorID: l.ExecutorID, Host: host}}
	if t.Kind == dagscheduler.MapTask {
		st.Kind = stagetask.Map
	}
	for _, rk := range ts.ShuffleReads(l.Index) {
		st.Reads = append(st.Reads, stagetask.Read{ShuffleID: rk.ShuffleID, Reduce: rk.Reduce})
	}
	var files []*backend.File
	st.Statuses, files = c.statusRefs(st.Reads)
	enc, err := stagetask.Encode(&st)
	if err != nil {
		return Task{}, err
	}
	return Task{Function: enc.Function, Codec: enc.Codec, Input: enc.Input, files: files}, nil
}

// output decodes what task set ts's task returned: a Job's task's bytes
// are its value; a stage task's are its encoded output.
func (r *jobRun) output(ts *dagscheduler.TaskSet, data []byte) (stagetask.Output, error) {
	if r.plain != nil {
		return stagetask.Output{Value: data}, nil
	}
	return stagetask.DecodeOutput(ts.Job, data)
}

// taskSucceeded tells the DAG core about a task's success, whose output
// end carries.
func (c *driverCore) taskSucceeded(id scheduler.TaskID, a attempt, end *taskEnd, now time.Time) {
	out := &end.out
	t := a.job.dagSet.Task(a.index)
	host := ""
	if e := c.execs[a.executor]; e != nil {
		host = e.host
	}
	te := dagscheduler.TaskEnd{Task: t, Reason: dagscheduler.Succeeded, ExecutorID: a.executor, Host: host}
	if t.Kind == dagscheduler.MapTask {
		// the executor's shuffle says where its output is read from; the
		// executor id is the driver's, which its loss unregisters
		loc := out.Location
		loc.ExecutorID = a.executor
		if loc.Host == "" {
			loc.Host = host
		}
		c.noteShuffleService(loc.Address)
		te.MapStatus = &mapoutput.Status{ShuffleID: t.ShuffleID, MapIndex: t.Partition, TaskID: uint64(id),
			Location: loc, Sizes: out.Sizes}
		if f := a.job.run.job.OnMapOutput; f != nil && len(out.Value) > 0 {
			f(t.ShuffleID, t.Partition, out.Value)
		}
	}
	for _, cp := range out.Cached {
		// cached partitions prefer this executor until it is lost
		c.dag.CacheAdded(dagscheduler.NodeID(cp.Node), cp.Partition, scheduler.Location{ExecutorID: a.executor, Host: host})
	}
	res := &Result{Attempt: a.attempt, ExecutorID: a.executor, Output: out.Value, Metrics: metricsOf(&end.u.Metrics)}
	c.applyDAG(c.dag.TaskEnded(te, now), now, res)
}

// taskFetchFailed tells the DAG core about a task's fetch failure.
func (c *driverCore) taskFetchFailed(a attempt, ff *mapoutput.FetchFailure, msg string, now time.Time) {
	t := a.job.dagSet.Task(a.index)
	c.applyDAG(c.dag.TaskEnded(dagscheduler.TaskEnd{Task: t, Reason: dagscheduler.FetchFailed, ExecutorID: a.executor,
		FetchFailure: ff, Message: msg}, now), now, nil)
}

// endRunSet ends a stage: it forgets a run's task set that will launch
// nothing more.
func (c *driverCore) endRunSet(js *jobState, reason string, now time.Time) {
	if js.ended {
		return
	}
	js.ended = true
	delete(c.jobs, js.setID)
	c.stageEnded(js.stage, reason == "")
	if c.listening() {
		c.out.events = append(c.out.events, event.StageCompleted{Time: now, JobID: js.id, StageID: js.stage, Attempt: js.stageAttempt(), FailureReason: reason})
	}
}

// endRun completes or fails a job: the one end of every job. A failed
// job's error names the task set abort that failed it, if one did (its
// reason, stage, task and attempt), else the DAG core's reason.
func (c *driverCore) endRun(run *jobRun, reason string, failed bool, now time.Time) {
	um := run.umbrella
	if um.ended {
		return
	}
	um.ended = true
	delete(c.runs, um.id)
	if failed {
		je := &JobError{JobID: um.id, Job: um.job.Name, StageID: -1, Reason: reason, TaskIndex: -1, Cause: um.cause}
		if ab := run.aborted; ab != nil {
			je.StageID, je.Reason = run.abortedStage, ab.Reason
			if f := ab.LastFailure; f != nil {
				je.TaskIndex, je.Attempt = run.abortedIndex, run.attempt
				je.FailureKind, je.Message, je.Stack = f.Kind.String(), f.Message, f.Stack
			}
		}
		um.err = je
		um.results = nil
		c.log.WithField("job", um.id).Debugf("job %d (%s) failed: %s", um.id, um.job.Name, reason)
	} else {
		run.summary = fmt.Sprintf("job %d (%s) finished in %v: %s, %s", um.id, um.job.Name,
			now.Sub(run.submitted).Round(time.Millisecond), plural.N(run.stageRuns, "stage"), plural.N(run.tasks, "task"))
		c.log.WithField("job", um.id).Debug(run.summary)
	}
	c.out.done = append(c.out.done, um)
	if c.listening() {
		var jerr error
		if um.err != nil {
			jerr = um.err
		}
		c.out.events = append(c.out.events, event.JobEnd{Time: now, JobID: um.id, Err: jerr})
	}
}

// cancelRun ends a job because its context ended or the driver stops:
// the DAG core cancels its stages no other job needs, whose task sets the
// task core aborts (killing their attempts) for the same reason.
func (c *driverCore) cancelRun(run *jobRun, cause error, now time.Time) {
	um := run.umbrella
	if um.ended {
		return
	}
	um.cause = cause
	reason := fmt.Sprintf("job cancelled: %v", cause)
	c.applyDAG(c.dag.CancelJob(um.id, reason, now), now, nil)
	c.endRun(run, reason, true, now)
	c.changed = true
}

func newStageStatus(js *jobState, now time.Time) *progress.StageStatus {
	return &progress.StageStatus{StageID: js.stage, Name: js.job.Name, NumTasks: len(js.job.Tasks), Submitted: now}
}

// ReleaseShuffle forgets a shuffle's map outputs once no running job needs
// them (the dataset layer releases the shuffles of a run when it ends):
// the tracker drops them and a later job over the same lineage recomputes
// it. It reports whether the shuffle was released. The executors then
// delete the shuffle's files (Batch.ShuffleReleases).
func (d *Driver) ReleaseShuffle(shuffleID int) bool {
	released := false
	d.query(func(core *driverCore, _ time.Time) {
		released = core.dag.ReleaseShuffle(shuffleID)
		delete(core.snapshots, shuffleID)
		if released && core.statusFiles != nil {
			core.statusFiles.release(shuffleID)
		}
		if released && !core.stopped {
			// the executors delete the outputs' files
			core.out.ShuffleReleases = append(core.out.ShuffleReleases, backend.ShuffleRelease{ShuffleID: shuffleID})
		}
	})
	return released
}

// ReleaseShuffleFiles tells every executor to delete the files of map
// outputs the driver no longer tracks (see backend.ShuffleRelease). It is
// best effort: it returns when the driver loop has handed the release to
// the backend, not when executors deleted anything, and an executor that
// is gone took its files with it. After Stop it does nothing (the
// executors deleted everything when they exited).
func (d *Driver) ReleaseShuffleFiles(r backend.ShuffleRelease) {
	d.query(func(core *driverCore, _ time.Time) {
		if !core.stopped {
			core.out.ShuffleReleases = append(core.out.ShuffleReleases, r)
		}
	})
}

// ForgetCached drops the DAG core's locations of cached partitions of
// nodes whose id starts with prefix: the dataset layer calls it when a run
// ends (its node ids carry the run's prefix).
func (d *Driver) ForgetCached(prefix string) {
	d.query(func(core *driverCore, _ time.Time) { core.dag.ForgetCache(dagscheduler.NodeID(prefix)) })
}

// NewShuffleID returns a shuffle id that no job of this driver used or
// uses: one above every shuffle id submitted so far and every id it
// returned before. Callers building StageJobs from their own graphs
// (the dataset layer) name their shuffles with it.
func (d *Driver) NewShuffleID() int {
	id := 0
	d.query(func(core *driverCore, _ time.Time) {
		id = core.nextShuffle
		core.nextShuffle++
	})
	return id
}

// ExplainStage says where a stage is in the DAG core: which parent stages
// it waits on, which partitions are missing and why (never computed, being
// computed, or lost with an executor or a fetch failure), and its failed
// attempts.
func (d *Driver) ExplainStage(stageID int) dagscheduler.StageExplanation {
	var ex dagscheduler.StageExplanation
	d.query(func(core *driverCore, _ time.Time) { ex = core.explainStage(stageID) })
	return ex
}

// allInOrder reports whether partitions are 0..n-1 in order, n > 0.
func allInOrder(partitions []int, n int) bool {
	if n == 0 || len(partitions) != n {
		return false
	}
	for i, p := range partitions {
		if p != i {
			return false
		}
	}
	return true
}
