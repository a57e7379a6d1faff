package coarse

import (
	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// run is the owner goroutine: the only one that reads or changes the
// backend's state (executors, held cores, agent failures and back-offs,
// the no-executor diagnosis, held death reports) and the only one that
// calls the Mesos connection, the executors' streams and the driver. Its
// inputs — the connection's events (inlet), the gateway's (gwInlet), the
// driver loop's batches (Apply), its timers (the death grace), the
// dynamic-allocation calls and Stop's steps — come through one inbox and
// are handled one at a time in the order they came, so an order the
// backend needs (a kill never overtakes its launch on a stream; an
// executor's status updates reach the driver before its loss) is the order
// of its own calls. After each round of inputs it publishes what other
// goroutines may read (view).
func (b *Backend) run() { b.own.Run(b.publish) }

// call runs f on the owner, publishes, and waits for it; false when the
// owner has ended (or never started) and f did not run.
func (b *Backend) call(f func()) bool { return b.own.Call(func() { f(); b.publish() }) }

// post queues an input for the owner; false once it ended.
func (b *Backend) post(f func()) bool { return b.own.Post(f) }

// Flush waits until the owner has handled every input queued before it
// (and published its view): a test or a simulation stepping the backend
// knows it idle. It returns at once when the owner has ended.
func (b *Backend) Flush() { b.call(func() {}) }

// view is what the owner publishes for other goroutines: the answers of
// the backend's queries as of its last round of inputs.
type view struct {
	frameworkID string
	cores       int // of registered executors not lost
	filtered    []placement.Filtered
	executors   []ExecutorInfo // launched and not lost, sorted by id
}

// publish stores the view of the owner's state.
func (b *Backend) publish() {
	v := &view{frameworkID: b.frameworkID, filtered: b.diag.filtered,
		executors: make([]ExecutorInfo, 0, len(b.execs))}
	for _, e := range b.execs {
		if e.lost {
			continue
		}
		if e.registered {
			v.cores += e.cores
		}
		v.executors = append(v.executors, ExecutorInfo{ID: e.id, AgentID: e.agentID, Host: e.host, Cores: e.cores,
			GPUs: e.gpus, MemMB: e.memMB, Ports: e.ports, Registered: e.registered})
	}
	sortExecutors(v.executors)
	b.view.Store(v)
}

// viewed is the last view published (an empty one before Start).
func (b *Backend) viewed() *view {
	if v := b.view.Load(); v != nil {
		return v
	}
	return &view{}
}

// Apply implements backend.Backend: the batch is queued for the owner,
// which carries batches out one at a time in order, without blocking the
// driver loop. Batches after Stop are dropped.
func (b *Backend) Apply(batch backend.Batch) {
	b.post(func() { b.applyBatch(&batch) })
}

// gwInlet is what the gateway calls (on each executor's stream goroutine):
// it queues the event for the owner and returns. One executor's events
// keep their stream's order (registration, updates, then its loss); the
// gateway acknowledges an update once StatusUpdate returns, queued as
// good as handled, as with the Mesos connection.
type gwInlet struct{ b *Backend }

var _ gateway.Events = gwInlet{}

func (g gwInlet) ExecutorRegistered(info gateway.ExecutorInfo) {
	g.b.post(func() { g.b.gwChain.ExecutorRegistered(info) })
}
func (g gwInlet) StatusUpdate(u *flintpb.StatusUpdate) {
	if u.State == flintpb.TaskState_TASK_RUNNING {
		return // the driver loop ignores RUNNING: not even queued
	}
	g.b.post(func() { g.b.gwChain.StatusUpdate(u) })
}
func (g gwInlet) ExecutorLost(executorID, reason string) {
	g.b.post(func() { g.b.gwChain.ExecutorLost(executorID, reason) })
}
