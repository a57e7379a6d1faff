package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// ExecutorID and Host name the single in-process executor, as in Spark.
const (
	ExecutorID = "driver"
	Host       = "localhost"
)

// reviveInterval re-offers free slots periodically so locality waits expire
// even when no task ends (Spark's spark.scheduler.revive.interval).
const reviveInterval = time.Second

func init() { framework.RegisterBackend(framework.BackendLocal, New) }

// Backend runs tasks on an in-process executor runtime.
type Backend struct {
	threads  int
	taskCPUs int
	log      logrus.FieldLogger
	rt       *executor.Runtime
	d        framework.Driver

	mu      sync.Mutex
	updates []*flintpb.StatusUpdate
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

var _ framework.Backend = (*Backend)(nil)

// New builds the local backend for a local master.
func New(p framework.BackendParams) (framework.Backend, error) {
	if p.Master.Kind != framework.MasterLocal {
		return nil, fmt.Errorf("local: master %q is not local", p.Master.Raw)
	}
	b := &Backend{threads: p.Master.Threads, taskCPUs: p.Config.Int("flint.task.cpus"), log: p.Logger,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if b.taskCPUs > b.threads {
		return nil, fmt.Errorf("local: flint.task.cpus=%d exceeds the %d slots of %s: no task could ever run", b.taskCPUs, b.threads, p.Master.Raw)
	}
	rt, err := executor.New(executor.Config{
		ExecutorID:          ExecutorID,
		Cores:               b.threads,
		TaskCPUs:            b.taskCPUs,
		MaxResultSize:       p.Config.Size("flint.driver.maxResultSize"),
		MaxDirectResultSize: p.Config.Size("flint.task.maxDirectResultSize"),
		Registry:            p.Registry,
		Logger:              p.Logger,
	}, b.enqueue)
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	b.rt = rt
	return b, nil
}

// Start implements framework.Backend.
func (b *Backend) Start(_ context.Context, d framework.Driver) error {
	b.d = d
	d.ExecutorAdded(ExecutorID, Host, b.threads)
	go b.loop()
	return nil
}

// enqueue receives status updates from task goroutines without blocking them.
func (b *Backend) enqueue(u *flintpb.StatusUpdate) {
	b.mu.Lock()
	b.updates = append(b.updates, u)
	b.mu.Unlock()
	b.ReviveOffers()
}

// loop delivers status updates to the driver and offers free slots, on one
// goroutine so offers never race with each other.
func (b *Backend) loop() {
	defer close(b.done)
	t := time.NewTicker(reviveInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		case <-t.C:
		}
		b.deliver()
		b.offer()
	}
}

func (b *Backend) deliver() {
	b.mu.Lock()
	batch := b.updates
	b.updates = nil
	b.mu.Unlock()
	for _, u := range batch {
		b.d.StatusUpdate(u)
	}
}

func (b *Backend) offer() {
	free := b.rt.FreeCores()
	if free < b.taskCPUs || !b.d.WantsOffers() {
		return
	}
	descs := b.d.ResourceOffers([]scheduler.WorkerOffer{{ExecutorID: ExecutorID, Host: Host, Cores: free}})
	for _, td := range descs {
		if err := b.rt.Launch(td); err != nil {
			b.log.WithField("task", td.TaskId).Errorf("local: launch task %d: %v", td.TaskId, err)
			b.enqueue(&flintpb.StatusUpdate{TaskId: td.TaskId, Attempt: td.Attempt, ExecutorId: ExecutorID,
				State: flintpb.TaskState_TASK_FAILED, Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_LAUNCH_FAILED, Message: err.Error()}})
		}
	}
}

// ReviveOffers implements framework.Backend.
func (b *Backend) ReviveOffers() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// KillTask implements framework.Backend.
func (b *Backend) KillTask(taskID uint64, _ string, reason string) { b.rt.Kill(taskID, reason) }

// FetchResult implements framework.Backend.
func (b *Backend) FetchResult(_ context.Context, _ string, blockID string) ([]byte, error) {
	return b.rt.FetchResult(blockID)
}

// ReleaseResult implements framework.Backend.
func (b *Backend) ReleaseResult(_ string, blockID string) { b.rt.ReleaseResult(blockID) }

// DefaultParallelism implements framework.Backend.
func (b *Backend) DefaultParallelism() int { return b.threads }

// Stop implements framework.Backend: it stops offering, kills running tasks
// and waits for them.
func (b *Backend) Stop(ctx context.Context) error {
	b.once.Do(func() { close(b.stop) })
	<-b.done
	if err := b.rt.Close(ctx); err != nil {
		return fmt.Errorf("local: stop executor runtime: %w", err)
	}
	return nil
}
