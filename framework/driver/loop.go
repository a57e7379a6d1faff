package driver

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/mailbox"
)

// Driver is the driver loop, as etcd raft's node is the loop around
// RawNode: one goroutine owns the driverCore. Backends and the user's
// Context queue inputs (backend.Driver's methods, RunJob, RunStages,
// cancellations, queries) without blocking; the loop takes everything
// queued, steps the core with it at one instant, and applies the step's
// output in order — the backend's batch, then listener events, then wakes
// the jobs that ended and starts result fetches. Because one goroutine
// makes and applies every effect, a kill can never overtake the launch it
// cancels, and listeners see events in the order they happened.
//
// Start runs the loop on a goroutine of its own with a ticker; without
// Start, Step steps it by hand at the time the injected clock says (a
// simulation drives it so, on virtual time).
type Driver struct {
	// coreMu is held by the loop while it steps the core, and by queries
	// that run after the loop ended.
	coreMu  sync.Mutex
	core    *driverCore
	now     func() time.Time
	backend backend.Backend
	bus     *event.Bus
	log     logrus.FieldLogger
	pool    string   // the default scheduler pool
	prog    Progress // told when a job ends (SetProgress)

	// inbox holds the inputs for the loop; closed when the loop ended (or
	// is stopped before it started): inputs are dropped then.
	inbox   *mailbox.Mailbox[input]
	mu      sync.Mutex
	started bool
	done    chan struct{} // closed when the loop ends

	fetches   sync.WaitGroup
	fetchCtx  context.Context
	stopFetch context.CancelFunc

	// AfterAttemptsEnd's callbacks (afterattempts.go): those running, and
	// those queued after the loop ended, run by Drain.
	afterRuns sync.WaitGroup
	afterMu   sync.Mutex
	leftover  []func()
	drained   bool
}

// input is one thing that happened, for the driver loop to step the core
// with. A future core's inputs (the DAG scheduler's) are more input types.
type input interface {
	apply(c *driverCore, now time.Time)
}

// replier is an input whose sender waits until its step was applied.
type replier interface{ reply() }

type (
	submitInput struct {
		run  func() *jobRun
		js   *jobState
		err  error
		done chan struct{}
	}
	cancelInput struct {
		js    *jobState
		cause error
	}
	statusInput  struct{ u *backend.StatusUpdate }
	fetchedInput struct {
		u    *backend.StatusUpdate
		ind  *backend.IndirectResult
		data []byte
		err  error
	}
	executorUpInput struct {
		id, host string
		cores    int
	}
	executorLostInput struct {
		id, reason  string
		causedByApp bool
	}
	abortInput struct{ reason string }
	filesInput struct{ files []*backend.File }
	tickInput  struct{}
	stopInput  struct{}
	queryInput struct {
		fn   func(c *driverCore, now time.Time)
		done chan struct{}
	}
)

func (in *submitInput) apply(c *driverCore, now time.Time) {
	in.js, in.err = c.submitRun(in.run(), now)
}
func (in *submitInput) reply()                            { close(in.done) }
func (in cancelInput) apply(c *driverCore, now time.Time) { c.cancel(in.js, in.cause, now) }
func (in statusInput) apply(c *driverCore, now time.Time) { c.statusUpdate(in.u, now) }
func (in fetchedInput) apply(c *driverCore, now time.Time) {
	c.fetched(in.u, in.ind, in.data, in.err, now)
}
func (in executorUpInput) apply(c *driverCore, now time.Time) {
	c.executorUp(in.id, in.host, in.cores, now)
}
func (in executorLostInput) apply(c *driverCore, now time.Time) {
	c.executorLost(in.id, in.reason, in.causedByApp, now)
}
func (in abortInput) apply(c *driverCore, now time.Time)  { c.abort(in.reason, now) }
func (in filesInput) apply(c *driverCore, _ time.Time)    { c.files = in.files }
func (tickInput) apply(c *driverCore, now time.Time)      { c.tick(now) }
func (stopInput) apply(c *driverCore, now time.Time)      { c.stop(now) }
func (in *queryInput) apply(c *driverCore, now time.Time) { in.fn(c, now) }
func (in *queryInput) reply()                             { close(in.done) }

// Config is what New builds a driver from.
type Config struct {
	Sched *scheduler.TaskScheduler // the task core
	DAG   dagscheduler.Config      // the DAG core's configuration
	Now   func() time.Time         // the clock every step is taken at
	Bus   *event.Bus               // where listener events go
	Log   logrus.FieldLogger
	Pool  string // the scheduler pool of jobs that name none
	// Allocation enables dynamic allocation with these settings (nil:
	// off): the backend must apply backend.Allocation (coarse Mesos).
	Allocation *allocation.Config
}

// New builds a driver loop around a new driver core; it runs nothing until
// SetBackend and Start (or Step).
func New(cfg Config) (*Driver, error) {
	d := newDriver(cfg.Sched, cfg.Now, cfg.Bus, cfg.Log)
	if err := d.core.setDAGConfig(cfg.DAG); err != nil {
		return nil, err
	}
	d.pool = cfg.Pool
	if cfg.Allocation != nil {
		if err := d.core.setAllocation(*cfg.Allocation); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func newDriver(core *scheduler.TaskScheduler, now func() time.Time, bus *event.Bus, log logrus.FieldLogger) *Driver {
	ctx, cancel := context.WithCancel(context.Background())
	return &Driver{
		core: newDriverCore(core, log, bus.Listening), now: now, bus: bus, log: log,
		inbox: mailbox.New[input](), done: make(chan struct{}),
		fetchCtx: ctx, stopFetch: cancel,
	}
}

// SetBackend sets the backend the loop hands its batches to, before the
// backend starts (it calls the driver back from then on).
func (d *Driver) SetBackend(b backend.Backend) {
	d.backend = b
	if b != nil {
		d.core.statusFiles = newStatusFiles(b)
	}
}

// Progress is a console progress display told when a job ends, so output
// printed after RunJob never lands on the bar.
type Progress interface{ FinishAll() }

// SetProgress attaches the console progress display (before jobs run).
func (d *Driver) SetProgress(p Progress) { d.prog = p }

// Start runs the loop on its own goroutine, ticking the core's timers
// every tickEvery.
func (d *Driver) Start(tickEvery time.Duration) { d.start(tickEvery) }

// Stop aborts every job, ends the loop, then waits for result fetches in
// flight.
func (d *Driver) Stop() { d.stop() }

// Step is one turn of a loop that was not started: the inputs queued so
// far, plus a tick when tick is set, at the clock's time; it reports
// whether the core stopped. A simulation steps the driver so, on its own
// clock and goroutine. Inputs that wait for their step (RunJob's
// submission, queries) must then come from another goroutine.
func (d *Driver) Step(tick bool) (stopped bool) {
	ins := d.inbox.Take(nil)
	if tick {
		ins = append(ins, tickInput{})
	}
	d.step(ins)
	return d.core.stopped
}

// SetFiles sets the files tasks of stages submitted from now on fetch
// (the user's added files, in order).
func (d *Driver) SetFiles(files []*backend.File) { d.enqueue(filesInput{files: files}) }

// ActiveStages reports the progress of running stages and, once each, of
// the stages that ended since the last call: the progress bar's source.
func (d *Driver) ActiveStages() []progress.StageStatus { return d.activeStages() }

// Explain is the task core's reason for where task index of an active
// stage is, whether it only waits for a busy slot, and how many tasks the
// executors run at once.
func (d *Driver) Explain(stageID, index int) (ex scheduler.Explanation, busy bool, slots int, err error) {
	return d.explain(stageID, index)
}

// RunJob runs job (already validated) and returns its results in task
// order. It fails with a *JobError when the job is aborted, and returns
// as soon as ctx is done, killing the job's running tasks.
func (d *Driver) RunJob(ctx context.Context, job *Job) ([]Result, error) {
	if job.Pool == "" {
		j := *job // the caller's Job stays as it was
		j.Pool = d.pool
		job = &j
	}
	js, err := d.submit(job)
	if err != nil {
		return nil, err
	}
	if err := d.wait(ctx, js); err != nil {
		return nil, err
	}
	return js.results, nil
}

// wait waits for a job to end, cancelling it when ctx is done first, and
// tells the progress display.
func (d *Driver) wait(ctx context.Context, js *jobState) error {
	select {
	case <-js.done:
	case <-ctx.Done():
		d.cancel(js, context.Cause(ctx))
		<-js.done
	}
	if d.prog != nil {
		d.prog.FinishAll()
	}
	if js.err != nil {
		return js.err
	}
	return nil
}

var _ backend.Driver = (*Driver)(nil)

// enqueue queues an input for the loop; false once the loop ended.
func (d *Driver) enqueue(in input) bool { return d.inbox.Put(in) }

// start runs the loop, ticking the core's timers every tickEvery.
func (d *Driver) start(tickEvery time.Duration) {
	d.mu.Lock()
	d.started = true
	d.mu.Unlock()
	go d.run(tickEvery)
}

func (d *Driver) run(tickEvery time.Duration) {
	defer close(d.done)
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	var ins []input
	for {
		ticked := false
		select {
		case <-d.inbox.Wake():
		case <-t.C:
			ticked = true
		}
		ins = d.inbox.Take(ins)
		if ticked {
			ins = append(ins, tickInput{})
		}
		d.step(ins)
		if d.core.stopped {
			d.step(d.inbox.Close())
			return
		}
	}
}

// step steps the core with ins at one instant and applies the output.
func (d *Driver) step(ins []input) {
	if len(ins) == 0 {
		return
	}
	d.coreMu.Lock()
	now := d.now()
	for _, in := range ins {
		in.apply(d.core, now)
	}
	st := d.core.ready(now)
	d.coreMu.Unlock()
	d.apply(&st)
	for _, in := range ins {
		if r, ok := in.(replier); ok {
			r.reply()
		}
	}
}

// apply carries out a step's output in order.
func (d *Driver) apply(st *step) {
	d.grantFiles(st.Launches)
	if !st.Batch.Empty() {
		d.backend.Apply(st.Batch)
	}
	for _, e := range st.events {
		d.bus.Post(e)
	}
	for _, js := range st.done {
		close(js.done)
	}
	for _, f := range st.fetches {
		d.startFetch(f)
	}
	for _, fn := range st.afters {
		d.runAfter(fn)
	}
}

// startFetch fetches a kept result off the loop, then hands it back as an
// input.
func (d *Driver) startFetch(f fetch) {
	d.fetches.Add(1)
	go func() {
		defer d.fetches.Done()
		data, err := d.backend.FetchResult(d.fetchCtx, f.ind.ExecutorID, f.ind.BlockID)
		if err == nil {
			err = checkFetched(f.ind, data)
		}
		d.enqueue(fetchedInput{u: f.u, ind: f.ind, data: data, err: err})
	}()
}

// query runs fn on the core: in the loop, or directly once it ended.
func (d *Driver) query(fn func(c *driverCore, now time.Time)) {
	q := &queryInput{fn: fn, done: make(chan struct{})}
	d.mu.Lock()
	started := d.started
	d.mu.Unlock()
	if started && d.enqueue(q) {
		<-q.done
		return
	}
	d.coreMu.Lock()
	defer d.coreMu.Unlock()
	fn(d.core, d.now())
}

// submit registers a job of independent tasks with the loop.
func (d *Driver) submit(job *Job) (*jobState, error) {
	return d.submitRun(func() *jobRun { return plainRun(job) })
}

// submitRun registers the job run makes with the loop: every job's one
// way in.
func (d *Driver) submitRun(run func() *jobRun) (*jobState, error) {
	in := &submitInput{run: run, done: make(chan struct{})}
	if !d.enqueue(in) {
		return nil, ErrStopped
	}
	<-in.done
	return in.js, in.err
}

// cancel kills a job's task set because its context ended.
func (d *Driver) cancel(js *jobState, cause error) { d.enqueue(cancelInput{js: js, cause: cause}) }

// stop aborts every job, ends the loop, then waits for result fetches in
// flight.
func (d *Driver) stop() {
	d.mu.Lock()
	started := d.started
	if !started {
		d.inbox.Close()
	}
	d.mu.Unlock()
	if started && d.enqueue(stopInput{}) {
		<-d.done
	} else if started {
		<-d.done
	}
	d.stopFetch()
	d.fetches.Wait()
	d.query(func(c *driverCore, _ time.Time) {
		if c.statusFiles != nil {
			c.statusFiles.close()
		}
	})
}

func (d *Driver) activeStages() []progress.StageStatus {
	var out []progress.StageStatus
	d.query(func(c *driverCore, _ time.Time) { out = c.activeStages() })
	return out
}

func (d *Driver) explain(stageID, index int) (ex scheduler.Explanation, busy bool, slots int, err error) {
	d.query(func(c *driverCore, now time.Time) {
		ex, err = c.explain(stageID, index, now)
		busy, slots = c.slotsBusy()
	})
	return ex, busy, slots, err
}

// ExecutorUp implements Driver.
func (d *Driver) ExecutorUp(executorID, host string, cores int) {
	d.enqueue(executorUpInput{id: executorID, host: host, cores: cores})
}

// ExecutorLost implements Driver.
func (d *Driver) ExecutorLost(executorID, reason string, causedByApp bool) {
	d.enqueue(executorLostInput{id: executorID, reason: reason, causedByApp: causedByApp})
}

// StatusUpdate implements Driver.
func (d *Driver) StatusUpdate(u *backend.StatusUpdate) {
	if u.State == scheduler.Running {
		return // changes nothing: not worth a wake-up of the loop
	}
	d.enqueue(statusInput{u: u})
}

// Abort implements Driver: every active job fails with reason.
func (d *Driver) Abort(reason string) { d.enqueue(abortInput{reason: reason}) }

// grantFiles gives each launch listing served files its executor's files
// token (FileServer.FileToken), on the loop, before the batch goes out.
func (d *Driver) grantFiles(launches []*backend.TaskDescription) {
	fsrv, ok := backend.As[backend.FileServer](d.backend)
	if !ok {
		return
	}
	for _, td := range launches {
		if len(td.Files) == 0 {
			continue
		}
		tok, err := fsrv.FileToken(td.ExecutorID, td.Files)
		if err != nil {
			d.log.WithField("executor", td.ExecutorID).Warnf("no files credential for task %d: %v (its fetches will be refused)", td.TaskID, err)
			continue
		}
		td.FilesToken = tok
	}
}
