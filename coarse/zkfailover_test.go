package coarse_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

func executorIDs(r *run) []string {
	var ids []string
	for _, p := range r.executors() {
		ids = append(ids, p.executorID)
	}
	slices.Sort(ids)
	return ids
}

// A master failover through ZooKeeper with default settings: the master
// restarts mid-job, answers 307 towards its dead predecessor while
// ZooKeeper still names it, then leads under a new id; the driver
// re-subscribes to it with its framework id, reconciles, keeps its
// executors, and the job finishes with every task exactly once.
func TestMasterFailoverThroughZooKeeper(t *testing.T) {
	zkAddr := zktest.Start(t)
	c := startCluster(t, clusterOpts{
		zk: &cluster.ZooKeeper{Servers: []string{zkAddr}, Path: "/mesos", SessionTimeout: 3 * time.Second},
		// The test cluster pings agents every 200 ms; give them the
		// re-registration window Mesos would (10 min by default) rather
		// than the 1 s that rate makes.
		master: func(mc *master.Config) { mc.AgentReregisterTimeout = time.Minute },
	})
	r := mustRun(t, "mesos://zk://"+zkAddr+"/mesos", "flint.executor.cores=1")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	const n = 120 // 150 ms each on 4 slots: the job outlasts the failover
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(n))
		done <- err
	}()
	fin.await(t, 4, done)
	waitFor(t, 10*time.Second, "4 executors", func() bool { return len(r.executors()) == 4 })
	before, oldMaster := executorIDs(r), c.Master.ID()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	newMaster := c.Master.ID()
	if newMaster == oldMaster {
		t.Fatal("the restarted master kept its id")
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed across the master failover: %v", err)
	}
	waitFor(t, 30*time.Second, "re-subscription to the new master", func() bool {
		logs := r.logs.String()
		return strings.Contains(logs, "subscribed as framework "+m[1]+" to master "+newMaster+" (resubscribed: true)")
	})
	if logs := r.logs.String(); strings.Contains(logs, "Framework has been removed") || strings.Contains(logs, "the leading master changed") {
		t.Fatal("the driver lost its framework or dropped a live subscription during the failover")
	}
	if after := executorIDs(r); !slices.Equal(after, before) {
		t.Fatalf("executors %v before the failover, %v after: they should survive it", before, after)
	}
	fin.await(t, n, nil) // the job ended; its events may still be on their way
	for i := 0; i < n; i++ {
		if got := fin.count(i); got != 1 {
			t.Fatalf("task %d finished %d times, want exactly once", i, got)
		}
	}
	// The framework still works with the new master: another job runs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := framework.Map(ctx, r.fc, double, ints(8)); err != nil || len(out) != 8 || out[7] != 14 {
		t.Fatalf("job after the failover: %v, %v", out, err)
	}
}
