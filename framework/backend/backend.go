package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/task"
)

// Backend runs tasks somewhere: in-process (local), on long-lived Mesos
// executors (coarse) or as one Mesos task each (fine). It is Spark's
// SchedulerBackend turned around: it reports executors and their cores to
// the Driver, and the driver loop hands it ordered batches of effects
// (launches, kills, result releases) to carry out.
type Backend interface {
	// Start connects the backend; it must return promptly and keep running
	// until Stop. Calls it makes on d before returning are queued.
	Start(ctx context.Context, d Driver) error
	// Apply carries out one batch of the driver loop's effects. The loop
	// calls it on its own goroutine, one batch at a time, in the order the
	// batches were made; within a batch, kills and releases come before
	// launches (see Batch). Apply must not block: a backend whose effects
	// need I/O queues them and performs them in the same order, so that a
	// kill never overtakes the launch it cancels.
	Apply(b Batch)
	// FetchResult fetches a result an executor kept (an indirect result).
	FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error)
	// DefaultParallelism is the number of task slots the backend expects.
	DefaultParallelism() int
	// Stop releases every resource; tasks still running are killed.
	Stop(ctx context.Context) error
}

// Batch is one step's effects of the driver loop, like etcd raft's Ready:
// the backend applies it whole and in order (kills, then releases, then
// launches). A kill or release refers only to tasks launched by earlier
// batches: the loop places tasks last in every step.
type Batch struct {
	// Now is the loop's clock for the step.
	Now time.Time
	// Tick is set when the step was a clock tick: backends run their
	// timers (offer holds, no-executor timeouts) from it instead of
	// keeping clocks of their own.
	Tick bool
	// Kills asks executors to kill running attempts.
	Kills []Kill
	// Releases tells executors the driver no longer needs kept results.
	Releases []Release
	// ShuffleReleases tells every executor that the driver no longer
	// tracks these map outputs: they delete their files.
	ShuffleReleases []ShuffleRelease
	// Launches are the task attempts to start, each naming its executor
	// (whose cores the loop has already counted as taken).
	Launches []*TaskDescription
	// Demand is what the driver now waits for; nil when unchanged since
	// the previous batch.
	Demand *Demand
	// ShuffleServices are the agents' shuffle services serving the
	// application's map outputs, each once, in the batch after the first
	// output it serves: the backend heartbeats them while the application
	// runs and tells them it ended (flint.shuffle.service.enabled).
	ShuffleServices []ShuffleService
	// Allocation is dynamic allocation's decision (framework/allocation);
	// nil when there is none to apply (disabled, or unchanged).
	Allocation *Allocation
}

// Empty reports whether the batch carries nothing to do.
func (b *Batch) Empty() bool {
	return !b.Tick && len(b.Kills) == 0 && len(b.Releases) == 0 && len(b.ShuffleReleases) == 0 && len(b.Launches) == 0 && b.Demand == nil && b.Allocation == nil && len(b.ShuffleServices) == 0
}

// Allocation is what dynamic allocation asks of a backend that launches
// executors (coarse Mesos): keep Target executors, registered or
// launching — launch from offers up to it and decline offers while at it,
// never kill for it — and stop the executors in Release. The driver placed
// no task on a released executor since it decided to release it, and
// places none after: it is idle, and its loss is expected.
type Allocation struct {
	Target  int
	Release []ExecutorRelease
}

// ShuffleService is an agent's external shuffle service: its base URL
// (https://host:port, or http:// without TLS) and the pin of its
// certificate ("" for http).
type ShuffleService struct{ BaseURL, Pin string }

// ExecutorRelease names an idle executor to stop and why.
type ExecutorRelease struct{ ExecutorID, Reason string }

// Kill asks the executor running TaskID to kill it.
type Kill struct {
	TaskID     uint64
	ExecutorID string
	Reason     string
}

// Release frees a result block an executor kept for the driver.
type Release struct{ ExecutorID, BlockID string }

// ShuffleRelease names released map outputs on every executor: shuffle
// ShuffleID of the executors' own ids (Namespace ""), shuffle ShuffleID of
// namespace Namespace, or with All every shuffle of Namespace (the dataset
// layer writes each run's shuffles into a namespace of its own).
type ShuffleRelease struct {
	Namespace string
	ShuffleID int
	All       bool
}

// Demand is what tasks wait for: Mesos backends revive or suppress offers
// with Waiting and start executors where HostPrefs points (Spark's
// hostToLocalTaskCount: per host, how many pending tasks prefer it).
type Demand struct {
	Waiting   bool
	HostPrefs map[string]int
}

// TaskSizeLimiter is implemented by backends that cannot deliver a task
// input beyond some size (a message limit on the way to the executor). Jobs
// with a larger input fail validation with ErrTaskTooLarge before any task
// runs, instead of breaking executors' streams, as Spark checks serialized
// tasks against spark.rpc.message.maxSize.
type TaskSizeLimiter interface {
	// MaxTaskInput is the largest input in bytes, and what imposes it
	// (named in the error).
	MaxTaskInput() (limit int, why string)
}

// OfferExplainer is implemented by backends that place work on Mesos
// offers: the placement reasons for the offers they last saw that were not
// (fully) used, which Context.Explain reports beside the scheduling core's
// explanation.
type OfferExplainer interface {
	OfferFilters() []placement.Filtered
}

// Driver is the scheduler side a Backend talks to: every method queues an
// input for the driver loop and returns at once, so it is safe for
// concurrent use, also from within Apply. Inputs from one goroutine are
// handled in the order they were made.
type Driver interface {
	// ExecutorUp reports an executor that can run tasks, or a new size of
	// one already up: cores is its capacity for tasks. The loop places
	// tasks on the cores not taken by attempts it launched there whose
	// terminal update it has not seen yet.
	ExecutorUp(executorID, host string, cores int)
	// ExecutorLost reports an executor gone; its running tasks are
	// resubmitted. causedByApp counts the loss toward the tasks' failures.
	ExecutorLost(executorID, reason string, causedByApp bool)
	// StatusUpdate reports a task's state. Duplicates are ignored; a
	// terminal update frees the attempt's cores on its executor.
	StatusUpdate(u *StatusUpdate)
	// Abort fails every active job with reason: the backend cannot run
	// them (no offer fits after a timeout, the cluster removed the framework).
	Abort(reason string)
}

// Params is what a Factory gets.
type Params struct {
	Master   Master
	Config   *config.Config
	Logger   logrus.FieldLogger
	Registry *task.Registry
	// Metrics are the driver's Mesos connection counters
	// (framework/drivermetrics.Conn; nil: none), which a Mesos backend
	// hands its connection (framework/mesosconn.Metrics).
	Metrics ConnMetrics
}

// ConnMetrics counts what a Mesos connection sees (the method set of
// framework/mesosconn.Metrics).
type ConnMetrics interface {
	OffersReceived(n int)
	OffersDeclined(reason string, n int)
	Resubscribed()
}

// Factory builds a Backend for a master string.
type Factory func(p Params) (Backend, error)

// ErrNoBackend: no backend is linked in for the master string.
var ErrNoBackend = errors.New("framework: no backend for master")

// Backend names in the registry. A master string picks one: local masters
// "local", embedded "embedded", and Mesos masters "mesos-coarse" or
// "mesos-fine" by flint.mesos.coarse.
const (
	Local       = "local"
	Embedded    = "embedded"
	MesosCoarse = "mesos-coarse"
	MesosFine   = "mesos-fine"
)

var (
	backendsMu sync.RWMutex
	backends   = map[string]Factory{}
)

// Register makes a backend available under name. Backend packages
// call it from init; the flint package imports them all.
func Register(name string, f Factory) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[name] = f
}

// Name is the registry name serving master m under cfg.
func Name(m Master, cfg *config.Config) string {
	switch m.Kind {
	case MasterLocal:
		return Local
	case MasterEmbedded:
		return Embedded
	default:
		if cfg.Bool("flint.mesos.coarse") {
			return MesosCoarse
		}
		return MesosFine
	}
}

// New builds the backend registered for p.Master (the embedded
// backend uses it to build the Mesos backend that talks to its master).
func New(p Params) (Backend, error) {
	name := Name(p.Master, p.Config)
	backendsMu.RLock()
	f := backends[name]
	backendsMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q: the %s backend is not linked into this binary (import github.com/flint-mesos/flint to get every backend)", ErrNoBackend, p.Master.Raw, name)
	}
	b, err := f(p)
	if err != nil {
		return nil, fmt.Errorf("framework: start %s backend: %w", name, err)
	}
	return b, nil
}

// SandboxLocator is implemented by backends whose executors run in Mesos
// sandboxes: the UI shows their stdout and stderr, read through the
// agent's /files/read endpoint.
type SandboxLocator interface {
	// ExecutorSandbox returns the base URL of the agent serving executorID's
	// sandbox and the sandbox directory there.
	ExecutorSandbox(ctx context.Context, executorID string) (agentURL, dir string, err error)
}

// FileServer is implemented by backends whose executors fetch the files a
// job adds from the driver's file server (the Mesos backends). Without it
// (local mode) executors read local files directly.
type FileServer interface {
	// ServeFile publishes the local regular file at path and returns its
	// URL (with no credential in it), SHA-256 (hex) and size.
	ServeFile(path string) (url, sha256 string, size int64, err error)
	// FileToken returns the credential executorID presents to fetch the
	// served files among files (a short-lived grant that opens only the
	// files sent to it); "" when none is served.
	FileToken(executorID string, files []*File) (string, error)
}

// FileUnserver is a FileServer that can stop serving a file it published
// (Context.RemoveFile): requests for url are then refused (410 Gone).
type FileUnserver interface {
	UnserveFile(url string) bool
}

// Unwrapper is a backend that wraps another (deploy/embedded wraps the
// Mesos backend it starts). The optional interfaces above (TaskSizeLimiter,
// OfferExplainer, SandboxLocator, FileServer, FileUnserver) are looked up
// through it with As, as net/http's ResponseController looks through a
// ResponseWriter's Unwrap, so a wrapper forwards none of them by hand.
type Unwrapper interface {
	// Unwrap returns the wrapped backend; nil while there is none (before
	// the wrapper started it).
	Unwrap() Backend
}

// As returns b as a T — b itself, or the first backend found by unwrapping
// it (Unwrapper) that implements T — and whether there is one.
func As[T any](b Backend) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		u, ok := b.(Unwrapper)
		if !ok {
			break
		}
		b = u.Unwrap()
	}
	var zero T
	return zero, false
}
