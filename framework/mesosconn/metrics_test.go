package mesosconn

import (
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// countingMetrics is a Metrics that counts in plain Go.
type countingMetrics struct {
	mu       sync.Mutex
	offers   int
	declined map[string]int
	resubs   int
}

func (m *countingMetrics) OffersReceived(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offers += n
}

func (m *countingMetrics) OffersDeclined(reason string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.declined[reason] += n
}

func (m *countingMetrics) Resubscribed() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resubs++
}

// The connection counts into the Metrics it was given (no process-wide
// counter): offers received, offers declined by reason, resubscriptions.
func TestConnCountsOffersDeclinesAndResubscriptions(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.heartbeat = 2
	cfg := testConfig(fm, clock)
	cfg.MissedHeartbeats = 3
	m := &countingMetrics{declined: map[string]int{}}
	cfg.Metrics = m
	rec := &recorder{}
	c := start(t, cfg, rec)
	fm.send(offersEvent("o1", "o2", "o3"))
	rec.wait(t, "offers 3")
	if err := c.Decline([]mesos.OfferID{{Value: "o1"}, {Value: "o2"}}, DeclineUnmetConstraint); err != nil {
		t.Fatal(err)
	}
	advanceWhenWaiting(t, clock, 6*time.Second) // heartbeat silence drops the stream
	rec.wait(t, "disconnected")
	advanceWhenWaiting(t, clock, time.Second) // backoff
	rec.wait(t, "subscribed m1-0000 re=true")

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.offers != 3 {
		t.Errorf("offers received %d, want 3", m.offers)
	}
	if len(m.declined) != 1 || m.declined["unmet_constraints"] != 2 {
		t.Errorf("offers declined %v, want 2 for unmet_constraints", m.declined)
	}
	if m.resubs != 1 {
		t.Errorf("resubscriptions %d, want 1", m.resubs)
	}
}
