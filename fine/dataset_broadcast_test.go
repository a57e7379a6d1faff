package fine_test

import (
	"context"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/broadcastcheck"
)

// An 8 MiB broadcast — twice fine mode's cap on a task's input — read by
// 12 tasks: it reaches the executors through the driver's file server,
// not the tasks' data; every task reads the exact value and each executor
// process holds one copy, shared by the tasks it runs.
func TestBroadcastIsFetchedOncePerExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pids := broadcastcheck.Run(ctx, t, r.fc, broadcastcheck.Args{Size: 8 << 20, Tasks: 12, Seed: 3})
	var execs []int
	for _, p := range executors(r.mark) {
		execs = append(execs, p.pid)
	}
	broadcastcheck.ReadOnlyBy(t, pids, execs)
}

// Destroy on executors: the next action's tasks no longer list the
// broadcast, and reading it after Destroy fails the action, saying so.
func TestDestroyedBroadcast(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=1")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	broadcastcheck.Destroyed(ctx, t, r.fc)
}
