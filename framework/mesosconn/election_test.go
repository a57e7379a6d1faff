package mesosconn

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

// Apache Mesos' answer to every scheduler call while a newly elected
// master recovers its registry (src/master/http.cpp).
const notRecovered = "Master has not finished recovery"

func subscribeOffsets(fm *fakeMaster, t0 time.Time) []time.Duration {
	var out []time.Duration
	for _, s := range fm.callsOf(scheduler.Call_SUBSCRIBE) {
		out = append(out, s.At.Sub(t0))
	}
	return out
}

// A leader still recovering answers 503 "Master has not finished
// recovery": it is asked again every RecoveryRetry (less jitter; none
// here), not after a growing backoff, so the driver re-subscribes within
// RecoveryRetry of the recovery's end.
func TestRecoveringLeaderIsAskedAgainPromptly(t *testing.T) {
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	m2 := newFakeMaster(t, clock, "m2")
	det := newLeaderDetector()
	cfg := testConfig(m1, clock)
	cfg.Master, cfg.Detector = "", det
	cfg.MaxBackoff = 30 * time.Second
	// Not a divisor of the 1 s backoff timer the leader change leaves
	// armed, so that waiting for a 300 ms timer finds the retry's.
	cfg.RecoveryRetry = 300 * time.Millisecond
	rec := &recorder{}
	det.set("m1", m1.addr())
	start(t, cfg, rec)
	m2.setSubscribeAnswer(4, http.StatusServiceUnavailable, notRecovered)
	t0 := clock.Now()
	det.set("m2", m2.addr())
	rec.wait(t, "disconnected")
	for i := range 4 {
		m2.waitCalls(scheduler.Call_SUBSCRIBE, i+1)
		advanceWhenWaiting(t, clock, 300*time.Millisecond)
	}
	rec.wait(t, "subscribed m1-0000 re=true")
	want := []time.Duration{0, 300 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond, 1200 * time.Millisecond}
	if got := subscribeOffsets(m2, t0); !reflect.DeepEqual(got, want) {
		t.Errorf("SUBSCRIBEs to the recovering leader at %v, want %v", got, want)
	}
}

// Jitter spreads the prompt retries: with the largest draw the delay is
// RecoveryRetry × (1 − BackoffJitter).
func TestRecoveryRetryJitter(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	cfg := testConfig(fm, clock)
	cfg.Rand = randFrom(^uint64(0))
	cfg.BackoffJitter = 0.5
	cfg.RecoveryRetry = time.Second
	fm.setSubscribeAnswer(1, http.StatusServiceUnavailable, notRecovered)
	started := make(chan error, 1)
	go func() {
		c, err := Start(context.Background(), cfg, &recorder{})
		if err == nil {
			t.Cleanup(func() { _ = c.Stop(context.Background(), false) })
		}
		started <- err
	}()
	fm.waitCalls(scheduler.Call_SUBSCRIBE, 1)
	// 1 s less 0.5 × the largest Float64 draw (1 − 2⁻⁵³) of it: 500 ms
	// within a nanosecond.
	var d time.Duration
	eventually(t, "the jittered recovery retry", func() bool {
		for _, at := range clock.Pending() {
			if d = at.Sub(clock.Now()); d.Round(time.Millisecond) == 500*time.Millisecond {
				return true
			}
		}
		return false
	})
	clock.Advance(d)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
}

// Another 503 (a master with no leader to redirect to) still backs off.
func TestOther503BacksOff(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	start(t, testConfig(fm, clock), rec)
	fm.setSubscribeAnswer(2, http.StatusServiceUnavailable, "No leader elected")
	t0 := clock.Now()
	fm.dropStream()
	rec.wait(t, "disconnected")
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		advanceWhenWaiting(t, clock, d)
		fm.waitCalls(scheduler.Call_SUBSCRIBE, i+2)
	}
	rec.wait(t, "subscribed m1-0000 re=true")
	want := []time.Duration{time.Second, 3 * time.Second, 7 * time.Second}
	if got := subscribeOffsets(fm, t0)[1:]; !reflect.DeepEqual(got, want) {
		t.Errorf("SUBSCRIBE times %v, want %v", got, want)
	}
}

// Failures with one leader do not slow down the next one: a leader change
// resets the backoff, so the new leader's first refusal waits MinBackoff,
// not the delay the old leader's refusals grew.
func TestLeaderChangeResetsBackoff(t *testing.T) {
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	m2 := newFakeMaster(t, clock, "m2")
	det := newLeaderDetector()
	cfg := testConfig(m1, clock)
	cfg.Master, cfg.Detector = "", det
	cfg.MaxBackoff = 30 * time.Second
	rec := &recorder{}
	det.set("m1", m1.addr())
	start(t, cfg, rec)
	m1.setSubscribeStatus(500, 500, 500, 500)
	m1.dropStream()
	rec.wait(t, "disconnected")
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		advanceWhenWaiting(t, clock, d)
		m1.waitCalls(scheduler.Call_SUBSCRIBE, i+2)
	}
	eventually(t, "the 8 s backoff", func() bool { return clock.HasPending(8 * time.Second) })
	m2.setSubscribeStatus(500)
	t0 := clock.Now()
	det.set("m2", m2.addr())
	m2.waitCalls(scheduler.Call_SUBSCRIBE, 1) // at once
	advanceWhenWaiting(t, clock, time.Second)
	rec.wait(t, "subscribed m1-0000 re=true")
	want := []time.Duration{0, time.Second}
	if got := subscribeOffsets(m2, t0); !reflect.DeepEqual(got, want) {
		t.Errorf("SUBSCRIBEs to the new leader at %v, want %v", got, want)
	}
}

func logCapture() (logrus.FieldLogger, *logtest.Hook) {
	l, hook := logtest.NewNullLogger()
	l.SetLevel(logrus.DebugLevel)
	return l, hook
}

// lingerWarnings are the warnings about a framework not torn down.
func lingerWarnings(hook *logtest.Hook) []string {
	var out []string
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel && strings.Contains(e.Message, "not torn down") {
			out = append(out, e.Message)
		}
	}
	return out
}

// stopAsync runs Stop(ctx, true) and returns its outcome.
func stopAsync(c *Conn) <-chan error {
	out := make(chan error, 1)
	go func() { out <- c.Stop(context.Background(), true) }()
	return out
}

// A driver stops while no master leads (an election): Stop waits for the
// new leader, re-subscribes with the framework id through its recovery,
// sends TEARDOWN there and returns once it was accepted; the Handler hears
// nothing of the subscription made for it.
func TestStopDuringElectionTearsDownOnTheNewLeader(t *testing.T) {
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	m2 := newFakeMaster(t, clock, "m2")
	det := newLeaderDetector()
	cfg := testConfig(m1, clock)
	cfg.Master, cfg.Detector = "", det
	log, hook := logCapture()
	cfg.Logger = log
	rec := &recorder{}
	det.set("m1", m1.addr())
	c, err := Start(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	det.set("", "") // m1 dies; no leader yet
	rec.wait(t, "disconnected")
	stopped := stopAsync(c)
	eventually(t, "Stop waiting for a master", func() bool { return clock.HasPending(20 * time.Second) })
	m2.setSubscribeAnswer(1, http.StatusServiceUnavailable, notRecovered)
	det.set("m2", m2.addr())
	m2.waitCalls(scheduler.Call_SUBSCRIBE, 1)
	advanceWhenWaiting(t, clock, 500*time.Millisecond)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return after the new leader took TEARDOWN")
	}
	td := m2.callsOf(scheduler.Call_TEARDOWN)
	if len(td) != 1 || td[0].Call.GetFrameworkID().GetValue() != "m1-0000" || td[0].Stream != "stream-1" {
		t.Fatalf("TEARDOWN on the new leader: %+v", td)
	}
	if sub := m2.callsOf(scheduler.Call_SUBSCRIBE)[1]; sub.Call.GetFrameworkID().GetValue() != "m1-0000" {
		t.Errorf("SUBSCRIBE to the new leader as %q, want m1-0000", sub.Call.GetFrameworkID().GetValue())
	}
	if n := len(m1.callsOf(scheduler.Call_TEARDOWN)); n != 0 {
		t.Errorf("%d TEARDOWNs to the dead master", n)
	}
	rec.mu.Lock()
	events := append([]string(nil), rec.events...)
	rec.mu.Unlock()
	if want := []string{"subscribed m1-0000 re=false", "disconnected"}; !reflect.DeepEqual(events, want) {
		t.Errorf("Handler events %q, want %q (none for Stop's own subscription)", events, want)
	}
	if w := lingerWarnings(hook); len(w) != 0 {
		t.Errorf("warnings %q for a teardown that succeeded", w)
	}
}

// No master comes within TeardownTimeout: Stop gives up with one warning
// that says the framework may linger and how to remove it, and returns a
// TeardownError.
func TestStopWarnsWhenNoMasterTakesTheTeardown(t *testing.T) {
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	det := newLeaderDetector()
	cfg := testConfig(m1, clock)
	cfg.Master, cfg.Detector = "", det
	cfg.TeardownTimeout = 7 * time.Second
	log, hook := logCapture()
	cfg.Logger = log
	rec := &recorder{}
	det.set("m1", m1.addr())
	c, err := Start(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	det.set("", "")
	rec.wait(t, "disconnected")
	stopped := stopAsync(c)
	advanceWhenWaiting(t, clock, 7*time.Second)
	err = <-stopped
	var te *TeardownError
	if !errors.As(err, &te) || !errors.Is(err, ErrTeardownTimeout) || !errors.Is(err, ErrNotSubscribed) {
		t.Fatalf("Stop = %v, want a TeardownError wrapping ErrTeardownTimeout and the last cause", err)
	}
	if te.FrameworkID != "m1-0000" || te.After != 7*time.Second || te.Master != "http://"+m1.addr() {
		t.Errorf("TeardownError %+v", te)
	}
	w := lingerWarnings(hook)
	if len(w) != 1 {
		t.Fatalf("warnings about the framework %q, want exactly one", w)
	}
	for _, part := range []string{
		"framework m1-0000 was not torn down",
		"within 7s (flint.mesos.teardownTimeout",
		"may linger on the master",
		"MESOS-4659",
		"curl -X POST http://" + m1.addr() + "/master/teardown -d frameworkId=m1-0000",
	} {
		if !strings.Contains(w[0], part) {
			t.Errorf("warning %q lacks %q", w[0], part)
		}
	}
	if n := len(m1.callsOf(scheduler.Call_TEARDOWN)); n != 0 {
		t.Errorf("%d TEARDOWN calls with no subscription", n)
	}
}

// A TEARDOWN that fails on a live subscription is sent again.
func TestStopRetriesAFailedTeardown(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	c, err := Start(context.Background(), testConfig(fm, clock), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	fm.setCallStatus(scheduler.Call_TEARDOWN, http.StatusInternalServerError)
	stopped := stopAsync(c)
	fm.waitCalls(scheduler.Call_TEARDOWN, 1)
	advanceWhenWaiting(t, clock, time.Second)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if n := len(fm.callsOf(scheduler.Call_TEARDOWN)); n != 2 {
		t.Errorf("%d TEARDOWN calls, want 2", n)
	}
}

// A framework the master refused has nothing to tear down.
func TestStopAfterRefusalHasNothingToTearDown(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	rec := &recorder{}
	c, err := Start(context.Background(), testConfig(fm, clock), rec)
	if err != nil {
		t.Fatal(err)
	}
	fm.send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "Framework has been removed"}})
	rec.wait(t, "aborted")
	if err := c.Stop(context.Background(), true); !errors.Is(err, ErrNotSubscribed) {
		t.Errorf("Stop after the refusal = %v, want ErrNotSubscribed", err)
	}
}
