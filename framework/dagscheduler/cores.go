package dagscheduler

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// Cores is the DAG core and the task core wired together as the driver
// loop wires them: the DAG core's task sets go to the task core, the task
// core's completions come back to the DAG core. It is pure as both cores
// are, and the driver loop and the simulation test share it.
type Cores struct {
	DAG   *Scheduler
	Tasks *scheduler.TaskScheduler

	sets     map[string]*setInfo
	launched map[scheduler.TaskID]Launch
	reports  map[scheduler.TaskID]Report
	out      []Effect
	now      time.Time
}

type setInfo struct {
	ts      *TaskSet
	running int
	ended   bool // finished, aborted or a zombie after a fetch failure
}

// Effect is one output of Cores, in order: a DAG event or a task event
// (exactly one is set). The driver applies them in order: KillTask events
// go to backends; ResultAccepted says which result to keep; Job* end jobs.
type Effect struct {
	DAG  Event
	Task scheduler.Event
}

func (e Effect) String() string {
	if e.DAG != nil {
		return fmt.Sprintf("dag %T%+v", e.DAG, e.DAG)
	}
	return fmt.Sprintf("task %T%+v", e.Task, e.Task)
}

// Launch is a task attempt to start: where (from the task core) and what
// (the DAG core's Task).
type Launch struct {
	scheduler.Launch
	Task Task
}

// Report is what a task's final status update carries for the DAG core:
// a map task's status on success, or the fetch failure it hit.
type Report struct {
	MapStatus    *mapoutput.Status
	FetchFailure *mapoutput.FetchFailure
}

// NewCores builds both cores; rng is the task core's (nil keeps offer order).
func NewCores(dag Config, tasks scheduler.Config, rng *rand.Rand) (*Cores, error) {
	d, err := New(dag)
	if err != nil {
		return nil, err
	}
	t, err := scheduler.New(tasks, rng)
	if err != nil {
		return nil, err
	}
	return &Cores{DAG: d, Tasks: t, sets: map[string]*setInfo{}, launched: map[scheduler.TaskID]Launch{},
		reports: map[scheduler.TaskID]Report{}}, nil
}

func (c *Cores) begin(now time.Time) { c.now, c.out = now, nil }

func (c *Cores) end() []Effect {
	out := c.out
	c.out = nil
	return out
}

// SubmitJob submits a job to the DAG core.
func (c *Cores) SubmitJob(spec JobSpec, now time.Time) (int64, []Effect, error) {
	c.begin(now)
	id, ev, err := c.DAG.SubmitJob(spec, now)
	if err != nil {
		return 0, nil, err
	}
	c.applyDAG(ev)
	return id, c.end(), nil
}

// ResourceOffers places pending tasks on the offered slots.
func (c *Cores) ResourceOffers(offers []scheduler.WorkerOffer, now time.Time) []Launch {
	ls := c.Tasks.ResourceOffers(offers, now)
	out := make([]Launch, len(ls))
	for i, l := range ls {
		si := c.sets[l.TaskSetID]
		out[i] = Launch{Launch: l, Task: si.ts.Task(l.Index)}
		si.running++
		c.launched[l.TaskID] = out[i]
	}
	return out
}

// Launched returns a running attempt's launch.
func (c *Cores) Launched(id scheduler.TaskID) (Launch, bool) {
	l, ok := c.launched[id]
	return l, ok
}

// StatusUpdate applies an attempt's status update with what its executor
// reported for the DAG core. A failed update with a FetchFailure is a
// fetch failure whatever its failure kind says.
func (c *Cores) StatusUpdate(id scheduler.TaskID, u scheduler.Update, r Report, now time.Time) []Effect {
	c.begin(now)
	if r.FetchFailure != nil && u.State == scheduler.Failed {
		u.Failure = &scheduler.Failure{Kind: scheduler.FetchFailed, Message: r.FetchFailure.Error()}
	}
	c.reports[id] = r
	c.applyTasks(c.Tasks.StatusUpdate(id, u, now))
	delete(c.reports, id)
	return c.end()
}

// ExecutorLost tells both cores; hostLost when the host's shuffle files
// are gone too.
func (c *Cores) ExecutorLost(executorID, host string, hostLost bool, f scheduler.Failure, now time.Time) []Effect {
	c.begin(now)
	c.applyTasks(c.Tasks.ExecutorLost(executorID, f, now))
	c.applyDAG(c.DAG.ExecutorLost(executorID, host, hostLost, now))
	return c.end()
}

// Tick runs both cores' timers.
func (c *Cores) Tick(now time.Time) []Effect {
	c.begin(now)
	c.applyTasks(c.Tasks.Tick(now))
	c.applyDAG(c.DAG.Tick(now))
	return c.end()
}

// CancelJob cancels a job.
func (c *Cores) CancelJob(jobID int64, reason string, now time.Time) []Effect {
	c.begin(now)
	c.applyDAG(c.DAG.CancelJob(jobID, reason, now))
	return c.end()
}

func (c *Cores) applyDAG(evs []Event) {
	for _, e := range evs {
		c.out = append(c.out, Effect{DAG: e})
		switch e := e.(type) {
		case SubmitTaskSet:
			c.sets[e.TaskSet.ID] = &setInfo{ts: e.TaskSet}
			if err := c.Tasks.Submit(e.TaskSet.SchedulerTaskSet(), c.now); err != nil {
				// the DAG core never makes two live attempts of a stage; if
				// it did, fail the stage loudly rather than lose the set
				delete(c.sets, e.TaskSet.ID)
				c.applyDAG(c.DAG.TaskSetFailed(e.TaskSet.StageID, e.TaskSet.Attempt, "dagscheduler: task core refused the task set: "+err.Error(), c.now))
			}
		case CancelTaskSet:
			c.applyTasks(c.Tasks.KillTaskSet(e.TaskSetID, e.Reason))
		}
	}
}

func (c *Cores) applyTasks(evs []scheduler.Event) {
	for _, e := range evs {
		c.out = append(c.out, Effect{Task: e})
		switch e := e.(type) {
		case scheduler.TaskSucceeded:
			l := c.endLaunch(e.TaskID)
			r := c.reports[e.TaskID]
			c.applyDAG(c.DAG.TaskEnded(TaskEnd{Task: l.Task, Reason: Succeeded, ExecutorID: l.ExecutorID, Host: l.Host, MapStatus: r.MapStatus}, c.now))
		case scheduler.TaskFailed:
			l := c.endLaunch(e.TaskID)
			if e.Failure.Kind == scheduler.FetchFailed {
				c.markEnded(e.TaskSetID)
				r := c.reports[e.TaskID]
				c.applyDAG(c.DAG.TaskEnded(TaskEnd{Task: l.Task, Reason: FetchFailed, ExecutorID: l.ExecutorID, Host: l.Host,
					FetchFailure: r.FetchFailure, Message: e.Failure.Message}, c.now))
			}
		case scheduler.TaskKilled:
			c.endLaunch(e.TaskID)
		case scheduler.TaskSetFinished:
			c.markEnded(e.TaskSetID)
		case scheduler.TaskSetAborted:
			if si := c.sets[e.TaskSetID]; si != nil {
				c.markEnded(e.TaskSetID)
				c.applyDAG(c.DAG.TaskSetFailed(si.ts.StageID, si.ts.Attempt, e.Reason, c.now))
			}
		}
	}
}

func (c *Cores) endLaunch(id scheduler.TaskID) Launch {
	l := c.launched[id]
	delete(c.launched, id)
	if si := c.sets[l.TaskSetID]; si != nil {
		si.running--
		c.maybeForget(l.TaskSetID, si)
	}
	return l
}

func (c *Cores) markEnded(id string) {
	if si := c.sets[id]; si != nil {
		si.ended = true
		c.maybeForget(id, si)
	}
}

// maybeForget drops a set once it launches nothing more and no attempt of
// it runs.
func (c *Cores) maybeForget(id string, si *setInfo) {
	if si.ended && si.running <= 0 {
		delete(c.sets, id)
	}
}
