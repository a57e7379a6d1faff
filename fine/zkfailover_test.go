package fine_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

// A master failover through ZooKeeper in fine mode, with default failover
// settings: the master restarts mid-job under a new id; the driver
// re-subscribes with its framework id, the agents re-register with the
// tasks they run and resend their updates, and the job finishes.
func TestMasterFailoverThroughZooKeeper(t *testing.T) {
	zkAddr := zktest.Start(t)
	c := startCluster(t, clusterOpts{
		zk:     &cluster.ZooKeeper{Servers: []string{zkAddr}, Path: "/mesos", SessionTimeout: 3 * time.Second},
		master: func(mc *master.Config) { mc.AgentReregisterTimeout = time.Minute },
	})
	r := mustRun(t, "mesos://zk://"+zkAddr+"/mesos")
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	in := make([]int, 60)
	for i := range in {
		in[i] = 200 // ms each, on 2 agents × 3 task slots: the job outlasts the failover
	}
	done := make(chan error, 1)
	go func() {
		out, err := framework.Map(context.Background(), r.fc, sleepy, in)
		if err == nil && (len(out) != len(in) || out[59] != 200) {
			err = fmt.Errorf("results %v", out)
		}
		done <- err
	}()
	waitFor(t, 30*time.Second, "tasks running", func() bool { return strings.Contains(r.logs.String(), "starting executor") })
	old := c.Master.ID()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Master.ID() == old {
		t.Fatal("the restarted master kept its id")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("job failed across the master failover: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("job did not finish within 2 minutes of the failover")
	}
	if !strings.Contains(r.logs.String(), "subscribed as framework "+m[1]+" to master "+c.Master.ID()+" (resubscribed: true)") {
		t.Fatal("the driver did not re-subscribe to the new master with its framework id")
	}
}
