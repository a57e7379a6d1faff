package master_test

import (
	"context"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	mesosres "github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
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
		// Offered on subscription, as Mesos' allocator offers on addFramework.
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

// Failover keeps the id and ends the old stream; a disconnected
// framework survives exactly failover_timeout, then it is removed (its
// tasks killed, its executors shut down) and its id refused.
func TestFailoverAndTimeout(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 1, nil)
		ag := s.Fakes[0]
		fi := frameworkInfo("fo")
		fi.FailoverTimeout = proto(10.0)
		c1 := subscribe(t, s, codec, fi)
		fi2 := *fi
		fi2.ID = &mesos.FrameworkID{Value: c1.id}
		c2 := subscribe(t, s, codec, &fi2)
		if c2.id != c1.id {
			t.Fatalf("failover changed id %s → %s", c1.id, c2.id)
		}
		if e := c1.next(scheduler.Event_ERROR); e.Error.Message != "Framework failed over" {
			t.Fatalf("old stream: %v", e)
		}
		// Old stream id is now refused (400), the new one works.
		if err := c1.call(calls.Revive()); err == nil {
			t.Fatal("call on the failed-over stream succeeded")
		}
		clk.Advance(tickAlloc)
		o := c2.next(scheduler.Event_OFFERS).Offers.Offers[0]
		c2.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 1))}.WithOffers(o.ID)))
		if _, err := ag.SendStatus(c2.id, "t", mesos.TASK_RUNNING); err != nil {
			t.Fatal(err)
		}
		// Disconnect: inactive but kept, with its task, for 10s.
		if err := s.Faults().DropFrameworkStream(c2.id); err != nil {
			t.Fatal(err)
		}
		clk.Advance(10*time.Second - time.Millisecond)
		d := getState(t, s)
		if len(d.Frameworks) != 1 || d.Frameworks[0].Active || len(d.Frameworks[0].Tasks) != 1 || len(d.CompletedFrameworks) != 0 {
			t.Fatalf("1ms before the failover timeout: %+v", d)
		}
		for _, m := range ag.Messages() {
			if m.ShutdownFramework != nil {
				t.Fatal("framework shut down before its failover timeout")
			}
		}
		clk.Advance(time.Millisecond)
		d = getState(t, s)
		if len(d.Frameworks) != 0 || len(d.CompletedFrameworks) != 1 {
			t.Fatalf("at the failover timeout: %+v", d)
		}
		if _, err := ag.WaitFor(time.Second, func(m link.MasterMessage) bool {
			return m.ShutdownFramework != nil && m.ShutdownFramework.FrameworkID.Value == c2.id
		}); err != nil {
			t.Fatal(err)
		}
		if n := s.Master.Metrics()["master/task_killed/source_master/reason_framework_removed"]; n != 1 {
			t.Fatalf("killed tasks %v", n)
		}
		c3 := newCaller(s.SchedulerURL(), codec)
		resp, err := c3.Call(t.Context(), calls.Subscribe(&fi2))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Close()
		var e scheduler.Event
		if err := resp.Decode(&e); err != nil || e.GetType() != scheduler.Event_ERROR || e.Error.Message != "Framework has been removed" {
			t.Fatalf("resubscribe removed: %v %v", &e, err)
		}
	})
}

// HEARTBEAT right after SUBSCRIBED, then exactly every
// heartbeat_interval_seconds of the master's clock.
func TestHeartbeatInterval(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 0, nil)
		c := subscribe(t, s, codec, frameworkInfo("hb"))
		// subscribe consumed SUBSCRIBED; the immediate HEARTBEAT follows.
		if evs := c.marker("m0"); len(evs) != 1 || evs[0].GetType() != scheduler.Event_HEARTBEAT {
			t.Fatalf("after SUBSCRIBED: %v", evs)
		}
		clk.Advance(tickHeartbeat - time.Millisecond)
		if evs := c.marker("m1"); len(evs) != 0 {
			t.Fatalf("1ms before the interval: %v", evs)
		}
		clk.Advance(time.Millisecond)
		if evs := c.marker("m2"); len(evs) != 1 || evs[0].GetType() != scheduler.Event_HEARTBEAT {
			t.Fatalf("at the interval: %v", evs)
		}
		clk.Advance(3 * tickHeartbeat)
		if evs := c.marker("m3"); len(evs) != 3 || countEvents(evs, scheduler.Event_HEARTBEAT) != 3 {
			t.Fatalf("three intervals: %v", evs)
		}
	})
	// The interval announced in SUBSCRIBED is the configured one (15s by default).
	for _, tc := range []struct {
		cfg  time.Duration
		want float64
	}{{0, 15}, {tickHeartbeat, 10}} {
		s, _ := newClockServer(t, 0, func(c *master.Config) { c.HeartbeatInterval = tc.cfg })
		resp, err := newCaller(s.SchedulerURL(), allCodecs[0]).Call(t.Context(), calls.Subscribe(frameworkInfo("hb")))
		if err != nil {
			t.Fatal(err)
		}
		var e scheduler.Event
		err = resp.Decode(&e)
		resp.Close()
		if err != nil || e.GetType() != scheduler.Event_SUBSCRIBED || e.Subscribed.GetHeartbeatIntervalSeconds() != tc.want {
			t.Fatalf("HeartbeatInterval %v: %v %v", tc.cfg, &e, err)
		}
	}
}

// An agent that stops answering pings is removed on the ping after
// AgentMaxMissedPings unanswered ones: its tasks become TASK_UNREACHABLE
// (partition-aware), offers are rescinded, every framework gets FAILURE.
func TestAgentRemovalByHealthCheck(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 1, func(c *master.Config) {
			c.AgentPingInterval, c.AgentMaxMissedPings = time.Second, 5
		})
		ag := s.Fakes[0]
		// tick advances one ping interval (also an allocation interval)
		// and waits for the pong when the agent answers.
		answering := true
		tick := func() {
			t.Helper()
			n := ag.Pongs()
			clk.Advance(time.Second)
			if answering {
				waitfor.True(t, 5*time.Second, "the agent's pong", func() bool { return ag.Pongs() != n })
			}
		}
		pa := subscribe(t, s, codec, frameworkInfo("pa", mesos.FrameworkInfo_Capability_PARTITION_AWARE))
		tick()
		o := pa.next(scheduler.Event_OFFERS).Offers.Offers[0]
		pa.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 1))}.WithOffers(o.ID)))
		other := subscribe(t, s, codec, frameworkInfo("other"))
		tick()
		other.next(scheduler.Event_OFFERS)
		for i := 0; i < 10; i++ {
			tick() // answered pings keep it
		}
		answering = false
		ag.SetPongs(false)
		for i := 0; i < 5; i++ {
			tick()
		}
		if d := getState(t, s); len(d.Slaves) != 1 || !d.Slaves[0].Active {
			t.Fatalf("removed after 5 missed pings: %+v", d.Slaves)
		}
		if evs := pa.marker("m"); countEvents(evs, scheduler.Event_UPDATE) != 0 || countEvents(evs, scheduler.Event_FAILURE) != 0 {
			t.Fatalf("before removal: %v", evs)
		}
		tick()
		if d := getState(t, s); len(d.Slaves) != 0 {
			t.Fatalf("not removed on the 6th ping: %+v", d.Slaves)
		}
		if st := pa.nextUpdate("t"); st.GetState() != mesos.TASK_UNREACHABLE || st.GetReason() != mesos.REASON_AGENT_REMOVED || st.UUID != nil {
			t.Fatalf("%v", st)
		}
		if e := pa.next(scheduler.Event_FAILURE); e.Failure.GetAgentID().GetValue() != ag.ID() || e.Failure.ExecutorID != nil {
			t.Fatalf("%v", e)
		}
		if e := other.next(scheduler.Event_RESCIND); e.Rescind.OfferID.Value == "" {
			t.Fatal("no rescind")
		}
		other.next(scheduler.Event_FAILURE)
		m := s.Master.Metrics()
		if m["master/slave_removals"] != 1 || m["master/slaves_unreachable"] != 1 || m["master/tasks_unreachable"] != 1 {
			t.Fatalf("metrics %v", m)
		}
	})
}

// Without AllocateOnRelease the master allocates as Mesos' batch allocator
// does: at once on the events after which Mesos generates offers (a
// framework subscribing, REVIVE, an agent registering), but resources
// recovered from a declined offer (or an ended task) wait for the next
// allocation interval.
func TestBatchAllocationAsMesos(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s, clk := newClockServer(t, 1, nil)
		c := subscribe(t, s, codec, frameworkInfo("batch"))
		o1 := c.next(scheduler.Event_OFFERS).Offers.Offers[0] // on subscription, no tick
		c.mustCall(calls.Decline(o1.ID).With(calls.RefuseSeconds(0)))
		if ids := offerIDs(c.marker("m1")); len(ids) != 0 {
			t.Fatalf("declined resources re-offered before the next batch: %v", ids)
		}
		clk.Advance(tickAlloc)
		o2 := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		if o2.ID == o1.ID || o2.AgentID != o1.AgentID {
			t.Fatalf("next batch offered %v, want a new offer of agent %s", o2.ID, o1.AgentID.Value)
		}
		// Declined for an hour, then revived: offered at once again.
		c.mustCall(calls.Decline(o2.ID).With(calls.RefuseSeconds(time.Hour)))
		clk.Advance(tickAlloc)
		if ids := offerIDs(c.marker("m2")); len(ids) != 0 {
			t.Fatalf("filtered agent offered: %v", ids)
		}
		c.mustCall(calls.Revive())
		if o3 := c.next(scheduler.Event_OFFERS).Offers.Offers[0]; o3.AgentID != o1.AgentID {
			t.Fatalf("revive offered %v", o3)
		}
	})
}

// The master announces its total ping timeout (interval × max missed
// pings) to a registering agent, as Mesos' MasterSlaveConnection does, so
// the agent waits as long as the master before it takes the other for gone.
func TestRegistrationAnnouncesThePingTimeout(t *testing.T) {
	m, err := master.New(master.Config{ID: "ping-timeout", AgentPingInterval: 2 * time.Second, AgentMaxMissedPings: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	reg, err := m.RegisterAgent(context.Background(), link.Registration{AgentInfo: mesos.AgentInfo{Hostname: "h"}},
		link.AgentFunc(func(link.MasterMessage) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if reg.PingInterval != 2*time.Second || reg.PingTimeout != 14*time.Second {
		t.Fatalf("registered with ping interval %v and timeout %v, want 2s and 14s", reg.PingInterval, reg.PingTimeout)
	}
}
