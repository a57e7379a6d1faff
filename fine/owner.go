package fine

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
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
func (b *Backend) run() {
	defer close(b.loopDone)
	var q []func()
	for {
		<-b.inbox.Wake()
		q = b.inbox.Take(q)
		for _, in := range q {
			in()
			if b.quit {
				b.inbox.Close() // later inputs are dropped: the backend is stopped
				b.publish()
				return
			}
		}
		b.publish()
	}
}

// call runs f on the owner and waits for it; false when the owner has
// ended (or never started) and f did not run.
func (b *Backend) call(f func()) bool {
	done := make(chan struct{})
	if !b.post(func() { f(); close(done) }) {
		return false
	}
	select {
	case <-done:
		return true
	case <-b.loopDone:
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

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
		stats: Stats{Launched: b.launched, Running: len(b.tasks), HeldOffers: len(b.held), Executors: len(b.agents)}}
	for _, a := range b.agents {
		v.offeredCPUs += a.cpus
	}
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

// inlet is the handler the Mesos connection calls (on its goroutine): it
// queues every event for the owner, in stream order, and returns. The
// connection acknowledges an update once Update returns, before the owner
// handled it; the driver's own state is in this process, so an update
// queued is as good as handled, and a driver that dies takes both with it.
type inlet struct{ b *Backend }

var _ mesosconn.Handler = inlet{}

func (h inlet) Subscribed(id string, m mesos.MasterInfo, re bool) {
	h.b.post(func() { h.b.chain.Subscribed(id, m, re) })
}
func (h inlet) Offers(o []mesos.Offer)     { h.b.post(func() { h.b.chain.Offers(o) }) }
func (h inlet) Rescinded(id mesos.OfferID) { h.b.post(func() { h.b.chain.Rescinded(id) }) }
func (h inlet) Update(st mesos.TaskStatus) { h.b.post(func() { h.b.chain.Update(st) }) }
func (h inlet) AgentLost(id mesos.AgentID) { h.b.post(func() { h.b.chain.AgentLost(id) }) }
func (h inlet) Disconnected(err error)     { h.b.post(func() { h.b.chain.Disconnected(err) }) }
func (h inlet) Aborted(err error)          { h.b.post(func() { h.b.chain.Aborted(err) }) }
func (h inlet) ExecutorLost(a mesos.AgentID, e mesos.ExecutorID, status int) {
	h.b.post(func() { h.b.chain.ExecutorLost(a, e, status) })
}
func (h inlet) Message(a mesos.AgentID, e mesos.ExecutorID, d []byte) {
	h.b.post(func() { h.b.chain.Message(a, e, d) })
}
