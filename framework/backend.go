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

var (
	backendsMu sync.RWMutex
	backends   = map[MasterKind]BackendFactory{}
)

// RegisterBackend makes a backend available for a master kind. Backend
// packages call it from init; the flint package imports them all.
func RegisterBackend(kind MasterKind, f BackendFactory) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[kind] = f
}

func newBackend(p BackendParams) (Backend, error) {
	backendsMu.RLock()
	f := backends[p.Master.Kind]
	backendsMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q: the %s backend is not linked into this binary (import github.com/flint-mesos/flint to get every backend)", ErrNoBackend, p.Master.Raw, p.Master.Kind)
	}
	b, err := f(p)
	if err != nil {
		return nil, fmt.Errorf("framework: start %s backend: %w", p.Master.Kind, err)
	}
	return b, nil
}
