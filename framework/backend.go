package framework

import (
	"context"
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Backend runs tasks somewhere: in-process (local), on long-lived Mesos
// executors (coarse) or as one Mesos task each (fine). It is Spark's
// SchedulerBackend: it offers resources to the Driver, launches the task
// descriptions the Driver returns, and reports status updates back.
type Backend interface {
	// Start connects the backend; it must return promptly and keep running
	// until Stop.
	Start(ctx context.Context, d Driver) error
	// ReviveOffers asks for offers soon: new tasks are pending. It must not block.
	ReviveOffers()
	// KillTask asks the executor running taskID to kill it. It must not block.
	KillTask(taskID uint64, executorID, reason string)
	// FetchResult fetches a result an executor kept (an indirect result).
	FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error)
	// ReleaseResult tells the executor the driver no longer needs blockID.
	ReleaseResult(executorID, blockID string)
	// DefaultParallelism is the number of task slots the backend expects.
	DefaultParallelism() int
	// Stop releases every resource; tasks still running are killed.
	Stop(ctx context.Context) error
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

// Driver is the scheduler side a Backend talks to. All methods are safe for
// concurrent use and return quickly.
type Driver interface {
	// ResourceOffers returns the tasks to launch on the offered executors;
	// each description names its executor.
	ResourceOffers(offers []scheduler.WorkerOffer) []*flintpb.TaskDescription
	// StatusUpdate reports a task's state. Duplicates are ignored.
	StatusUpdate(u *flintpb.StatusUpdate)
	// ExecutorAdded reports a new executor.
	ExecutorAdded(executorID, host string, cores int)
	// ExecutorLost reports an executor gone; its running tasks are
	// resubmitted. causedByApp counts the loss toward the tasks' failures.
	ExecutorLost(executorID, reason string, causedByApp bool)
	// WantsOffers reports whether tasks are waiting for resources.
	WantsOffers() bool
	// PendingHostPreferences reports, per host, how many pending tasks
	// prefer it (Spark's hostToLocalTaskCount), so that backends starting
	// executors can start them where tasks want to run. The map is the
	// caller's; the counts are kept incrementally by the scheduling core, so
	// a call costs O(hosts), not O(tasks).
	PendingHostPreferences() map[string]int
	// Abort fails every active job with reason: the backend cannot run
	// them (no offer fits after a timeout, the cluster removed the framework).
	Abort(reason string)
}

// BackendParams is what a BackendFactory gets.
type BackendParams struct {
	Master   Master
	Config   *Config
	Logger   logrus.FieldLogger
	Registry *task.Registry
}

// BackendFactory builds a Backend for a master string.
type BackendFactory func(p BackendParams) (Backend, error)

// Backend names in the registry. A master string picks one: local masters
// "local", embedded "embedded", and Mesos masters "mesos-coarse" or
// "mesos-fine" by flint.mesos.coarse.
const (
	BackendLocal       = "local"
	BackendEmbedded    = "embedded"
	BackendMesosCoarse = "mesos-coarse"
	BackendMesosFine   = "mesos-fine"
)

var (
	backendsMu sync.RWMutex
	backends   = map[string]BackendFactory{}
)

// RegisterBackend makes a backend available under name. Backend packages
// call it from init; the flint package imports them all.
func RegisterBackend(name string, f BackendFactory) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[name] = f
}

// BackendName is the registry name serving master m under cfg.
func BackendName(m Master, cfg *Config) string {
	switch m.Kind {
	case MasterLocal:
		return BackendLocal
	case MasterEmbedded:
		return BackendEmbedded
	default:
		if cfg.Bool("flint.mesos.coarse") {
			return BackendMesosCoarse
		}
		return BackendMesosFine
	}
}

// NewBackend builds the backend registered for p.Master (the embedded
// backend uses it to build the Mesos backend that talks to its master).
func NewBackend(p BackendParams) (Backend, error) {
	name := BackendName(p.Master, p.Config)
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
