package driver

import (
	"fmt"
	"github.com/flint-mesos/flint/internal/plural"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// driverCore is the driver's state machine, as etcd raft's RawNode is
// raft's: the scheduling core (framework/scheduler), the job table, the
// executor and slot registry and the stage tracker. It is not safe for
// concurrent use, reads no clock and starts nothing: the driver loop
// (driver) owns it, feeds it inputs with the current time and applies the
// steps it returns. A second pure core (the DAG scheduler) sits beside
// sched in the same way: its inputs are more input types, its outputs more
// fields of step.
type driverCore struct {
	sched     *scheduler.TaskScheduler
	dag       *dagscheduler.Scheduler // every job goes through it (dag.go)
	log       logrus.FieldLogger
	listening func() bool // whether listener events are wanted
	taskCPUs  int

	jobs map[string]*jobState // stage attempts' task sets, by task set id
	runs map[int64]*jobRun    // jobs, by job id (stages.go)
	// shuffleStages maps a shuffle to the map stage writing it: the UI's
	// stage DAG (ui_events.go).
	shuffleStages map[int]int
	running       map[scheduler.TaskID]attempt
	execs         map[string]*execSlot
	order         []*execSlot // execs sorted by id: the order offers are made in
	taken         map[scheduler.TaskID]slotUse
	stages        map[int]*progress.StageStatus
	ended         []int // ended stages still in stages, oldest first

	nextShuffle int // above every shuffle id seen (Context.NewShuffleID)
	stopped     bool
	dirty       bool // a task may be placeable now: run an offer round
	changed     bool // state changed: recompute the demand
	demand      backend.Demand
	sentOnce    bool // demand was reported at least once
	offers      []scheduler.WorkerOffer
	out         step
	// files are the files added so far (Context.AddFile), in order; a
	// stage's task set takes the list as it is when the stage is
	// submitted, and its tasks' descriptions carry it.
	files []*backend.File
	// statusFiles publishes map statuses for reducers' executors when the
	// backend serves files (nil otherwise)
	statusFiles *statusFiles
	// snapshots are the shuffles' last map-status snapshots, shared by
	// the executors asking in process and the files published
	snapshots snapshotCache

	// Dynamic allocation (allocation.go): nil when disabled.
	alloc        *allocation.Manager
	allocService bool // a shuffle service serves released executors' outputs
	allocSent    bool // a decision went to the backend

	// services are the shuffle services map outputs named (services.go).
	services map[backend.ShuffleService]bool

	// lastLaunch is the highest task id launched; afters wait for every
	// attempt up to an id to end (afterattempts.go).
	lastLaunch scheduler.TaskID
	afters     []afterWaiter
}

// execSlot is an executor the backend reported up, with its task cores
// and those taken by attempts launched there and not yet seen ending.
type execSlot struct {
	id, host    string
	cores, busy int
	tasks       int       // attempts launched there, not yet seen ending
	idleSince   time.Time // when tasks last became 0 (or it registered)
	release     string    // why dynamic allocation released it ("" while kept): no task goes there
}

// slotUse is the cores an attempt takes until its terminal update.
type slotUse struct {
	exec *execSlot
	cpus int
}

// jobState is a job in flight (its run's umbrella, which RunJob and
// RunStages wait on), or one stage attempt's task set of it; it lives until
// the job ends or the task set finishes or aborts.
type jobState struct {
	id      int64
	stage   int
	setID   string
	job     *Job
	results []Result
	done    chan struct{} // closed by the loop after the job's end events
	err     *JobError
	ended   bool
	// lastIndex and lastAttempt identify the most recent failed attempt.
	lastIndex, lastAttempt int
	// cause is why the job was cancelled (context end, Stop, backend abort).
	cause error
	// aborted is the task core's abort of the job's task set, kept for the
	// job's error when the DAG core fails the job.
	aborted *scheduler.TaskSetAborted
	dagSet  *dagscheduler.TaskSet // the DAG core's task set of the job's stage
	// run is the job this is a task set of (or the umbrella of)
	run *jobRun
	// files are the added files when the stage was submitted
	files []*backend.File
}

// attempt is a launched task attempt the driver still waits on (held by
// value in driverCore.running: no allocation per launch).
type attempt struct {
	job      *jobState
	index    int
	attempt  int
	executor string
}

// step is everything one step of the core produced: the backend's batch,
// then listener events, jobs whose waiters to wake, and result fetches to
// start — applied by the loop in that order.
type step struct {
	backend.Batch
	events  []event.Event
	done    []*jobState
	fetches []fetch
	afters  []func() // AfterAttemptsEnd callbacks whose attempts all ended
}

// fetch is an indirect result to fetch from its executor.
type fetch struct {
	u   *backend.StatusUpdate
	ind *backend.IndirectResult
}

func newDriverCore(sched *scheduler.TaskScheduler, log logrus.FieldLogger, listening func() bool) *driverCore {
	dag, err := dagscheduler.New(dagscheduler.Config{})
	if err != nil {
		panic(fmt.Sprintf("framework: the DAG core's defaults are invalid: %v", err))
	}
	return &driverCore{
		sched: sched, dag: dag, log: log, listening: listening, taskCPUs: sched.Config().TaskCPUs,
		jobs:      map[string]*jobState{},
		runs:      map[int64]*jobRun{},
		running:   map[scheduler.TaskID]attempt{},
		execs:     map[string]*execSlot{},
		taken:     map[scheduler.TaskID]slotUse{},
		stages:    map[int]*progress.StageStatus{},
		snapshots: snapshotCache{},
	}
}

// ready ends a step: it places pending tasks on free cores when something
// may have made that possible (the launches therefore come after every
// kill and release of the step), works out the demand and returns the
// step's output.
func (c *driverCore) ready(now time.Time) step {
	if c.dirty && !c.stopped {
		c.offerRound(now)
	}
	if c.out.Tick && c.alloc != nil && !c.stopped {
		c.stepAllocation(now)
	}
	if c.changed {
		c.updateDemand()
	}
	c.releaseAfters()
	out := c.out
	c.out = step{}
	out.Now = now
	return out
}

// offerRound offers every executor's free cores to the scheduling core and
// turns its launches into task descriptions.
func (c *driverCore) offerRound(now time.Time) {
	c.dirty = false
	if !c.sched.WantsOffers() {
		return
	}
	offers := c.offers[:0]
	for _, e := range c.order {
		if free := e.cores - e.busy; free >= c.taskCPUs && e.release == "" {
			offers = append(offers, scheduler.WorkerOffer{ExecutorID: e.id, Host: e.host, Cores: free})
		}
	}
	c.offers = offers
	if len(offers) == 0 {
		return
	}
	launches := c.sched.ResourceOffers(offers, now)
	if len(launches) == 0 {
		return
	}
	c.changed = true
	// One backing array for the round's descriptions instead of one
	// allocation per task.
	tds := make([]backend.TaskDescription, len(launches))
	listening := c.listening()
	for i := range launches {
		c.launched(&launches[i], &tds[i], now, listening)
		c.out.Launches = append(c.out.Launches, &tds[i])
	}
}

// launched records a core launch, takes its cores and fills its task
// description td.
func (c *driverCore) launched(l *scheduler.Launch, td *backend.TaskDescription, now time.Time, listening bool) {
	js := c.jobs[l.TaskSetID]
	if js == nil {
		panic(fmt.Sprintf("framework: scheduler launched task %d of unknown task set %s", l.TaskID, l.TaskSetID))
	}
	cpus := l.CPUs
	if cpus <= 0 {
		cpus = c.taskCPUs
	}
	if e := c.execs[l.ExecutorID]; e != nil {
		e.busy += cpus
		e.tasks++
		c.taken[l.TaskID] = slotUse{exec: e, cpus: cpus}
	}
	t, err := c.taskInput(js, l)
	if err != nil {
		c.log.Errorf("stage task %d of %s: %v", l.Index, l.TaskSetID, err)
	}
	c.running[l.TaskID] = attempt{job: js, index: l.Index, attempt: l.Attempt, executor: l.ExecutorID}
	c.lastLaunch = max(c.lastLaunch, l.TaskID)
	if st := c.stages[js.stage]; st != nil {
		st.Active++
	}
	if listening {
		c.out.events = append(c.out.events, event.TaskStart{Time: now, StageID: js.stage, TaskID: uint64(l.TaskID), Index: l.Index,
			Attempt: l.Attempt, ExecutorID: l.ExecutorID, Host: l.Host, Locality: l.Locality.String(), Speculative: l.Speculative, StageAttempt: js.stageAttempt()})
	}
	*td = backend.TaskDescription{
		TaskID: uint64(l.TaskID), Attempt: l.Attempt, Index: l.Index, TaskSetID: l.TaskSetID,
		JobID: js.id, StageID: js.stage, Function: t.Function, Codec: t.Codec, Input: t.Input,
		CPUs: cpus, ExecutorID: l.ExecutorID, Speculative: l.Speculative, Files: js.files,
	}
	if len(t.files) > 0 {
		td.Files = append(js.files[:len(js.files):len(js.files)], t.files...)
	}
}

// freeSlot gives back the cores of an attempt that ended on its executor.
func (c *driverCore) freeSlot(id scheduler.TaskID, now time.Time) {
	if use, ok := c.taken[id]; ok {
		delete(c.taken, id)
		use.exec.busy -= use.cpus
		if use.exec.tasks--; use.exec.tasks == 0 {
			use.exec.idleSince = now
		}
		c.dirty = true
	}
}

// updateDemand reports what tasks wait for when it changed.
func (c *driverCore) updateDemand() {
	c.changed = false
	wants := !c.stopped && c.sched.WantsOffers()
	var prefs map[string]int
	if wants {
		prefs = c.sched.PendingHostPreferences()
	}
	if c.sentOnce && wants == c.demand.Waiting && maps.Equal(prefs, c.demand.HostPrefs) {
		return
	}
	c.sentOnce = true
	c.demand = backend.Demand{Waiting: wants, HostPrefs: prefs}
	d := c.demand
	c.out.Demand = &d
}

// submit registers a job of independent tasks: a one-stage job (plainRun)
// on the one path every job takes.
func (c *driverCore) submit(job *Job, now time.Time) (*jobState, error) {
	return c.submitRun(plainRun(job), now)
}

func taskSet(js *jobState) scheduler.TaskSet {
	specs := make([]scheduler.TaskSpec, len(js.job.Tasks))
	for i := range js.job.Tasks {
		specs[i].Preferred = js.job.Tasks[i].Preferred
	}
	return scheduler.TaskSet{ID: js.setID, JobID: js.id, StageID: js.stage, Pool: js.job.Pool, Tasks: specs}
}

// executorUp adds an executor to the registry or resizes it.
func (c *driverCore) executorUp(id, host string, cores int, now time.Time) {
	e := c.execs[id]
	if e == nil {
		e = &execSlot{id: id, idleSince: now}
		c.execs[id] = e
		i, _ := slices.BinarySearchFunc(c.order, id, func(x *execSlot, id string) int { return strings.Compare(x.id, id) })
		c.order = slices.Insert(c.order, i, e)
		c.log.WithField("executor", id).Infof("executor %s added on %s with %s", id, host, plural.N(cores, "core"))
		c.out.events = append(c.out.events, event.ExecutorAdded{Time: now, ExecutorID: id, Host: host, Cores: cores})
	}
	e.host, e.cores = host, cores
	c.dirty, c.changed = true, true
}

// executorLost resubmits the tasks of a lost executor and forgets it.
func (c *driverCore) executorLost(id, reason string, causedByApp bool, now time.Time) {
	evs := c.sched.ExecutorLost(id, scheduler.Failure{Kind: scheduler.ExecutorLost, ExitCausedByApp: causedByApp,
		Message: fmt.Sprintf("executor %s lost: %s", id, reason)}, now)
	c.process(evs, nil, now)
	host := ""
	if e := c.execs[id]; e != nil {
		host = e.host
	}
	// its map outputs are gone with it (no external shuffle service)
	c.applyDAG(c.dag.ExecutorLost(id, host, false, now), now, nil)
	released := ""
	if e := c.execs[id]; e != nil {
		released = e.release
	}
	if released != "" {
		reason = released
	}
	c.out.events = append(c.out.events, event.ExecutorRemoved{Time: now, ExecutorID: id, Reason: reason})
	if e := c.execs[id]; e != nil {
		delete(c.execs, id)
		c.order = slices.DeleteFunc(c.order, func(x *execSlot) bool { return x == e })
		for tid, use := range c.taken {
			if use.exec == e {
				delete(c.taken, tid)
			}
		}
	}
	c.dirty, c.changed = true, true
	if released != "" {
		c.log.WithField("executor", id).Infof("executor %s removed: %s", id, reason)
		return
	}
	c.log.WithField("executor", id).Warnf("executor %s lost: %s", id, firstLine(reason)) // the job error carries the rest
}

// tick advances the scheduling core's timers: speculation, exclusion
// expiry, unschedulable task sets and locality waits (which the next offer
// round serves).
func (c *driverCore) tick(now time.Time) {
	c.out.Tick = true
	if c.stopped {
		return
	}
	c.process(c.sched.Tick(now), nil, now)
	c.applyDAG(c.dag.Tick(now), now, nil)
	c.dirty, c.changed = true, true
}

// cancel ends a job because its context ended or the driver stops.
func (c *driverCore) cancel(js *jobState, cause error, now time.Time) {
	c.cancelRun(js.run, cause, now)
}

// abort fails every active job with reason (the backend cannot run them).
func (c *driverCore) abort(reason string, now time.Time) {
	cause := fmt.Errorf("%w: %s", ErrBackendAborted, reason)
	for _, id := range slices.Sorted(maps.Keys(c.runs)) {
		if run := c.runs[id]; run != nil {
			c.cancelRun(run, cause, now)
		}
	}
	c.log.Errorf("backend aborted the active jobs: %s", reason)
}

// stop aborts every job; inputs after it change nothing.
func (c *driverCore) stop(now time.Time) {
	if c.stopped {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(c.runs)) {
		if run := c.runs[id]; run != nil {
			c.cancelRun(run, ErrStopped, now)
		}
	}
	c.stopped = true
	c.changed = true
}
