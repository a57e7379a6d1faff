package mesosconn

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flint-mesos/flint/framework/drivermetrics"
)

func TestConnCountsOffersDeclinesAndResubscriptions(t *testing.T) {
	offers0 := testutil.ToFloat64(drivermetrics.OffersReceived)
	unmet0 := testutil.ToFloat64(drivermetrics.OffersDeclined.WithLabelValues("unmet_constraints"))
	resub0 := testutil.ToFloat64(drivermetrics.Resubscriptions)

	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.heartbeat = 2
	cfg := testConfig(fm, clock)
	cfg.MissedHeartbeats = 3
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

	if d := testutil.ToFloat64(drivermetrics.OffersReceived) - offers0; d != 3 {
		t.Errorf("offers received += %v, want 3", d)
	}
	if d := testutil.ToFloat64(drivermetrics.OffersDeclined.WithLabelValues("unmet_constraints")) - unmet0; d != 2 {
		t.Errorf("offers declined for unmet constraints += %v, want 2", d)
	}
	if d := testutil.ToFloat64(drivermetrics.Resubscriptions) - resub0; d != 1 {
		t.Errorf("resubscriptions += %v, want 1", d)
	}
}
