package coarse_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
)

// agentsKnown is the number of agents the master at url lists.
func agentsKnown(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Slaves []json.RawMessage `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return len(st.Slaves)
}

// Without ZooKeeper, a restarted master learns of the agents only when
// they re-register, after their ping timeout (the executors' exits they
// report meanwhile are ignored, as Mesos ignores messages from unknown
// agents). Stopping the driver in that window must not wait for Mesos to
// confirm exits it cannot hear of: Stop returns once the executors have
// ended their streams, before the agents are back, and nothing is left.
func TestStopRightAfterAMasterRestartWithoutZooKeeper(t *testing.T) {
	c := startCluster(t, clusterOpts{master: func(mc *master.Config) {
		mc.AgentPingInterval = 3 * time.Second // agents give the master up after 5 silent intervals
	}})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := framework.Map(ctx, r.fc, double, ints(8)); err != nil || out[7] != 14 {
		t.Fatalf("job: %v, %v", out, err)
	}
	waitFor(t, 10*time.Second, "4 executors", func() bool { return len(r.executors()) == 4 })
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if n := agentsKnown(t, c.URL()); n != 0 {
		t.Fatalf("the restarted master knows %d agents when Stop returns; want Stop to be done before they re-register", n)
	}
	r.checkNoOrphans(t)
	waitFor(t, 30*time.Second, "the agents to re-register after their ping timeout", func() bool { return agentsKnown(t, c.URL()) == 2 })
}
