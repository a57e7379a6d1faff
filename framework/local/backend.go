package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/gcfloor"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// ExecutorID and Host name the single in-process executor, as in Spark.
const (
	ExecutorID = "driver"
	Host       = "localhost"
)

func init() { backend.Register(backend.Local, New) }

// Backend runs tasks on an in-process executor runtime.
type Backend struct {
	threads  int
	taskCPUs int
	log      logrus.FieldLogger
	rt       *executor.Runtime
	shuffle  *shuffleenv.Env // the in-process executor's shuffle: files read directly, never served
	env      *stagetask.Env  // the Context's runtime state (over shuffle): its tasks' and its driver's dataset layer's
	d        backend.Driver
	slab     []flintpb.TaskDescription // descriptions not handed out yet (Apply's goroutine only)
	gcRoom   func()                    // releases the process's heap floor (gcfloor.ForMemory)
}

// descSlab is how many task descriptions one allocation holds: few, since
// a slab (with the inputs it points to) stays alive while any of its tasks
// runs.
const descSlab = 16

var (
	_ backend.Backend    = (*Backend)(nil)
	_ stagetask.EnvOwner = (*Backend)(nil)
)

// New builds the local backend for a local master.
func New(p backend.Params) (backend.Backend, error) {
	if p.Master.Kind != backend.MasterLocal {
		return nil, fmt.Errorf("local: master %q is not local", p.Master.Raw)
	}
	b := &Backend{threads: p.Master.Threads, taskCPUs: p.Config.Int("flint.task.cpus"), log: p.Logger}
	if b.taskCPUs > b.threads {
		return nil, fmt.Errorf("local: flint.task.cpus=%d exceeds the %d slots of %s: no task could ever run", b.taskCPUs, b.threads, p.Master.Raw)
	}
	set, err := shuffleenv.SettingsFromConfig(p.Config, "local", ExecutorID, Host, "")
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if b.shuffle, err = shuffleenv.Start(set, false, p.Logger); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	b.env = stagetask.NewEnv(b.shuffle)
	base := stagetask.NewContext(context.Background(), b.env)
	rt, err := executor.New(executor.Config{
		ExecutorID:          ExecutorID,
		Cores:               b.threads,
		TaskCPUs:            b.taskCPUs,
		MaxResultSize:       p.Config.Size("flint.driver.maxResultSize"),
		MaxDirectResultSize: p.Config.Size("flint.task.maxDirectResultSize"),
		Registry:            p.Registry,
		Logger:              p.Logger,
		BaseContext:         func() context.Context { return base },
		Job:                 p.Config,
	}, b.update)
	if err != nil {
		b.shuffle.Close()
		return nil, fmt.Errorf("local: %w", err)
	}
	b.rt = rt
	// The tasks run in this process: it is the executor, and holds an executor's heap floor
	// (the Mesos backends' executors hold the same, gcfloor.ForMemory). A task reading data
	// allocates every byte it reads; without the floor the collector ran every few MiB of
	// input (docs/benchmarks.md, issue 25).
	b.gcRoom = gcfloor.Hold(gcfloor.ForMemory(p.Config.Size("flint.executor.memory")))
	return b, nil
}

// Start implements backend.Backend: the runtime's slots are one
// executor's cores.
func (b *Backend) Start(_ context.Context, d backend.Driver) error {
	b.d = d
	// reducers load map statuses from the driver in this process
	if src, ok := d.(interface{ StatusSource() stagetask.StatusSource }); ok {
		b.env.SetStatusSource(src.StatusSource())
	}
	d.ExecutorUp(ExecutorID, Host, b.threads)
	return nil
}

// update hands the runtime's status updates to the driver loop (which
// queues them without blocking the task's goroutine).
func (b *Backend) update(u *flintpb.StatusUpdate) {
	if u.State == flintpb.TaskState_TASK_RUNNING {
		return // the driver loop ignores RUNNING: no conversion for it
	}
	b.d.StatusUpdate(flintconv.StatusUpdate(u))
}

// Apply implements backend.Backend: kills, releases and launches go to
// the runtime in the batch's order (none of them blocks).
func (b *Backend) Apply(batch backend.Batch) {
	for _, k := range batch.Kills {
		b.rt.Kill(k.TaskID, k.Reason)
	}
	for _, r := range batch.Releases {
		b.rt.ReleaseResult(r.BlockID)
	}
	for _, r := range batch.ShuffleReleases {
		// the in-process executor's shuffle, which stage tasks (and so
		// dataset runs) write into
		if err := b.env.ReleaseShuffle(r.Namespace, r.ShuffleID, r.All); err != nil {
			b.log.WithError(err).Warn("local: releasing shuffle outputs")
		}
	}
	if len(batch.Launches) == 0 {
		return
	}
	// The runtime speaks the executors' wire messages and keeps each
	// description while its task runs: they are carved from a slab (Apply
	// runs on the loop's goroutine only), not allocated one by one.
	for _, d := range batch.Launches {
		if len(b.slab) == 0 {
			b.slab = make([]flintpb.TaskDescription, descSlab)
		}
		td := &b.slab[0]
		b.slab = b.slab[1:]
		flintconv.TaskDescription(d, td)
		if err := b.rt.Launch(td); err != nil {
			b.log.WithField("task", td.TaskId).Errorf("local: launch task %d: %v", td.TaskId, err)
			b.d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskId, Attempt: int(td.Attempt), ExecutorID: ExecutorID,
				State: scheduler.Failed, Failure: &scheduler.Failure{Kind: scheduler.LaunchFailed, Message: err.Error()}})
		}
	}
}

// FetchResult implements backend.Backend.
func (b *Backend) FetchResult(_ context.Context, _ string, blockID string) ([]byte, error) {
	return b.rt.FetchResult(blockID)
}

// DefaultParallelism implements backend.Backend.
func (b *Backend) DefaultParallelism() int { return b.threads }

// Stop implements backend.Backend: it kills running tasks and waits
// for them, then releases the Context's runtime state (cached
// partitions, broadcasts, rebuilt graphs) and the shuffle's files.
func (b *Backend) Stop(ctx context.Context) error {
	defer b.gcRoom()
	if err := b.rt.Close(ctx); err != nil {
		b.env.Close()
		b.shuffle.Close()
		return fmt.Errorf("local: stop executor runtime: %w", err)
	}
	if err := errors.Join(b.env.Close(), b.shuffle.Close()); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	return nil
}

// TaskEnv implements stagetask.EnvOwner: the in-process executor's
// environment is the Context's (its driver's dataset layer drops a run's
// cached partitions there), created with the backend and closed by Stop
// once the tasks have returned.
func (b *Backend) TaskEnv() *stagetask.Env { return b.env }
