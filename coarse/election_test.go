package coarse_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

// A job that ends while no master leads (issue 29): the master fails over
// mid-run, the job finishes over the executors' own connections, and the
// driver stops before ZooKeeper names the new master. Stop waits for it,
// re-subscribes through its registry recovery (503s) and tears the
// framework down there: the new leader keeps no framework — Mesos would
// keep it with no failover timer (MESOS-4659) — and "torn down" is logged
// only then.
func TestJobEndingMidElectionLeavesNoFramework(t *testing.T) {
	zkAddr := zktest.Start(t)
	c := startCluster(t, clusterOpts{
		zk: &cluster.ZooKeeper{Servers: []string{zkAddr}, Path: "/mesos", SessionTimeout: 3 * time.Second},
		master: func(mc *master.Config) {
			mc.AgentReregisterTimeout = time.Minute
			mc.RecoveryTime = 2 * time.Second
		},
	})
	r := mustRun(t, "mesos://zk://"+zkAddr+"/mesos", "flint.executor.cores=1")
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	id := m[1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := framework.Map(ctx, r.fc, double, ints(8)); err != nil || len(out) != 8 || out[7] != 14 {
		t.Fatalf("job before the failover: %v, %v", out, err)
	}
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, err := framework.Map(ctx, r.fc, double, ints(8)); err != nil || len(out) != 8 || out[7] != 14 {
		t.Fatalf("job during the election: %v, %v", out, err)
	}
	if err := r.fc.Stop(ctx); err != nil {
		t.Fatalf("Stop during the election: %v", err)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "coarse: stopped (framework "+id+" torn down)") || strings.Contains(logs, "not torn down") {
		t.Fatalf("the driver did not report the framework torn down:\n%s", logs)
	}
	res, err := http.Get(c.URL() + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st struct {
		Frameworks          []struct{ ID string } `json:"frameworks"`
		CompletedFrameworks []struct{ ID string } `json:"completed_frameworks"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Frameworks) != 0 || len(st.CompletedFrameworks) != 1 || st.CompletedFrameworks[0].ID != id {
		t.Fatalf("new leader's frameworks %+v, completed %+v: want %s torn down there", st.Frameworks, st.CompletedFrameworks, id)
	}
}
