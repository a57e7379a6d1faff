package mesosbackend

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/internal/mailbox"
)

// Owner is a backend's owner goroutine and its inbox: every input (the
// Mesos connection's events through Inlet, the driver loop's batches, the
// backend's timers, Stop) is a func queued with Post and run by Run, one
// at a time, in the order it came. The backend's state is touched by
// those funcs only, so an order the backend needs is the order of one
// goroutine's calls, not of locks. Both Mesos backends (coarse, fine)
// run on one.
type Owner struct {
	inbox *mailbox.Mailbox[func()]
	done  chan struct{} // closed when the owner ended (or will never run)
	quit  bool          // set by an input: the owner ends after it
}

// NewOwner returns an owner whose inbox takes inputs; nothing runs them
// until Run (or Drain).
func NewOwner() *Owner {
	return &Owner{inbox: mailbox.New[func()](), done: make(chan struct{})}
}

// Post queues f for the owner and returns without waiting; false (f
// dropped) once the owner ended.
func (o *Owner) Post(f func()) bool { return o.inbox.Put(f) }

// Drain runs what was queued so far on the caller's goroutine: before Run
// starts (Start handles what came while it subscribed) or in a test that
// plays the owner.
func (o *Owner) Drain() {
	for _, in := range o.inbox.Take(nil) {
		in()
	}
}

// Abandon ends an owner that never ran (Start failed): later inputs are
// dropped and Call returns false.
func (o *Owner) Abandon() {
	o.inbox.Close()
	close(o.done)
}

// Run is the owner goroutine: it runs the inputs in order and calls
// publish after each round of them (what other goroutines may read), until
// an input calls Quit; later inputs are dropped.
func (o *Owner) Run(publish func()) {
	defer close(o.done)
	var q []func()
	for {
		<-o.inbox.Wake()
		q = o.inbox.Take(q)
		for _, in := range q {
			in()
			if o.quit {
				o.inbox.Close() // later inputs are dropped: the backend is stopped
				publish()
				return
			}
		}
		publish()
	}
}

// Quit, called by an input, makes it the owner's last.
func (o *Owner) Quit() { o.quit = true }

// Done is closed when the owner has ended.
func (o *Owner) Done() <-chan struct{} { return o.done }

// Call runs f on the owner and waits for it; false when the owner has
// ended (or never started) and f did not run.
func (o *Owner) Call(f func()) bool {
	ran := make(chan struct{})
	if !o.Post(func() { f(); close(ran) }) {
		return false
	}
	select {
	case <-ran:
		return true
	case <-o.done:
		select {
		case <-ran:
			return true
		default:
			return false
		}
	}
}

// Inlet is the handler a backend gives the Mesos connection (which calls
// it on its own goroutine): it queues every event for the owner, in
// stream order, and returns; the owner hands it to *h, read when the event
// is handled. The connection acknowledges an update once Update returns,
// before the owner handled it; the driver's own state is in this
// process, so an update queued is as good as handled, and a driver that
// dies takes both with it.
func Inlet(o *Owner, h *mesosconn.Handler) mesosconn.Handler { return inlet{o, h} }

type inlet struct {
	o *Owner
	h *mesosconn.Handler
}

func (in inlet) Subscribed(id string, m mesos.MasterInfo, re bool) {
	in.o.Post(func() { (*in.h).Subscribed(id, m, re) })
}
func (in inlet) Offers(o []mesos.Offer)     { in.o.Post(func() { (*in.h).Offers(o) }) }
func (in inlet) Rescinded(id mesos.OfferID) { in.o.Post(func() { (*in.h).Rescinded(id) }) }
func (in inlet) Update(st mesos.TaskStatus) { in.o.Post(func() { (*in.h).Update(st) }) }
func (in inlet) AgentLost(id mesos.AgentID) { in.o.Post(func() { (*in.h).AgentLost(id) }) }
func (in inlet) Disconnected(err error)     { in.o.Post(func() { (*in.h).Disconnected(err) }) }
func (in inlet) Aborted(err error)          { in.o.Post(func() { (*in.h).Aborted(err) }) }
func (in inlet) ExecutorLost(a mesos.AgentID, e mesos.ExecutorID, status int) {
	in.o.Post(func() { (*in.h).ExecutorLost(a, e, status) })
}
func (in inlet) Message(a mesos.AgentID, e mesos.ExecutorID, d []byte) {
	in.o.Post(func() { (*in.h).Message(a, e, d) })
}
