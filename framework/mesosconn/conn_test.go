package mesosconn

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubscribeSendsFullFrameworkInfo(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.Name, cfg.User = "pi", "alice"
	cfg.Roles = []string{"analytics", "batch"}
	cfg.Principal, cfg.Secret = "flint", "s3cret"
	cfg.Checkpoint = true
	cfg.FailoverTimeout = 90 * time.Second
	cfg.WebUIURL, cfg.Hostname = "http://driver:4040", "driver.example"
	cfg.Labels = map[string]string{"team": "data", "app": "pi"}
	cfg.Capabilities = []mesos.FrameworkInfo_Capability_Type{mesos.FrameworkInfo_Capability_GPU_RESOURCES, mesos.FrameworkInfo_Capability_MULTI_ROLE}
	rec := &recorder{}
	c := start(t, cfg, rec)

	subs := fm.callsOf(scheduler.Call_SUBSCRIBE)
	if len(subs) != 1 {
		t.Fatalf("%d SUBSCRIBE calls, want 1", len(subs))
	}
	s := subs[0]
	if got := s.Header.Get("Authorization"); got != "Basic "+base64.StdEncoding.EncodeToString([]byte("flint:s3cret")) {
		t.Errorf("Authorization = %q", got)
	}
	if got := s.Header.Get("Content-Type"); got != "application/x-protobuf" {
		t.Errorf("Content-Type = %q, want protobuf by default", got)
	}
	if s.Call.FrameworkID != nil {
		t.Errorf("first SUBSCRIBE carries framework id %v", s.Call.FrameworkID)
	}
	fi := s.Call.GetSubscribe().GetFrameworkInfo()
	check := func(field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FrameworkInfo.%s = %v, want %v", field, got, want)
		}
	}
	check("name", fi.GetName(), "pi")
	check("user", fi.GetUser(), "alice")
	check("roles", fi.GetRoles(), []string{"analytics", "batch"})
	check("role (deprecated, unset)", fi.Role, (*string)(nil))
	check("principal", fi.GetPrincipal(), "flint")
	check("checkpoint", fi.GetCheckpoint(), true)
	check("failover_timeout", fi.GetFailoverTimeout(), 90.0)
	check("webui_url", fi.GetWebUiURL(), "http://driver:4040")
	check("hostname", fi.GetHostname(), "driver.example")
	check("id", fi.ID, (*mesos.FrameworkID)(nil))
	var labels []string
	for _, l := range fi.GetLabels().GetLabels() {
		labels = append(labels, l.Key+"="+l.GetValue())
	}
	check("labels", labels, []string{"app=pi", "team=data"})
	var caps []mesos.FrameworkInfo_Capability_Type
	for _, cp := range fi.GetCapabilities() {
		caps = append(caps, cp.Type)
	}
	check("capabilities", caps, []mesos.FrameworkInfo_Capability_Type{mesos.FrameworkInfo_Capability_MULTI_ROLE, mesos.FrameworkInfo_Capability_GPU_RESOURCES})

	if c.FrameworkID() != "m1-0000" || !c.Subscribed() || c.Master().ID != "m1" {
		t.Errorf("FrameworkID %q, subscribed %v, master %q", c.FrameworkID(), c.Subscribed(), c.Master().ID)
	}
	if !rec.has("subscribed m1-0000 re=false") {
		t.Errorf("handler events %v", rec.events)
	}
	// Implicit reconciliation right after SUBSCRIBED, on the subscription's stream.
	r := fm.waitCalls(scheduler.Call_RECONCILE, 1)[0]
	if len(r.Call.GetReconcile().GetTasks()) != 0 || r.Call.GetFrameworkID().GetValue() != "m1-0000" || r.Stream != "stream-1" {
		t.Errorf("implicit RECONCILE = %+v on %q", r.Call, r.Stream)
	}
}

func TestJSONCodec(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.Codec = JSON
	rec := &recorder{}
	c := start(t, cfg, rec)
	if got := fm.callsOf(scheduler.Call_SUBSCRIBE)[0].Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	fm.send(offersEvent("o1"))
	rec.wait(t, "offers 1")
	if err := c.Decline([]mesos.OfferID{{Value: "o1"}}, DeclineUnfit); err != nil {
		t.Fatal(err)
	}
}

func offersEvent(ids ...string) *scheduler.Event {
	var offers []mesos.Offer
	for _, id := range ids {
		offers = append(offers, mesos.Offer{
			ID: mesos.OfferID{Value: id}, FrameworkID: mesos.FrameworkID{Value: "m1-0000"},
			AgentID: mesos.AgentID{Value: "a1"}, Hostname: "agent1",
			Resources: mesos.Resources{cpus(4, "*")},
		})
	}
	return &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}}
}

func cpus(n float64, role string) mesos.Resource {
	return mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: n}, Role: &role}
}

func update(task, agent string, state mesos.TaskState, uuid []byte) *scheduler.Event {
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: state.Enum(), UUID: uuid}
	if agent != "" {
		st.AgentID = &mesos.AgentID{Value: agent}
	}
	return &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}}
}

func TestEventsReachHandlerAndAcksFollowUUIDs(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	acked := make(chan int, 10)
	rec.onUpdate = func(mesos.TaskStatus) { acked <- len(fm.callsOf(scheduler.Call_ACKNOWLEDGE)) }
	start(t, testConfig(fm, clock), rec)

	uuid := []byte("0123456789abcdef")
	fm.send(offersEvent("o1", "o2"))
	fm.send(&scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: "o2"}}})
	fm.send(update("t1", "a1", mesos.TASK_RUNNING, uuid))
	fm.send(update("t2", "a1", mesos.TASK_LOST, nil)) // master-generated: no uuid, no ACK
	fm.send(update("t3", "a2", mesos.TASK_FINISHED, uuid))
	fm.send(&scheduler.Event{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{AgentID: mesos.AgentID{Value: "a1"}, ExecutorID: mesos.ExecutorID{Value: "e1"}, Data: []byte("hi")}})
	status := int32(137)
	fm.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: "a1"}, ExecutorID: &mesos.ExecutorID{Value: "e1"}, Status: &status}})
	fm.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: "a2"}}})
	fm.send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
	rec.wait(t, "agent lost a2")

	want := []string{
		"subscribed m1-0000 re=false", "offers 2", "rescinded o2",
		"update t1 TASK_RUNNING", "update t2 TASK_LOST", "update t3 TASK_FINISHED",
		"message a1/e1 hi", "executor lost a1/e1 137", "agent lost a2",
	}
	rec.mu.Lock()
	got := append([]string(nil), rec.events...)
	rec.mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handler events\n got %q\nwant %q", got, want)
	}
	// Events are handled, and acknowledged, in order: once a later
	// update's ACK is in, every earlier one's is.
	fm.send(update("t4", "a1", mesos.TASK_RUNNING, []byte("fedcba9876543210")))
	fm.waitCalls(scheduler.Call_ACKNOWLEDGE, 3)
	acks := fm.callsOf(scheduler.Call_ACKNOWLEDGE)
	if len(acks) != 3 || acks[2].Call.GetAcknowledge().TaskID.Value != "t4" {
		t.Fatalf("%d ACKNOWLEDGE calls before t4's, want 2 (only updates with a uuid)", len(acks)-1)
	}
	acks = acks[:2]
	for i, task := range []string{"t1", "t3"} {
		a := acks[i].Call.GetAcknowledge()
		if a.TaskID.Value != task || string(a.UUID) != string(uuid) || acks[i].Call.GetFrameworkID().GetValue() != "m1-0000" {
			t.Errorf("ACK %d = %+v, want task %s", i, a, task)
		}
	}
	if a := acks[1].Call.GetAcknowledge(); a.AgentID.Value != "a2" {
		t.Errorf("ACK agent = %q, want a2", a.AgentID.Value)
	}
	// The ACK of an update is sent after the handler returned: the handler saw 0 ACKs for t1,
	// and 1 (t1's) when handling t2 and t3.
	if got := []int{<-acked, <-acked, <-acked}; !reflect.DeepEqual(got, []int{0, 1, 1}) {
		t.Errorf("ACKs seen inside Update = %v, want [0 1 1]", got)
	}
}

func TestDeclineRefuseSecondsPerReason(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.RefuseSeconds = map[DeclineReason]time.Duration{
		DeclineNoDemand:        120 * time.Second,
		DeclineUnmetConstraint: 600 * time.Second,
		DeclineReachedMaxCores: 30 * time.Second,
	}
	c := start(t, cfg, &recorder{})
	for _, why := range []DeclineReason{DeclineNoDemand, DeclineUnmetConstraint, DeclineReachedMaxCores, DeclineUnfit} {
		if err := c.Decline([]mesos.OfferID{{Value: "o-" + why.String()}}, why); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Decline(nil, DeclineNoDemand); err != nil {
		t.Fatal(err)
	}
	ds := fm.callsOf(scheduler.Call_DECLINE)
	if len(ds) != 4 {
		t.Fatalf("%d DECLINE calls, want 4 (none for an empty list)", len(ds))
	}
	want := []*float64{ptr(120.0), ptr(600.0), ptr(30.0), nil}
	for i, d := range ds {
		got := d.Call.GetDecline().GetFilters().GetRefuseSeconds()
		if w := want[i]; (w == nil) != (d.Call.GetDecline().GetFilters() == nil) || (w != nil && got != *w) {
			t.Errorf("decline %d (%s): filters %v, want refuse_seconds %v", i, d.Call.GetDecline().OfferIDs[0].Value, d.Call.GetDecline().GetFilters(), want[i])
		}
	}
}

func TestConfigFromDeclineKeys(t *testing.T) {
	// Covered with the real config table in config_test.go; here the reasons' names.
	for r, want := range map[DeclineReason]string{DeclineUnfit: "unfit", DeclineNoDemand: "no demand", DeclineUnmetConstraint: "unmet constraints", DeclineReachedMaxCores: "reached max cores", DeclineShuttingDown: "shutting down", DeclineReason(99): "unknown"} {
		if r.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(r), r.String(), want)
		}
	}
}

func TestSuppressReviveOnlyOnChange(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.Roles = []string{"batch"}
	c := start(t, cfg, &recorder{})
	demandCalls := func() []scheduler.Call_Type {
		var out []scheduler.Call_Type
		for _, ct := range fm.allCalls() {
			if ct == scheduler.Call_SUPPRESS || ct == scheduler.Call_REVIVE {
				out = append(out, ct)
			}
		}
		return out
	}
	steps := []struct {
		demand bool
		want   int // demand calls after this step
	}{{true, 0}, {false, 1}, {false, 1}, {true, 2}, {true, 2}, {false, 3}}
	for i, s := range steps {
		c.SetDemand(s.demand)
		if s.want > 0 {
			eventually(t, "demand call", func() bool { return len(demandCalls()) >= s.want })
		}
		if got := len(demandCalls()); got != s.want {
			t.Fatalf("step %d: %d SUPPRESS/REVIVE calls, want %d", i, got, s.want)
		}
	}
	want := []scheduler.Call_Type{scheduler.Call_SUPPRESS, scheduler.Call_REVIVE, scheduler.Call_SUPPRESS}
	if got := demandCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if r := fm.callsOf(scheduler.Call_SUPPRESS)[0].Call.GetSuppress().GetRoles(); !reflect.DeepEqual(r, []string{"batch"}) {
		t.Errorf("SUPPRESS roles %v", r)
	}
	if c.Demand() {
		t.Error("Demand() = true after SetDemand(false)")
	}
}

func TestReviveWhenOffersDoNotCome(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.DisableAutoRevive = false
	cfg.ReviveInterval = 7 * time.Second
	rec := &recorder{}
	start(t, cfg, rec)
	t0 := clock.Now()
	advanceWhenWaiting(t, clock, 7*time.Second)
	fm.waitCalls(scheduler.Call_REVIVE, 1)
	advanceWhenWaiting(t, clock, 7*time.Second)
	fm.waitCalls(scheduler.Call_REVIVE, 2)
	// Offers push the next revive back: it comes ReviveInterval after the last offer.
	fm.send(offersEvent("o1"))
	rec.wait(t, "offers 1")
	clock.Advance(3 * time.Second)
	fm.send(offersEvent("o2"))
	eventually(t, "second offer", func() bool { return rec.count("offers") == 2 })
	advanceWhenWaiting(t, clock, 4*time.Second) // the old deadline, 7 s after the last REVIVE
	advanceWhenWaiting(t, clock, 3*time.Second) // re-armed for 7 s after o2
	fm.waitCalls(scheduler.Call_REVIVE, 3)
	if at := fm.callsOf(scheduler.Call_REVIVE)[2].At.Sub(t0); at != 24*time.Second {
		t.Errorf("third REVIVE at +%s, want +24s", at)
	}
}

func TestHeartbeatLossResubscribesWithSameFrameworkID(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.heartbeat = 2
	cfg := testConfig(fm, clock)
	cfg.MissedHeartbeats = 3
	rec := &recorder{}
	c := start(t, cfg, rec)
	// The fake master sends nothing after SUBSCRIBED: 3 × 2 s of silence drop the stream.
	advanceWhenWaiting(t, clock, 6*time.Second)
	rec.wait(t, "disconnected")
	rec.mu.Lock()
	err := rec.errs[0]
	rec.mu.Unlock()
	if !errors.Is(err, ErrHeartbeatTimeout) {
		t.Errorf("Disconnected(%v), want ErrHeartbeatTimeout", err)
	}
	advanceWhenWaiting(t, clock, time.Second) // backoff
	rec.wait(t, "subscribed m1-0000 re=true")
	subs := fm.callsOf(scheduler.Call_SUBSCRIBE)
	if len(subs) != 2 {
		t.Fatalf("%d SUBSCRIBEs, want 2", len(subs))
	}
	if id := subs[1].Call.GetFrameworkID().GetValue(); id != "m1-0000" || subs[1].Call.GetSubscribe().GetFrameworkInfo().GetID().GetValue() != "m1-0000" {
		t.Errorf("re-SUBSCRIBE framework id %q / info %v, want m1-0000 in both", id, subs[1].Call.GetSubscribe().GetFrameworkInfo().GetID())
	}
	// Calls go to the new stream.
	if err := c.Kill(mesos.TaskID{Value: "t1"}, nil); err != nil {
		t.Fatal(err)
	}
	if k := fm.callsOf(scheduler.Call_KILL)[0]; k.Stream != "stream-2" || k.Call.GetKill().TaskID.Value != "t1" {
		t.Errorf("KILL %+v on %q", k.Call.GetKill(), k.Stream)
	}
	// A second implicit reconciliation followed the re-subscription.
	fm.waitCalls(scheduler.Call_RECONCILE, 2)
}

func TestResubscribeBackoff(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	start(t, testConfig(fm, clock), rec)
	t0 := clock.Now()
	fm.setSubscribeStatus(503, 503, 503, 503, 503)
	fm.dropStream()
	rec.wait(t, "disconnected")
	// Truncated exponential: 1, 2, 4, then capped at 5, with no jitter from the zero source.
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second} {
		advanceWhenWaiting(t, clock, d)
		fm.waitCalls(scheduler.Call_SUBSCRIBE, i+2)
	}
	rec.wait(t, "subscribed m1-0000 re=true")
	var offsets []time.Duration
	for _, s := range fm.callsOf(scheduler.Call_SUBSCRIBE)[1:] {
		offsets = append(offsets, s.At.Sub(t0))
	}
	want := []time.Duration{1 * time.Second, 3 * time.Second, 7 * time.Second, 12 * time.Second, 17 * time.Second, 22 * time.Second}
	if !reflect.DeepEqual(offsets, want) {
		t.Errorf("SUBSCRIBE times %v, want %v", offsets, want)
	}
	// A successful subscription resets the backoff.
	fm.dropStream()
	advanceWhenWaiting(t, clock, time.Second)
	fm.waitCalls(scheduler.Call_SUBSCRIBE, 8)
}

func TestBackoffJitter(t *testing.T) {
	b := NewBackoff(time.Second, 8*time.Second, 0.5, randFrom(^uint64(0)))
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next().Round(time.Millisecond))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("max jitter delays %v, want %v", got, want)
	}
	b.Reset()
	if d := b.Next().Round(time.Millisecond); d != 500*time.Millisecond {
		t.Errorf("after Reset %v", d)
	}
}

func TestSubscriptionLost403(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	c := start(t, testConfig(fm, clock), rec)
	fm.setCallStatus(scheduler.Call_DECLINE, http.StatusForbidden)
	err := c.Decline([]mesos.OfferID{{Value: "o1"}}, DeclineUnfit)
	if err == nil {
		t.Fatal("DECLINE answered 403 succeeded")
	}
	rec.wait(t, "disconnected")
	advanceWhenWaiting(t, clock, time.Second)
	rec.wait(t, "subscribed m1-0000 re=true")
	if err := c.Decline([]mesos.OfferID{{Value: "o2"}}, DeclineUnfit); err != nil {
		t.Fatalf("DECLINE after re-subscription: %v", err)
	}
}

func TestNotSubscribedCallsFail(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	c := start(t, testConfig(fm, clock), rec)
	fm.setSubscribeStatus(503)
	fm.dropStream()
	rec.wait(t, "disconnected")
	if err := c.Kill(mesos.TaskID{Value: "t"}, nil); !errors.Is(err, ErrNotSubscribed) {
		t.Errorf("Kill while disconnected = %v, want ErrNotSubscribed", err)
	}
}

func TestExplicitReconciliationWithBackoff(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.ReconcileMinDelay = 3 * time.Second
	cfg.ReconcileMaxDelay = 10 * time.Second
	rec := &recorder{}
	c := start(t, cfg, rec)
	if err := c.Launch([]mesos.OfferID{{Value: "o1"}}, []mesos.TaskInfo{
		{Name: "a", TaskID: mesos.TaskID{Value: "ta"}, AgentID: mesos.AgentID{Value: "a1"}},
		{Name: "b", TaskID: mesos.TaskID{Value: "tb"}, AgentID: mesos.AgentID{Value: "a2"}},
	}); err != nil {
		t.Fatal(err)
	}
	acc := fm.callsOf(scheduler.Call_ACCEPT)[0].Call.GetAccept()
	if len(acc.Operations) != 1 || acc.Operations[0].Type != mesos.Offer_Operation_LAUNCH || acc.Filters != nil {
		t.Errorf("ACCEPT %+v", acc)
	}
	fm.send(update("tb", "a2", mesos.TASK_FINISHED, nil)) // tb is done: not reconciled
	rec.wait(t, "update tb TASK_FINISHED")

	// A re-subscription reconciles implicitly and explicitly.
	fm.dropStream()
	advanceWhenWaiting(t, clock, time.Second)
	rec.wait(t, "subscribed m1-0000 re=true")
	explicit := func() []recorded {
		var out []recorded
		for _, r := range fm.callsOf(scheduler.Call_RECONCILE) {
			if len(r.Call.GetReconcile().GetTasks()) > 0 {
				out = append(out, r)
			}
		}
		return out
	}
	eventually(t, "explicit RECONCILE", func() bool { return len(explicit()) == 1 })
	tasks := explicit()[0].Call.GetReconcile().GetTasks()
	if len(tasks) != 1 || tasks[0].TaskID.Value != "ta" || tasks[0].GetAgentID().GetValue() != "a1" {
		t.Errorf("explicit reconciliation of %+v, want ta on a1", tasks)
	}
	t1 := clock.Now()
	// No answer: asked again after 3 s, then 6 s, then 10 s (capped).
	for i, d := range []time.Duration{3 * time.Second, 6 * time.Second, 10 * time.Second} {
		advanceWhenWaiting(t, clock, d)
		eventually(t, "explicit RECONCILE retry", func() bool { return len(explicit()) == i+2 })
	}
	if got := explicit()[3].At.Sub(t1); got != 19*time.Second {
		t.Errorf("fourth explicit reconciliation at +%s, want +19s", got)
	}
	// The master answers: no more retries.
	fm.send(update("ta", "a1", mesos.TASK_RUNNING, nil))
	rec.wait(t, "update ta TASK_RUNNING")
	clock.Advance(10 * time.Second)
	controlBarrier(t, c, fm)
	clock.Advance(time.Minute)
	controlBarrier(t, c, fm)
	if n := len(explicit()); n != 4 {
		t.Errorf("%d explicit reconciliations, want 4", n)
	}
}

func TestReconcileCallAndPeriodic(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.DisablePeriodicRec = false
	cfg.ReconcileInterval = 11 * time.Minute
	c := start(t, cfg, &recorder{})
	fm.waitCalls(scheduler.Call_RECONCILE, 1)
	if err := c.Reconcile(); err != nil {
		t.Fatal(err)
	}
	fm.waitCalls(scheduler.Call_RECONCILE, 2)
	if err := c.Reconcile(ReconcileTask{TaskID: mesos.TaskID{Value: "old"}}); err != nil {
		t.Fatal(err)
	}
	r := fm.waitCalls(scheduler.Call_RECONCILE, 3)[2]
	if ts := r.Call.GetReconcile().GetTasks(); len(ts) != 1 || ts[0].TaskID.Value != "old" || ts[0].AgentID != nil {
		t.Errorf("explicit RECONCILE %+v", ts)
	}
	advanceWhenWaiting(t, clock, 11*time.Minute)
	// Periodic: implicit plus the still-unanswered task explicitly.
	rs := fm.waitCalls(scheduler.Call_RECONCILE, 5)
	if len(rs[3].Call.GetReconcile().GetTasks()) != 0 || len(rs[4].Call.GetReconcile().GetTasks()) != 1 {
		t.Errorf("periodic reconciliation calls %+v, %+v", rs[3].Call.GetReconcile(), rs[4].Call.GetReconcile())
	}
}

func TestRescindedOfferAcceptYieldsLostUpdate(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.onCall = func(fm *fakeMaster, r recorded) {
		if r.Call.Type != scheduler.Call_ACCEPT {
			return
		}
		for _, op := range r.Call.GetAccept().Operations {
			for _, ti := range op.GetLaunch().GetTaskInfos() {
				e := update(ti.TaskID.Value, ti.AgentID.Value, mesos.TASK_LOST, nil)
				e.Update.Status.Reason = mesos.REASON_INVALID_OFFERS.Enum()
				fm.send(e)
			}
		}
	}
	rec := &recorder{}
	rec.onOffers = func(o []mesos.Offer) {}
	c := start(t, testConfig(fm, clock), rec)
	fm.send(offersEvent("o1"))
	fm.send(&scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: "o1"}}})
	rec.wait(t, "rescinded o1")
	err := c.Accept([]mesos.OfferID{{Value: "o1"}}, []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{
		TaskInfos: []mesos.TaskInfo{{Name: "x", TaskID: mesos.TaskID{Value: "t1"}, AgentID: mesos.AgentID{Value: "a1"}}}}}}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f := fm.callsOf(scheduler.Call_ACCEPT)[0].Call.GetAccept().GetFilters(); f.GetRefuseSeconds() != 10 {
		t.Errorf("ACCEPT filters %v, want refuse 10", f)
	}
	rec.wait(t, "update t1 TASK_LOST")
	rec.mu.Lock()
	st := rec.status[0]
	rec.mu.Unlock()
	if st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Errorf("reason %s", st.GetReason())
	}
	// Updates are acknowledged in order: a later one's ACK comes after
	// any of t1's.
	fm.send(update("t2", "a1", mesos.TASK_RUNNING, []byte("0123456789abcdef")))
	fm.waitCalls(scheduler.Call_ACKNOWLEDGE, 1)
	if acks := fm.callsOf(scheduler.Call_ACKNOWLEDGE); len(acks) != 1 || acks[0].Call.GetAcknowledge().TaskID.Value != "t2" {
		t.Errorf("ACKs %v, want only t2's: none of the uuid-less update", acks)
	}
}

func TestKillShutdownMessageLaunchGroup(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	c := start(t, testConfig(fm, clock), &recorder{})
	agent := mesos.AgentID{Value: "a1"}
	if err := c.Kill(mesos.TaskID{Value: "t1"}, &agent); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(mesos.ExecutorID{Value: "e1"}, agent); err != nil {
		t.Fatal(err)
	}
	if err := c.Message(agent, mesos.ExecutorID{Value: "e1"}, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	exec := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "e1"}}
	if err := c.LaunchGroup([]mesos.OfferID{{Value: "o1"}}, exec, []mesos.TaskInfo{{Name: "g", TaskID: mesos.TaskID{Value: "g1"}, AgentID: agent}}); err != nil {
		t.Fatal(err)
	}
	k := fm.callsOf(scheduler.Call_KILL)[0].Call.GetKill()
	s := fm.callsOf(scheduler.Call_SHUTDOWN)[0].Call.GetShutdown()
	m := fm.callsOf(scheduler.Call_MESSAGE)[0].Call.GetMessage()
	a := fm.callsOf(scheduler.Call_ACCEPT)[0].Call.GetAccept()
	if k.TaskID.Value != "t1" || k.GetAgentID().GetValue() != "a1" || s.ExecutorID.Value != "e1" || s.AgentID.Value != "a1" ||
		string(m.Data) != "ping" || m.ExecutorID.Value != "e1" ||
		a.Operations[0].Type != mesos.Offer_Operation_LAUNCH_GROUP || a.Operations[0].GetLaunchGroup().TaskGroup.Tasks[0].TaskID.Value != "g1" {
		t.Errorf("calls: kill %+v shutdown %+v message %+v accept %+v", k, s, m, a)
	}
}

func TestStopTeardown(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	c, err := Start(context.Background(), testConfig(fm, clock), rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	td := fm.callsOf(scheduler.Call_TEARDOWN)
	if len(td) != 1 || td[0].Call.GetFrameworkID().GetValue() != "m1-0000" || td[0].Stream != "stream-1" {
		t.Errorf("TEARDOWN calls %+v", td)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if rec.has("disconnected") {
		t.Error("Disconnected reported for a deliberate Stop")
	}
	if err := c.Stop(context.Background(), true); !errors.Is(err, ErrStopped) {
		t.Errorf("second Stop = %v", err)
	}
}

func TestStopKeepsFrameworkForFailover(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.FailoverTimeout = time.Hour
	c, err := Start(context.Background(), cfg, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if n := len(fm.callsOf(scheduler.Call_TEARDOWN)); n != 0 {
		t.Errorf("%d TEARDOWN calls without teardown", n)
	}
	// A new driver fails over to the same framework.
	cfg.FrameworkID = c.FrameworkID()
	rec := &recorder{}
	c2 := start(t, cfg, rec)
	subs := fm.callsOf(scheduler.Call_SUBSCRIBE)
	if got := subs[len(subs)-1].Call.GetFrameworkID().GetValue(); got != "m1-0000" || c2.FrameworkID() != "m1-0000" {
		t.Errorf("failover SUBSCRIBE framework id %q", got)
	}
	if !rec.has("subscribed m1-0000 re=false") {
		t.Errorf("events %v", rec.events)
	}
}

func TestAuthenticationRefused(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.setSubscribeStatus(http.StatusUnauthorized)
	cfg := testConfig(fm, clock)
	cfg.Principal, cfg.Secret = "flint", "wrong"
	rec := &recorder{}
	_, err := Start(context.Background(), cfg, rec)
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), `"flint"`) {
		t.Fatalf("Start = %v, want ErrAuth naming the principal", err)
	}
	if !rec.has("aborted") {
		t.Error("Aborted not reported")
	}
}

func TestErrorEventAborts(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.subscribeError = "Framework has been removed"
	_, err := Start(context.Background(), testConfig(fm, clock), &recorder{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "Framework has been removed") {
		t.Fatalf("Start = %v, want ErrRefused with the master's message", err)
	}
}

func TestErrorEventAfterSubscribeAbortsConn(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	c := start(t, testConfig(fm, clock), rec)
	fm.send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "Framework failed over"}})
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Conn did not stop after an ERROR event")
	}
	if !errors.Is(c.Err(), ErrRefused) || !rec.has("aborted") {
		t.Errorf("Err() = %v, events %v", c.Err(), rec.events)
	}
}

func TestUnreachableMasterStartTimeout(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	fm.close() // nothing listens any more
	cfg.StartTimeout = 5 * time.Second
	cfg.MaxBackoff = time.Second // every retry 1 s later
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	cfg.Logger = log
	done := make(chan error, 1)
	go func() {
		_, err := Start(context.Background(), cfg, &recorder{})
		done <- err
	}()
	advanceWhenWaiting(t, clock, time.Second)
	advanceWhenWaiting(t, clock, time.Second) // a second failed attempt
	advanceWhenWaiting(t, clock, time.Second) // a third
	clock.Advance(2 * time.Second)
	err := <-done
	want := "cannot reach the Mesos master " + cfg.Master + " within 5s (connection refused); check the master's address, or raise flint.mesos.connectTimeout"
	var ste *StartTimeoutError
	if !errors.Is(err, ErrStartTimeout) || !errors.As(err, &ste) || ste.UserMessage() != want || err.Error() != "mesosconn: "+want {
		t.Fatalf("Start = %v, want ErrStartTimeout saying %q", err, want)
	}
	// Never subscribed: one warning that says what is going on, no "lost";
	// the later attempts at debug level.
	var warnings []string
	debug := 0
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			warnings = append(warnings, e.Message)
		} else if strings.Contains(e.Message, "still unreachable") {
			debug++
		}
	}
	if debug < 2 {
		t.Errorf("%d later attempts logged at debug level, want at least 2", debug)
	}
	wantWarn := "mesosconn: cannot reach the Mesos master at " + fm.addr() + " (connection refused); retrying for 5s"
	if len(warnings) != 1 || warnings[0] != wantWarn {
		t.Errorf("warnings %q, want only %q", warnings, wantWarn)
	}
}

func TestLeaderChangeViaDetector(t *testing.T) {
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	m2 := newFakeMaster(t, clock, "m2")
	det := newLeaderDetector()
	cfg := testConfig(m1, clock)
	cfg.Master, cfg.Detector = "", det
	rec := &recorder{}
	det.set("m1", m1.addr())
	c := start(t, cfg, rec)
	if c.Master().ID != "m1" {
		t.Fatalf("master %q", c.Master().ID)
	}
	det.set("m2", m2.addr())
	rec.wait(t, "disconnected")
	rec.wait(t, "subscribed m1-0000 re=true")
	s := m2.waitCalls(scheduler.Call_SUBSCRIBE, 1)[0]
	if s.Call.GetFrameworkID().GetValue() != "m1-0000" {
		t.Errorf("SUBSCRIBE to the new leader with framework id %q", s.Call.GetFrameworkID().GetValue())
	}
	rec.mu.Lock()
	err := rec.errs[0]
	rec.mu.Unlock()
	if !errors.Is(err, ErrLeaderChanged) {
		t.Errorf("Disconnected(%v), want ErrLeaderChanged", err)
	}
	if c.Master().ID != "m2" {
		t.Errorf("master %q after the change", c.Master().ID)
	}
	if err := c.Kill(mesos.TaskID{Value: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(m2.callsOf(scheduler.Call_KILL)) != 1 || len(m1.callsOf(scheduler.Call_KILL)) != 0 {
		t.Error("KILL did not go to the new leader")
	}
}

// A ZooKeeper-backed master restarts at the same address under a new id;
// the driver's re-SUBSCRIBE reaches it while the detector still names the
// dead predecessor. When the detector then reports the new id, the fresh
// subscription is kept: it is with that very master (the issue: "the
// leading master changed: localhost:5050 → "localhost:5050"" closed it).
func TestLeaderChangeToTheMasterAlreadySubscribedKeepsTheStream(t *testing.T) {
	clock := newFakeClock()
	m := newFakeMaster(t, clock, "old")
	det := newLeaderDetector()
	cfg := testConfig(m, clock)
	cfg.Master, cfg.Detector = "", det
	rec := &recorder{}
	det.set("old", m.addr())
	c := start(t, cfg, rec)
	m.restartAs("new")
	rec.wait(t, "disconnected")
	advanceWhenWaiting(t, clock, time.Second) // the re-subscription backoff
	rec.wait(t, "subscribed old-0000 re=true")
	if c.Master().ID != "new" {
		t.Fatalf("re-subscribed to master %q, want new", c.Master().ID)
	}
	det.set("new", m.addr())
	eventually(t, "the Conn to see the new leader", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.leader.ID == "new" && len(c.leaderCh) == 0
	})
	// The stream still delivers: the change was judged and the stream kept.
	m.send(offersEvent("after-change"))
	eventually(t, "the offer after the leader change", func() bool { return rec.has("offers 1") })
	if n := rec.count("disconnected"); n != 1 || len(m.callsOf(scheduler.Call_SUBSCRIBE)) != 2 {
		t.Fatalf("%d disconnections, %d SUBSCRIBEs; want the one from the restart and no more", n, len(m.callsOf(scheduler.Call_SUBSCRIBE)))
	}
}

// A session judges leader changes by the master that answered SUBSCRIBED.
func TestSessionFollows(t *testing.T) {
	s := &session{leader: detector.Leader{ID: "old", Addr: "h:5050"}}
	if !s.follows(detector.Leader{ID: "other", Addr: "x:1"}) {
		t.Fatal("a change before SUBSCRIBED was answered is judged then, not now")
	}
	s.subscribedTo("new")
	for _, tc := range []struct {
		now  detector.Leader
		want bool
	}{
		{detector.Leader{ID: "old", Addr: "h:5050"}, true},  // the detector lags behind
		{detector.Leader{ID: "new", Addr: "h:5050"}, true},  // it caught up
		{detector.Leader{ID: "new", Addr: "h2:5050"}, true}, // same master, another advertised address
		{detector.Leader{ID: "third", Addr: "h:5050"}, false},
		{detector.Leader{}, false}, // nobody leads
	} {
		if got := s.follows(tc.now); got != tc.want {
			t.Errorf("follows(%+v) = %v, want %v", tc.now, got, tc.want)
		}
	}
}

// An update that arrives while the driver tears the framework down cannot
// be acknowledged (the master forgot the framework, or the call is
// cancelled): that is expected and silent, unlike a failed ack in a live
// session.
func TestAckRacingTeardownIsSilent(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	cfg.Logger = log
	rec := &recorder{}
	inUpdate, release := make(chan struct{}), make(chan struct{})
	rec.onUpdate = func(mesos.TaskStatus) {
		close(inUpdate)
		<-release
	}
	c, err := Start(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	fm.setCallStatus(scheduler.Call_ACKNOWLEDGE, http.StatusBadRequest) // "Framework cannot be found"
	fm.send(update("t1", "a1", mesos.TASK_FINISHED, []byte("u1")))
	<-inUpdate
	stopped := make(chan error, 1)
	go func() { stopped <- c.Stop(context.Background(), true) }()
	fm.waitCalls(scheduler.Call_TEARDOWN, 1)
	close(release) // the update's ack now races the teardown
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	acked := false
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Errorf("logged at %s: %s", e.Level, e.Message)
		}
		acked = acked || strings.Contains(e.Message, "acknowledging TASK_FINISHED of task t1 while stopping")
	}
	if !acked {
		t.Error("the ack was not attempted (or not logged at debug level)")
	}
}
