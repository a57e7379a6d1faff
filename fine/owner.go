package fine

import (
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/placement"
)

// run is the owner goroutine: the only one that reads or changes the
// backend's state (tasks, agents, held offers, result blocks, the no-fit
// diagnosis) and the only one that calls the Mesos connection and the
// driver. Its inputs — the connection's events (inlet), the driver loop's
// batches (Apply), its timers (the exit grace of dead executors) and Stop —
// come through one inbox and are handled one at a time in the order they
// came, so an order the backend needs (an agent's capacity shrinks before
// the update that frees a task's cores reaches the driver loop; a kill
// never overtakes its launch) is the order of its own calls. After each
// round of inputs it publishes what other goroutines may read (view).
func (b *Backend) run() { b.own.Run(b.publish) }

// call runs f on the owner and waits for it; false when the owner has
// ended (or never started) and f did not run.
func (b *Backend) call(f func()) bool { return b.own.Call(f) }

// post queues an input for the owner; false once it ended.
func (b *Backend) post(f func()) bool { return b.own.Post(f) }

// sync waits until the owner has handled every input queued before it.
func (b *Backend) sync() { b.call(func() {}) }

// Flush waits until the owner has handled every input queued before it
// and published its view: a test or a simulation stepping the backend
// knows it idle. It returns at once when the owner has ended.
func (b *Backend) Flush() { b.call(b.publish) }

// view is what the owner publishes for other goroutines: the answers of
// the backend's queries as of its last round of inputs.
type view struct {
	frameworkID string
	offeredCPUs int // task slots' cpus last offered, summed over agents
	filters     []placement.Filtered
	stats       Stats
}

// publish stores the view of the owner's state.
func (b *Backend) publish() {
	v := &view{frameworkID: b.frameworkID,
		stats:       Stats{Launched: b.launched, Running: len(b.tasks), HeldOffers: len(b.held), Executors: len(b.agents)},
		offeredCPUs: b.offeredCPUs}
	if n := len(b.diag.filtered) + len(b.diag.unmet); n > 0 {
		v.filters = make([]placement.Filtered, 0, n)
		v.filters = append(append(v.filters, b.diag.filtered...), b.diag.unmet...)
	}
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
// which carries batches out one at a time in order — kills and releases,
// then launches (each an ACCEPT call to the master), so a kill never
// overtakes its launch — without blocking the driver loop. Batches after
// Stop are dropped.
func (b *Backend) Apply(batch backend.Batch) {
	b.post(func() { b.applyBatch(&batch) })
}
