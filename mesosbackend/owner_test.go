package mesosbackend

import (
	"errors"
	"slices"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
)

// recHandler records the events it handles, by name.
type recHandler struct{ got *[]string }

func (r recHandler) Subscribed(id string, _ mesos.MasterInfo, _ bool) {
	*r.got = append(*r.got, "subscribed "+id)
}
func (r recHandler) Offers(o []mesos.Offer)     { *r.got = append(*r.got, "offers") }
func (r recHandler) Rescinded(mesos.OfferID)    { *r.got = append(*r.got, "rescinded") }
func (r recHandler) Update(st mesos.TaskStatus) { *r.got = append(*r.got, "update "+st.TaskID.Value) }
func (r recHandler) AgentLost(id mesos.AgentID) { *r.got = append(*r.got, "agentlost "+id.Value) }
func (r recHandler) Disconnected(error)         { *r.got = append(*r.got, "disconnected") }
func (r recHandler) Aborted(error)              { *r.got = append(*r.got, "aborted") }
func (r recHandler) ExecutorLost(mesos.AgentID, mesos.ExecutorID, int) {
	*r.got = append(*r.got, "executorlost")
}
func (r recHandler) Message(mesos.AgentID, mesos.ExecutorID, []byte) {
	*r.got = append(*r.got, "message")
}

// The inlet queues every event for the owner, which hands it to the
// handler in force when it runs it, in the order the events came.
func TestOwnerInletOrder(t *testing.T) {
	o := NewOwner()
	var got []string
	var h mesosconn.Handler = recHandler{&got}
	in := Inlet(o, &h)
	in.Subscribed("fw", mesos.MasterInfo{}, false)
	in.Offers(nil)
	in.Update(mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t1"}})
	in.AgentLost(mesos.AgentID{Value: "a1"})
	in.Rescinded(mesos.OfferID{})
	in.ExecutorLost(mesos.AgentID{}, mesos.ExecutorID{}, 0)
	in.Message(mesos.AgentID{}, mesos.ExecutorID{}, nil)
	in.Disconnected(errors.New("x"))
	in.Aborted(errors.New("y"))
	if len(got) != 0 {
		t.Fatalf("handled before the owner ran: %q", got)
	}
	o.Drain()
	want := []string{"subscribed fw", "offers", "update t1", "agentlost a1", "rescinded", "executorlost", "message", "disconnected", "aborted"}
	if !slices.Equal(got, want) {
		t.Fatalf("handled %q, want %q", got, want)
	}
}

// Run handles inputs in order, publishes after each round, ends at the
// input that Quits and drops later ones; Call reports whether f ran.
func TestOwnerRunQuitCall(t *testing.T) {
	o := NewOwner()
	var order []int
	published := 0
	done := make(chan struct{})
	go func() { o.Run(func() { published++ }); close(done) }()
	if !o.Call(func() { order = append(order, 1) }) {
		t.Fatal("Call on a running owner: false")
	}
	o.Post(func() { order = append(order, 2) })
	o.Post(func() { order = append(order, 3); o.Quit() })
	<-o.Done()
	<-done
	if o.Post(func() { order = append(order, 4) }) {
		t.Fatal("Post after the owner ended: true")
	}
	if o.Call(func() { order = append(order, 5) }) {
		t.Fatal("Call after the owner ended: true")
	}
	if !slices.Equal(order, []int{1, 2, 3}) {
		t.Fatalf("ran %v, want [1 2 3]", order)
	}
	if published < 2 {
		t.Fatalf("published %d times, want at least 2 (after Call's round and at the end)", published)
	}
}

// An owner abandoned before it ran refuses inputs.
func TestOwnerAbandon(t *testing.T) {
	o := NewOwner()
	o.Abandon()
	if o.Call(func() {}) {
		t.Fatal("Call on an abandoned owner: true")
	}
	select {
	case <-o.Done():
	default:
		t.Fatal("Done not closed after Abandon")
	}
}

// ExecutorSandbox before the backend subscribed says so.
func TestExecutorSandboxNotConnected(t *testing.T) {
	if _, _, err := ExecutorSandbox(t.Context(), nil, "e1"); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("err = %v, want ErrNotConnected", err)
	}
}
