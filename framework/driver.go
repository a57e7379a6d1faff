package framework

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/mailbox"
)

// driver is the driver loop, as etcd raft's node is the loop around
// RawNode: one goroutine owns the driverCore. Backends and the Context
// queue inputs (Driver's methods, submit, cancel, queries) without
// blocking; the loop takes everything queued, steps the core with it at
// one instant, and applies the step's output in order — the backend's
// batch, then listener events, then wakes the jobs that ended and starts
// result fetches. Because one goroutine makes and applies every effect, a
// kill can never overtake the launch it cancels, and listeners see events
// in the order they happened.
type driver struct {
	// coreMu is held by the loop while it steps the core, and by queries
	// that run after the loop ended.
	coreMu  sync.Mutex
	core    *driverCore
	now     func() time.Time
	backend backend.Backend
	bus     *event.Bus
	log     logrus.FieldLogger

	// inbox holds the inputs for the loop; closed when the loop ended (or
	// is stopped before it started): inputs are dropped then.
	inbox   *mailbox.Mailbox[input]
	mu      sync.Mutex
	started bool
	done    chan struct{} // closed when the loop ends

	fetches   sync.WaitGroup
	fetchCtx  context.Context
	stopFetch context.CancelFunc
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
		job  *Job
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

func (in *submitInput) apply(c *driverCore, now time.Time) { in.js, in.err = c.submit(in.job, now) }
func (in *submitInput) reply()                             { close(in.done) }
func (in cancelInput) apply(c *driverCore, now time.Time)  { c.cancel(in.js, in.cause, now) }
func (in statusInput) apply(c *driverCore, now time.Time)  { c.statusUpdate(in.u, now) }
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

func newDriver(core *scheduler.TaskScheduler, now func() time.Time, bus *event.Bus, log logrus.FieldLogger) *driver {
	ctx, cancel := context.WithCancel(context.Background())
	return &driver{
		core: newDriverCore(core, log, bus.Listening), now: now, bus: bus, log: log,
		inbox: mailbox.New[input](), done: make(chan struct{}),
		fetchCtx: ctx, stopFetch: cancel,
	}
}

var _ backend.Driver = (*driver)(nil)

// enqueue queues an input for the loop; false once the loop ended.
func (d *driver) enqueue(in input) bool { return d.inbox.Put(in) }

// start runs the loop, ticking the core's timers every tickEvery.
func (d *driver) start(tickEvery time.Duration) {
	d.mu.Lock()
	d.started = true
	d.mu.Unlock()
	go d.run(tickEvery)
}

func (d *driver) run(tickEvery time.Duration) {
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
func (d *driver) step(ins []input) {
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
func (d *driver) apply(st *step) {
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
}

// startFetch fetches a kept result off the loop, then hands it back as an
// input.
func (d *driver) startFetch(f fetch) {
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
func (d *driver) query(fn func(c *driverCore, now time.Time)) {
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

// submit registers a job with the loop.
func (d *driver) submit(job *Job) (*jobState, error) {
	in := &submitInput{job: job, done: make(chan struct{})}
	if !d.enqueue(in) {
		return nil, ErrStopped
	}
	<-in.done
	return in.js, in.err
}

// cancel kills a job's task set because its context ended.
func (d *driver) cancel(js *jobState, cause error) { d.enqueue(cancelInput{js: js, cause: cause}) }

// stop aborts every job, ends the loop, then waits for result fetches in
// flight.
func (d *driver) stop() {
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
}

func (d *driver) activeStages() []progress.StageStatus {
	var out []progress.StageStatus
	d.query(func(c *driverCore, _ time.Time) { out = c.activeStages() })
	return out
}

func (d *driver) explain(stageID, index int) (ex scheduler.Explanation, busy bool, slots int, err error) {
	d.query(func(c *driverCore, now time.Time) {
		ex, err = c.explain(stageID, index, now)
		busy, slots = c.slotsBusy()
	})
	return ex, busy, slots, err
}

// ExecutorUp implements Driver.
func (d *driver) ExecutorUp(executorID, host string, cores int) {
	d.enqueue(executorUpInput{id: executorID, host: host, cores: cores})
}

// ExecutorLost implements Driver.
func (d *driver) ExecutorLost(executorID, reason string, causedByApp bool) {
	d.enqueue(executorLostInput{id: executorID, reason: reason, causedByApp: causedByApp})
}

// StatusUpdate implements Driver.
func (d *driver) StatusUpdate(u *backend.StatusUpdate) {
	if u.State == scheduler.Running {
		return // changes nothing: not worth a wake-up of the loop
	}
	d.enqueue(statusInput{u: u})
}

// Abort implements Driver: every active job fails with reason.
func (d *driver) Abort(reason string) { d.enqueue(abortInput{reason: reason}) }
