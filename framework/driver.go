package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// driver is the thin shell around the pure scheduling core: it serialises
// access to it with a mutex, keeps job payloads and results, turns core
// launches into task descriptions and core events into job completions,
// backend kills and listener events. Side effects happen after the lock is
// released.
type driver struct {
	mu        sync.Mutex
	core      *scheduler.TaskScheduler
	now       func() time.Time
	backend   Backend
	bus       *event.Bus
	log       logrus.FieldLogger
	jobs      map[string]*jobState
	running   map[scheduler.TaskID]attempt
	stages    map[int]*progress.StageStatus
	ended     []int // ended stages still in stages, oldest first
	nextJob   int64
	nextStage int
	stopped   bool
	fetches   sync.WaitGroup
	fetchCtx  context.Context
	stopFetch context.CancelFunc
}

// jobState is a job in flight; it lives until its task set finishes or aborts.
type jobState struct {
	id      int64
	stage   int
	setID   string
	job     *Job
	results []Result
	done    chan struct{}
	err     *JobError
	ended   bool
	// lastIndex and lastAttempt identify the most recent failed attempt.
	lastIndex, lastAttempt int
	// cause is why the job was cancelled (context end, Stop, backend abort).
	cause error
}

// attempt is a launched task attempt the driver still waits on (held by
// value in driver.running: no allocation per launch).
type attempt struct {
	job      *jobState
	index    int
	attempt  int
	executor string
}

// outbox collects the side effects of one locked section.
type outbox struct {
	events  []event.Event
	kills   []scheduler.KillTask
	revive  bool
	release [][2]string
}

func newDriver(core *scheduler.TaskScheduler, now func() time.Time, bus *event.Bus, log logrus.FieldLogger) *driver {
	ctx, cancel := context.WithCancel(context.Background())
	return &driver{
		core: core, now: now, bus: bus, log: log,
		jobs:     map[string]*jobState{},
		running:  map[scheduler.TaskID]attempt{},
		stages:   map[int]*progress.StageStatus{},
		fetchCtx: ctx, stopFetch: cancel,
	}
}

var _ Driver = (*driver)(nil)

// listening reports whether events are wanted: with no listener on the bus
// the hot paths skip building them (each costs an allocation or two).
func (d *driver) listening() bool { return d.bus.Listening() }

// flush performs side effects collected under the lock.
func (d *driver) flush(o *outbox) {
	for _, k := range o.kills {
		d.backend.KillTask(uint64(k.TaskID), k.ExecutorID, k.Reason)
	}
	for _, r := range o.release {
		d.backend.ReleaseResult(r[0], r[1])
	}
	for _, e := range o.events {
		d.bus.Post(e)
	}
	if o.revive {
		d.backend.ReviveOffers()
	}
}

// submit registers a job and hands its task set to the core.
func (d *driver) submit(job *Job) (*jobState, error) {
	var o outbox
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil, ErrStopped
	}
	js := &jobState{id: d.nextJob, stage: d.nextStage, job: job, done: make(chan struct{}), results: make([]Result, len(job.Tasks)), lastIndex: -1}
	js.setID = fmt.Sprintf("stage-%d.0", js.stage)
	d.nextJob++
	d.nextStage++
	err := d.core.Submit(taskSet(js), d.now())
	if err == nil {
		d.jobs[js.setID] = js
		d.stageStarted(js, &o)
		o.revive = true
	}
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("framework: submit job %q: %w", job.Name, err)
	}
	d.flush(&o)
	return js, nil
}

func taskSet(js *jobState) scheduler.TaskSet {
	specs := make([]scheduler.TaskSpec, len(js.job.Tasks))
	for i := range js.job.Tasks {
		specs[i].Preferred = js.job.Tasks[i].Preferred
	}
	return scheduler.TaskSet{ID: js.setID, JobID: js.id, StageID: js.stage, Pool: js.job.Pool, Tasks: specs}
}

func (d *driver) stageStarted(js *jobState, o *outbox) {
	now := d.now()
	n := len(js.job.Tasks)
	d.stages[js.stage] = &progress.StageStatus{StageID: js.stage, Name: js.job.Name, NumTasks: n, Submitted: now}
	if d.listening() {
		o.events = append(o.events,
			event.JobStart{Time: now, JobID: js.id, Name: js.job.Name, StageIDs: []int{js.stage}, NumTasks: n},
			event.StageSubmitted{Time: now, JobID: js.id, StageID: js.stage, Name: js.job.Name, NumTasks: n})
	}
	d.log.WithFields(logrus.Fields{"job": js.id, "stage": js.stage, "tasks": n}).Infof("job %d (%s) submitted", js.id, js.job.Name)
}

// ResourceOffers implements Driver.
func (d *driver) ResourceOffers(offers []scheduler.WorkerOffer) []*flintpb.TaskDescription {
	var o outbox
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil
	}
	now := d.now()
	launches := d.core.ResourceOffers(offers, now)
	if len(launches) == 0 {
		d.mu.Unlock()
		d.flush(&o)
		return nil
	}
	// One backing array for the round's descriptions instead of one
	// allocation per task.
	tds := make([]flintpb.TaskDescription, len(launches))
	descs := make([]*flintpb.TaskDescription, len(launches))
	listening := d.listening()
	for i := range launches {
		d.launched(&launches[i], &tds[i], now, listening, &o)
		descs[i] = &tds[i]
	}
	d.mu.Unlock()
	d.flush(&o)
	return descs
}

// launched records a core launch and fills its task description td.
func (d *driver) launched(l *scheduler.Launch, td *flintpb.TaskDescription, now time.Time, listening bool, o *outbox) {
	js := d.jobs[l.TaskSetID]
	if js == nil {
		panic(fmt.Sprintf("framework: scheduler launched task %d of unknown task set %s", l.TaskID, l.TaskSetID))
	}
	t := &js.job.Tasks[l.Index]
	d.running[l.TaskID] = attempt{job: js, index: l.Index, attempt: l.Attempt, executor: l.ExecutorID}
	if st := d.stages[js.stage]; st != nil {
		st.Active++
	}
	if listening {
		o.events = append(o.events, event.TaskStart{Time: now, StageID: js.stage, TaskID: uint64(l.TaskID), Index: l.Index,
			Attempt: l.Attempt, ExecutorID: l.ExecutorID, Host: l.Host, Locality: l.Locality.String(), Speculative: l.Speculative})
	}
	*td = flintpb.TaskDescription{
		TaskId: uint64(l.TaskID), Attempt: int32(l.Attempt), Index: int32(l.Index), TaskSetId: l.TaskSetID,
		JobId: js.id, StageId: int32(js.stage), Function: t.Function, Codec: t.Codec, Input: t.Input,
		Cpus: int32(l.CPUs), ExecutorId: l.ExecutorID, Speculative: l.Speculative,
	}
}
