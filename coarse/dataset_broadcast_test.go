package coarse_test

import (
	"context"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/broadcastcheck"
)

// An 8 MiB broadcast read by 24 tasks: every task reads the exact value,
// each executor process holds one copy (fetched from the driver's file
// server and decoded once, shared by its tasks), and only the run's
// executors read it.
func TestBroadcastIsFetchedOncePerExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pids := broadcastcheck.Run(ctx, t, r.fc, broadcastcheck.Args{Size: 8 << 20, Tasks: 24, Seed: 2})
	var execs []int
	for _, p := range r.executors() {
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
