package master_test

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	mesosres "github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// Timer-driven behaviour runs on a FakeClock: allocation every second,
// heartbeats every 10s, and agent pings only when a test asks for them
// (an hour apart otherwise, so that big clock jumps cannot remove fake
// agents whose pongs are still in flight).
const (
	tickAlloc     = time.Second
	tickHeartbeat = 10 * time.Second
)

func newClockServer(t *testing.T, agents int, edit func(*master.Config)) (*minimesostest.Server, *minimesostest.FakeClock) {
	t.Helper()
	clk := minimesostest.NewFakeClock(time.Time{})
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(agents, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.Clock = clk
		c.AllocationInterval = tickAlloc
		c.HeartbeatInterval = tickHeartbeat
		c.AgentPingInterval = time.Hour
		if edit != nil {
			edit(c)
		}
	}))
	return s, clk
}

// marker makes the master queue an UPDATE for task id on c's stream
// (explicit reconciliation of an unknown task) and returns the events
// that came before it. Since one stream is ordered, this shows what the
// master had sent up to now without waiting on the wall clock.
func (c *sched) marker(id string) []*scheduler.Event {
	c.t.Helper()
	c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{id: ""})))
	var before []*scheduler.Event
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e, ok := <-c.events:
			if !ok {
				c.t.Fatalf("stream closed waiting for marker %s", id)
			}
			if e.GetType() == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == id {
				return before
			}
			before = append(before, e)
		case <-timeout:
			c.t.Fatalf("no marker %s within 5s", id)
		}
	}
}

func countEvents(evs []*scheduler.Event, typ scheduler.Event_Type) int {
	n := 0
	for _, e := range evs {
		if e.GetType() == typ {
			n++
		}
	}
	return n
}

func offerIDs(evs []*scheduler.Event) []string {
	var ids []string
	for _, e := range evs {
		if e.GetType() == scheduler.Event_OFFERS {
			for _, o := range e.Offers.Offers {
				ids = append(ids, o.ID.Value)
			}
		}
	}
	return ids
}

// Unanswered offers are rescinded after OfferTimeout, their resources go
// back to the allocator and are offered again; an answered offer's
// timer is cancelled.
func TestOfferTimeoutRescindsAndReoffers(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 1, func(c *master.Config) { c.OfferTimeout = 30 * time.Second })
		c := subscribe(t, s, codec, frameworkInfo("ot"))
		if ids := offerIDs(c.marker("m0")); len(ids) != 0 {
			t.Fatalf("offers before the first allocation: %v", ids)
		}
		clk.Advance(tickAlloc)
		o1 := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		// One tick short of the timeout: nothing rescinded or re-offered.
		clk.Advance(30*time.Second - tickAlloc)
		if evs := c.marker("m1"); countEvents(evs, scheduler.Event_RESCIND) != 0 || len(offerIDs(evs)) != 0 {
			t.Fatalf("before the timeout: %v", evs)
		}
		if n := s.Master.Metrics()["master/outstanding_offers"]; n != 1 {
			t.Fatalf("outstanding offers %v", n)
		}
		// The timeout and the next allocation fall due together: RESCIND
		// first, then the same resources in a new offer.
		clk.Advance(tickAlloc)
		if e := c.next(scheduler.Event_RESCIND); e.Rescind.OfferID != o1.ID {
			t.Fatalf("rescinded %v, want %v", e.Rescind.OfferID, o1.ID)
		}
		o2 := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		if o2.ID == o1.ID || o2.AgentID != o1.AgentID || !mesosres.Equivalent(o2.Resources, o1.Resources) {
			t.Fatalf("re-offer %v after %v", o2, o1)
		}
		d := getState(t, s)
		if len(d.Frameworks) != 1 || len(d.Frameworks[0].Offers) != 1 || d.Frameworks[0].Offers[0].ID != o2.ID.Value {
			t.Fatalf("state offers %+v", d.Frameworks)
		}
		// The rescinded offer is gone: accepting it loses the task.
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("late", o1, 1, 1))}.WithOffers(o1.ID)))
		if st := c.nextUpdate("late"); st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_INVALID_OFFERS {
			t.Fatalf("accepting a rescinded offer: %v", st)
		}
		// Accepting o2 in time cancels its timer: no RESCIND later.
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o2, 1, 1))}.WithOffers(o2.ID)))
		clk.Advance(time.Minute)
		evs := c.marker("m2")
		rescinded := 0
		for _, e := range evs {
			if e.GetType() == scheduler.Event_RESCIND {
				if e.Rescind.OfferID == o2.ID {
					t.Fatalf("the accepted offer %v was rescinded", o2.ID)
				}
				rescinded++
			}
		}
		// What remained of o2 was re-offered once the ACCEPT's default 5s
		// filter expired, and that offer timed out and was offered again.
		if ids := offerIDs(evs); len(ids) != 2 || rescinded != 1 {
			t.Fatalf("leftover offers %v, %d rescinded: %v", ids, rescinded, evs)
		}
	})
}

// A framework holding MaxOutstandingOffers unanswered offers gets no
// more until it answers one (decline or accept), whatever the rounds.
func TestMaxOutstandingOffers(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 3, func(c *master.Config) { c.MaxOutstandingOffers = 2 })
		c := subscribe(t, s, codec, frameworkInfo("cap"))
		clk.Advance(tickAlloc)
		held := map[string]mesos.Offer{}
		for len(held) < 2 {
			for _, o := range c.next(scheduler.Event_OFFERS).Offers.Offers {
				held[o.ID.Value] = o
			}
		}
		// Many rounds later: still those two, the third agent unoffered.
		clk.Advance(20 * tickAlloc)
		if ids := offerIDs(c.marker("m1")); len(ids) != 0 {
			t.Fatalf("offers beyond the cap: %v", ids)
		}
		if n := s.Master.Metrics()["master/outstanding_offers"]; n != 2 {
			t.Fatalf("outstanding offers %v", n)
		}
		offered := map[string]bool{}
		var first mesos.Offer
		for _, o := range held {
			offered[o.AgentID.Value] = true
			first = o
		}
		var third string
		for _, ag := range s.Fakes {
			if !offered[ag.ID()] {
				third = ag.ID()
			}
		}
		if len(offered) != 2 || third == "" {
			t.Fatalf("two offers on one agent: %v", held)
		}
		// Declining one frees a slot: the next round offers the third agent.
		c.mustCall(calls.Decline(first.ID).With(calls.RefuseSeconds(time.Hour)))
		delete(held, first.ID.Value)
		clk.Advance(tickAlloc)
		o3 := c.next(scheduler.Event_OFFERS).Offers.Offers
		if len(o3) != 1 || o3[0].AgentID.Value != third {
			t.Fatalf("after a decline: %v, want one offer on %s", o3, third)
		}
		held[o3[0].ID.Value] = o3[0]
		clk.Advance(20 * tickAlloc)
		if ids := offerIDs(c.marker("m2")); len(ids) != 0 {
			t.Fatalf("offers beyond the cap after a decline: %v", ids)
		}
		// Accepting one frees a slot too: the unused part of that offer
		// comes back once the ACCEPT's refuse_seconds (0 here) allow it.
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o3[0], 1, 64))}.WithOffers(o3[0].ID)).
			With(calls.RefuseSeconds(0)))
		clk.Advance(tickAlloc)
		o4 := c.next(scheduler.Event_OFFERS).Offers.Offers
		if len(o4) != 1 || o4[0].AgentID.Value != third {
			t.Fatalf("after an accept: %v", o4)
		}
		if n := s.Master.Metrics()["master/outstanding_offers"]; n != 2 {
			t.Fatalf("outstanding offers %v", n)
		}
		clk.Advance(20 * tickAlloc)
		if ids := offerIDs(c.marker("m3")); len(ids) != 0 {
			t.Fatalf("offers beyond the cap after an accept: %v", ids)
		}
		// The cap is per framework: another one gets the agent the first
		// declined.
		c2 := subscribe(t, s, codec, frameworkInfo("other"))
		clk.Advance(tickAlloc)
		if o := c2.next(scheduler.Event_OFFERS).Offers.Offers; len(o) != 1 || o[0].AgentID != first.AgentID {
			t.Fatalf("second framework's offers %v, want one on %s", o, first.AgentID.Value)
		}
	})
}
