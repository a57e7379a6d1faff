package master_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

func getMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: %d %v", url, res.StatusCode, res.Header)
	}
	var m map[string]float64
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkMetrics compares the named values of /metrics/snapshot (both
// paths) with want.
func checkMetrics(t *testing.T, base, step string, want map[string]float64) {
	t.Helper()
	for _, path := range []string{"/metrics/snapshot", "/master/metrics/snapshot"} {
		got := getMetrics(t, base+path)
		for k, v := range want {
			g, ok := got[k]
			if !ok {
				t.Errorf("%s: %s: %s missing", step, path, k)
			} else if g != v {
				t.Errorf("%s: %s: %s = %v, want %v", step, path, k, g, v)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// Counters and gauges follow a task through launch, RUNNING, FINISHED
// and its acknowledgement, plus an invalid task and a rescinded offer.
func TestMetricsSnapshot(t *testing.T) {
	s, clk := newClockServer(t, 2, func(c *master.Config) { c.OfferTimeout = time.Minute })
	ag := s.Fakes[0]
	checkMetrics(t, s.URL, "start", map[string]float64{
		"master/elected": 1, "master/uptime_secs": 0,
		"master/frameworks_active": 0, "master/frameworks_connected": 0,
		"master/slaves_active": 2, "master/slaves_connected": 2, "master/slaves_inactive": 0,
		"master/slave_registrations": 2, "master/slave_reregistrations": 0,
		"master/outstanding_offers": 0, "master/offers_sent": 0,
		"master/tasks_staging": 0, "master/tasks_running": 0, "master/tasks_finished": 0, "master/tasks_error": 0,
		"master/cpus_total": 8, "master/cpus_used": 0, "master/mem_total": 8192,
	})
	c := subscribe(t, s, allCodecs[0], frameworkInfo("metrics"))
	clk.Advance(tickAlloc)
	var o mesos.Offer
	for _, x := range c.next(scheduler.Event_OFFERS).Offers.Offers {
		if x.AgentID.Value == ag.ID() {
			o = x
		}
	}
	if o.ID.Value == "" {
		t.Fatalf("no offer for agent %s in the first round", ag.ID())
	}
	checkMetrics(t, s.URL, "subscribed", map[string]float64{
		"master/uptime_secs": 1, "master/frameworks_active": 1, "master/frameworks_connected": 1,
		"master/frameworks_registered": 1, "master/offers_sent": 2, "master/outstanding_offers": 2,
		"master/cpus_used": 0, // offered is not used
	})
	ok, bad := commandTask("t", o, 1, 64), commandTask("bad", o, 100, 64)
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(ok, bad)}.WithOffers(o.ID)).With(calls.RefuseSeconds(3600)))
	if st := c.nextUpdate("bad"); st.GetState() != mesos.TASK_ERROR {
		t.Fatalf("bad: %v", st)
	}
	if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil }); err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, s.URL, "launched", map[string]float64{
		"master/tasks_staging": 1, "master/tasks_running": 0, "master/tasks_launched": 1, "master/tasks_active": 1,
		"master/tasks_error": 1, "master/task_error/source_master/reason_task_invalid": 1,
		"master/invalid_tasks": 1, "master/outstanding_offers": 1, "master/messages_accept": 1,
		"master/cpus_used": 1, "master/mem_used": 64,
	})
	u, err := ag.SendStatus(c.id, "t", mesos.TASK_RUNNING)
	if err != nil {
		t.Fatal(err)
	}
	c.nextUpdate("t")
	c.mustCall(calls.Acknowledge(ag.ID(), "t", u))
	checkMetrics(t, s.URL, "running", map[string]float64{
		"master/tasks_staging": 0, "master/tasks_running": 1, "master/tasks_finished": 0,
		"master/valid_status_updates": 1, "master/valid_status_update_acknowledgements": 1,
	})
	u, _ = ag.SendStatus(c.id, "t", mesos.TASK_FINISHED)
	c.nextUpdate("t")
	// Terminal but not yet acknowledged: counted once, no longer running,
	// its resources already free.
	checkMetrics(t, s.URL, "finished", map[string]float64{
		"master/tasks_running": 0, "master/tasks_finished": 1, "master/tasks_active": 1, "master/cpus_used": 0,
	})
	// A retried terminal update and the acknowledgement do not count again.
	if err := ag.Send(link.AgentMessage{StatusUpdate: &link.StatusUpdate{FrameworkID: mesos.FrameworkID{Value: c.id},
		Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: mesos.TASK_FINISHED.Enum(), UUID: u}}}); err != nil {
		t.Fatal(err)
	}
	c.nextUpdate("t")
	c.mustCall(calls.Acknowledge(ag.ID(), "t", u))
	checkMetrics(t, s.URL, "acknowledged", map[string]float64{
		"master/tasks_running": 0, "master/tasks_finished": 1, "master/tasks_active": 0,
		"master/valid_status_updates": 3, "master/valid_status_update_acknowledgements": 2,
	})
	// The other agent's offer times out.
	clk.Advance(time.Minute)
	c.next(scheduler.Event_RESCIND)
	checkMetrics(t, s.URL, "rescinded", map[string]float64{
		"master/offers_rescinded": 1, "master/offers_rescinded_timeout": 1,
	})
	// Teardown: the framework is gone, nothing active.
	c.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	checkMetrics(t, s.URL, "teardown", map[string]float64{
		"master/frameworks_active": 0, "master/frameworks_removed": 1, "master/outstanding_offers": 0, "master/cpus_used": 0,
	})
}
