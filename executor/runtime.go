package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/executor/files"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrNoFreeSlot: the task needs more cpus than are free.
	ErrNoFreeSlot = errors.New("executor: no free slot")
	// ErrDuplicateTask: a task with the same id is running.
	ErrDuplicateTask = errors.New("executor: duplicate task")
	// ErrClosed: the runtime is closed.
	ErrClosed = errors.New("executor: closed")
	// ErrResultNotFound: no stored result has the block id.
	ErrResultNotFound = errors.New("executor: result not found")
	// ErrTaskKilled is the context.Cause of a killed task's context.
	ErrTaskKilled = errors.New("executor: task killed")
)

// Reporter receives status updates. It is called from task goroutines,
// concurrently, and must be cheap (hand the update to a queue); it may call
// back into the Runtime. Updates of one task arrive in order.
type Reporter func(*flintpb.StatusUpdate)

// Runtime runs tasks. It is safe for concurrent use.
type Runtime struct {
	cfg    Config
	report Reporter
	ids    *updateIDs
	files  *files.Store // the job's added files (Config.FilesDir)

	mu      sync.Mutex
	free    int
	tasks   map[uint64]*runningTask
	results map[string][]byte
	idle    []*worker     // parked workers, at most Config.Cores
	active  int           // worker goroutines not yet returned
	closed  bool          // Close was called
	drained chan struct{} // closed once closed && active == 0
}

// worker is a parked task goroutine waiting for its next task. Workers are
// reused so that the stack a task grew (gob decoding is deep) is not grown
// again from scratch by every task: a fresh goroutine per task spent a
// third of the runtime's CPU in morestack/copystack.
type worker struct {
	next chan *runningTask // buffered 1; nil received means exit
}

// runningTask is a launched task until its terminal update is built.
type runningTask struct {
	td       *flintpb.TaskDescription
	cpus     int
	launched int64 // unix nanos
	ctx      context.Context
	cancel   context.CancelCauseFunc
	killed   bool   // guarded by Runtime.mu
	reason   string // kill reason, guarded by Runtime.mu
}

// New returns a Runtime reporting through report. It validates cfg; all
// problems are joined in the error.
func New(cfg Config, report Reporter) (*Runtime, error) {
	cfg, err := cfg.withDefaults()
	if report == nil {
		err = errors.Join(err, errors.New("executor: nil Reporter"))
	}
	if err != nil {
		return nil, err
	}
	return &Runtime{
		cfg:     cfg,
		report:  report,
		ids:     newUpdateIDs(),
		files:   files.New(files.Config{Dir: cfg.FilesDir, Logger: cfg.Logger}),
		free:    cfg.Cores,
		tasks:   make(map[uint64]*runningTask),
		results: make(map[string][]byte),
		drained: make(chan struct{}),
	}, nil
}

// Launch starts td on a worker goroutine of its own (a parked one when one
// is idle, else a new one). It fails with ErrNoFreeSlot when
// td needs more cpus than are free (td.Cpus, or Config.TaskCPUs when 0),
// ErrDuplicateTask when a task with td.TaskId is running, and ErrClosed
// after Close. On error nothing is reported.
func (r *Runtime) Launch(td *flintpb.TaskDescription) error {
	if td == nil {
		return errors.New("executor: Launch of a nil TaskDescription")
	}
	cpus := int(td.Cpus)
	if cpus == 0 {
		cpus = r.cfg.TaskCPUs
	}
	if cpus < 0 {
		return fmt.Errorf("executor: task %d: negative cpus %d", td.TaskId, td.Cpus)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return fmt.Errorf("%w: cannot launch task %d", ErrClosed, td.TaskId)
	case r.tasks[td.TaskId] != nil:
		return fmt.Errorf("%w: task %d is already running", ErrDuplicateTask, td.TaskId)
	case cpus > r.free:
		return fmt.Errorf("%w: task %d needs %d cpus, %d of %d free", ErrNoFreeSlot, td.TaskId, cpus, r.free, r.cfg.Cores)
	}
	base := r.cfg.BaseContext()
	if r.cfg.Job != nil {
		base = jobconf.NewContext(base, r.cfg.Job)
	}
	ctx, cancel := context.WithCancelCause(base)
	t := &runningTask{td: td, cpus: cpus, launched: r.cfg.Now().UnixNano(), ctx: ctx, cancel: cancel}
	r.free -= cpus
	r.tasks[td.TaskId] = t
	if n := len(r.idle); n > 0 {
		w := r.idle[n-1]
		r.idle[n-1] = nil
		r.idle = r.idle[:n-1]
		w.next <- t // buffered and empty: an idle worker is parked on it
		return nil
	}
	r.active++
	go r.work(t)
	return nil
}

// work is a worker goroutine: it runs t, then parks in r.idle for the next
// task until Close, or exits when Config.Cores workers are already parked.
// A task function calling runtime.Goexit ends the worker (after its terminal
// update, see run).
func (r *Runtime) work(t *runningTask) {
	defer r.goroutineDone()
	var w *worker
	for {
		r.run(t)
		if w == nil {
			w = &worker{next: make(chan *runningTask, 1)}
		}
		r.mu.Lock()
		if r.closed || len(r.idle) >= r.cfg.Cores {
			r.mu.Unlock()
			return
		}
		r.idle = append(r.idle, w)
		r.mu.Unlock()
		if t = <-w.next; t == nil {
			return
		}
	}
}

// Kill cancels the context of the running task taskID; the task is
// reported TASK_KILLED with reason once its function returns. It reports
// whether such a task was running (true means the terminal update will be
// TASK_KILLED). The first reason wins.
func (r *Runtime) Kill(taskID uint64, reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tasks[taskID]
	if t == nil {
		return false
	}
	r.killLocked(t, reason)
	return true
}

func (r *Runtime) killLocked(t *runningTask, reason string) {
	if t.killed {
		return
	}
	t.killed, t.reason = true, reason
	t.cancel(fmt.Errorf("%w: %s", ErrTaskKilled, reason))
}

// FetchResult returns the stored result blockID. The returned slice must
// not be modified.
func (r *Runtime) FetchResult(blockID string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, ok := r.results[blockID]
	if !ok {
		return nil, fmt.Errorf("%w: %q on executor %s", ErrResultNotFound, blockID, r.cfg.ExecutorID)
	}
	return data, nil
}

// ReleaseResult drops the stored result blockID, if any.
func (r *Runtime) ReleaseResult(blockID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.results, blockID)
}

// FreeCores returns the cores no running task occupies.
func (r *Runtime) FreeCores() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.free
}

// Running returns the ids of the tasks that have not yet been reported
// terminal, sorted.
func (r *Runtime) Running() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]uint64, 0, len(r.tasks))
	for id := range r.tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Close stops the runtime: later launches fail with ErrClosed, running
// tasks are killed (each still gets its TASK_KILLED update), stored results
// are dropped, parked workers are told to exit, and Close waits for every
// worker goroutine to return or ctx to end. It is idempotent; every call
// waits. Until Close, up to Config.Cores idle worker goroutines stay parked
// for reuse.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		for _, t := range r.tasks {
			r.killLocked(t, "executor closed")
		}
		clear(r.results)
		for i, w := range r.idle {
			w.next <- nil
			r.idle[i] = nil
		}
		r.idle = nil
		if r.active == 0 {
			close(r.drained)
		}
	}
	r.mu.Unlock()
	select {
	case <-r.drained:
		return r.files.Close()
	case <-ctx.Done():
		r.mu.Lock()
		n := r.active
		r.mu.Unlock()
		return fmt.Errorf("executor: close: %d task goroutines still running: %w", n, context.Cause(ctx))
	}
}

// goroutineDone accounts for a worker goroutine returning.
func (r *Runtime) goroutineDone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	if r.closed && r.active == 0 {
		close(r.drained)
	}
}
