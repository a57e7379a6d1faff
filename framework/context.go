package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/drivermetrics"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/task"
)

// Config is Flint's configuration (flint.* keys); see docs/configuration.md.
type Config = config.Config

// NewConfig returns a configuration holding only the defaults.
func NewConfig() *Config { return config.New() }

// Context is a connection to a cluster (or the local process) that runs jobs:
// Spark's SparkContext. Create one per program with NewContext and Stop it.
// Its methods are safe for concurrent use; jobs submitted concurrently share
// the cluster according to flint.scheduler.mode.
type Context struct {
	cfg *Config
	// writes orders the application's writes into each output directory (the dataset
	// layer's commit protocol, through internal/driverseam)
	writes   storage.Writes
	master   backend.Master
	log      logrus.FieldLogger
	registry *task.Registry
	backend  backend.Backend
	// env is the application's runtime state in this process (the
	// dataset layer's, through internal/driverseam): the local backend's
	// in-process executor's, else a driver-only one. Stop closes it.
	env      *stagetask.Env
	driver   *driver.Driver
	bus      *event.Bus
	seed     uint64
	stopOnce sync.Once
	stopErr  error
	op       opView
	// connMetrics are the backend's Mesos connection counters, on /metrics.
	connMetrics *drivermetrics.Conn
	filesMu     sync.Mutex // guards files
	files       addedFiles
}

// Option configures NewContext.
type Option func(*options)

type options struct {
	log       logrus.FieldLogger
	now       func() time.Time
	registry  *task.Registry
	listeners []event.Listener
}

// WithLogger sets the logger (default: logrus' standard logger).
func WithLogger(l logrus.FieldLogger) Option { return func(o *options) { o.log = l } }

// WithClock injects the clock the scheduler sees (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRegistry uses r instead of the process-wide task registry.
func WithRegistry(r *task.Registry) Option { return func(o *options) { o.registry = r } }

// WithListener adds a listener before the first event is posted.
func WithListener(l event.Listener) Option {
	return func(o *options) { o.listeners = append(o.listeners, l) }
}

// NewContext validates cfg, builds the scheduling core and starts the backend
// for flint.master. ctx bounds only the start (connecting and subscribing to
// Mesos, starting an embedded cluster): the context runs until Stop.
func NewContext(ctx context.Context, cfg *Config, opts ...Option) (*Context, error) {
	o := options{log: logrus.StandardLogger(), now: time.Now, registry: task.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	master, err := backend.ParseMaster(cfg.String("flint.master"))
	if err != nil {
		return nil, err
	}
	sc, seed, err := schedulerConfig(cfg, master)
	if err != nil {
		return nil, err
	}
	core, err := scheduler.New(sc, newRand(seed))
	if err != nil {
		return nil, fmt.Errorf("framework: %w", err)
	}
	c := &Context{cfg: cfg, master: master, log: o.log, registry: o.registry, seed: seed, bus: event.NewBus(0),
		connMetrics: drivermetrics.NewConn()}
	for _, l := range o.listeners {
		c.bus.AddListener(l)
	}
	alloc, err := allocationConfig(cfg, master, o.log)
	if err != nil {
		return nil, err
	}
	c.driver, err = driver.New(driver.Config{Sched: core, DAG: dagConfig(cfg), Now: o.now, Bus: c.bus, Log: o.log,
		Pool: cfg.String("flint.scheduler.pool"), Allocation: alloc})
	if err != nil {
		c.bus.Close()
		return nil, err
	}
	if err := c.startOpView(o.now); err != nil {
		c.bus.Close()
		_ = c.stopOpView()
		return nil, err
	}
	if err := c.startBackend(ctx); err != nil {
		c.driver.Stop()
		c.bus.Close()
		_ = c.stopOpView()
		return nil, err
	}
	c.op.backendUp.Store(true) // the UI may read c.backend from now on
	c.driver.Start(tickInterval(sc))
	if err := c.addConfiguredFiles(); err != nil {
		_ = c.Stop(ctx)
		return nil, err
	}
	o.log.WithFields(logrus.Fields{"master": master.Raw, "seed": seed}).Debugf("flint context started (scheduler seed %d)", seed)
	return c, nil
}

// addConfiguredFiles adds flint.files (Spark's spark.files, what
// `flint submit --files` sets) as AddFile does, before any job.
func (c *Context) addConfiguredFiles() error {
	for f := range strings.SplitSeq(c.cfg.String("flint.files"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if err := c.AddFile(f); err != nil {
			return fmt.Errorf("framework: flint.files: %w", err)
		}
	}
	return nil
}

func (c *Context) startBackend(ctx context.Context) error {
	b, err := backend.New(backend.Params{Master: c.master, Config: c.cfg, Logger: c.log, Registry: c.registry, Metrics: c.connMetrics})
	if err != nil {
		return err
	}
	c.backend = b
	c.env = stagetask.NewEnv(nil)
	if o, ok := b.(stagetask.EnvOwner); ok {
		c.env = o.TaskEnv()
	}
	c.driver.SetBackend(b)
	if err := b.Start(ctx, c.driver); err != nil {
		return fmt.Errorf("framework: start %s backend: %w", c.master.Kind, err)
	}
	return nil
}

// tickInterval is how often the driver loop's clock ticks: the core's
// timers (speculation checks, locality waits, exclusion expiry) and the
// backends' (offer holds, no-executor timeouts) run from it, often enough
// for speculation and never busier than every 10ms.
func tickInterval(sc scheduler.Config) time.Duration {
	iv := 100 * time.Millisecond
	if sc.Speculation.Enabled && sc.Speculation.Interval < iv {
		iv = sc.Speculation.Interval
	}
	return max(iv, 10*time.Millisecond)
}

// RunJob runs job and returns its results in task order. It fails with a
// *JobError when a task fails flint.task.maxFailures times (or fails
// deterministically), and returns as soon as ctx is done, killing the job's
// running tasks.
func (c *Context) RunJob(ctx context.Context, job *Job) ([]Result, error) {
	if err := c.validate(job); err != nil {
		return nil, err
	}
	if len(job.Tasks) == 0 {
		return []Result{}, nil
	}
	return c.driver.RunJob(ctx, job)
}

// validate rejects jobs that could never run: unknown functions and codecs
// are found here, before any task is launched.
func (c *Context) validate(job *Job) error {
	if job == nil {
		return fmt.Errorf("%w: nil job", ErrInvalidJob)
	}
	var errs []error
	seen := map[string]bool{}
	for i, t := range job.Tasks {
		if seen[t.Function] {
			continue
		}
		seen[t.Function] = true
		if _, err := c.registry.Lookup(t.Function); err != nil {
			errs = append(errs, fmt.Errorf("task %d: %w", i, err))
		}
	}
	errs = append(errs, c.checkSizes(job)...)
	if len(errs) > 0 {
		return fmt.Errorf("%w %q: %w", ErrInvalidJob, job.Name, errors.Join(errs...))
	}
	return nil
}

// MaxTaskInput is the largest task input the backend can deliver to an
// executor and what imposes it (backend.TaskSizeLimiter); ok is false
// when it sets no limit.
func (c *Context) MaxTaskInput() (limit int, why string, ok bool) {
	lim, ok := backend.As[backend.TaskSizeLimiter](c.backend)
	if !ok {
		return 0, "", false
	}
	limit, why = lim.MaxTaskInput()
	return limit, why, limit > 0
}

// checkSizes reports tasks whose input the backend cannot deliver (the
// first few, then how many more).
func (c *Context) checkSizes(job *Job) []error {
	lim, ok := backend.As[backend.TaskSizeLimiter](c.backend)
	if !ok {
		return nil
	}
	limit, why := lim.MaxTaskInput()
	const shown = 3
	var errs []error
	more := 0
	for i := range job.Tasks {
		n := len(job.Tasks[i].Input)
		if limit <= 0 || n <= limit {
			continue
		}
		if len(errs) == shown {
			more++
			continue
		}
		errs = append(errs, fmt.Errorf("task %d: %w: %d bytes, more than the %d bytes %s", i, ErrTaskTooLarge, n, limit, why))
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("%d more tasks: %w", more, ErrTaskTooLarge))
	}
	return errs
}

// Progress is a console progress display (progress.Bar) the context tells
// when a job ends, so output printed after RunJob never lands on the bar.
type Progress = driver.Progress

// SetProgress attaches the console progress display; call it before
// running jobs.
func (c *Context) SetProgress(p Progress) { c.driver.SetProgress(p) }

// AddListener delivers events posted from now on to l.
func (c *Context) AddListener(l event.Listener) { c.bus.AddListener(l) }

// ActiveStages reports the progress of running stages and, once each, of
// the stages that ended since the last call (Ended set, final counts;
// Succeeded when they completed): the progress bar's source.
func (c *Context) ActiveStages() []progress.StageStatus { return c.driver.ActiveStages() }

// Config returns the configuration the context was built from.
func (c *Context) Config() *Config { return c.cfg }

// Master returns the parsed master string.
func (c *Context) Master() backend.Master { return c.master }

// Logger returns the context's logger.
func (c *Context) Logger() logrus.FieldLogger { return c.log }

// Seed is the scheduler's random seed (log it to replay a run).
func (c *Context) Seed() uint64 { return c.seed }

// DefaultParallelism is the backend's number of task slots.
func (c *Context) DefaultParallelism() int { return c.backend.DefaultParallelism() }

// Stop fails running jobs with ErrStopped, stops the backend (killing its
// tasks) and waits for every goroutine the context started. ctx bounds the
// backend's shutdown (tearing down Mesos executors and subscriptions), which
// gives up after stopTimeout in any case. It is idempotent: later calls
// return the first call's error.
func (c *Context) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		c.driver.Stop()
		ctx, cancel := context.WithTimeout(ctx, stopTimeout)
		defer cancel()
		c.stopErr = c.backend.Stop(ctx)
		c.driver.Drain() // the last sweeps of outputs whose attempts outlived their jobs
		c.stopErr = errors.Join(c.stopErr, c.closeEnv(), c.removeAddedFiles())
		c.postAppEnd()
		c.bus.Close()
		c.stopErr = errors.Join(c.stopErr, c.stopOpView())
	})
	return c.stopErr
}

// closeEnv releases the application's runtime state in this process
// (cached partitions, broadcasts, rebuilt graphs), after the backend's
// tasks have stopped.
func (c *Context) closeEnv() error {
	if c.env == nil {
		return nil
	}
	return c.env.Close()
}

// stopTimeout caps Stop's wait for the backend when ctx has no earlier
// deadline.
const stopTimeout = 30 * time.Second

// TaskConfig is the job's configuration as a task sees it, read from the task's context
// (Spark's SparkConf on an executor): every flint.* setting the driver had, the driver's own
// credentials excepted (executor/jobconf), typed as on the driver (String, Int, Size, Duration,
// Prefixed). It is nil for a context that is not a task's.
func TaskConfig(ctx context.Context) *Config {
	c, _ := jobconf.FromContext(ctx)
	return c
}
