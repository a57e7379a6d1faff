package main

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/dispatcher"
)

// TestClusterModeLatency measures, on one `flint mesos local` with a
// dispatcher, N cluster-mode submissions of the pi example (2 slices of
// 1000 samples) one after another: submission to driver RUNNING, and
// submission to FINISHED; beside N client-mode runs of the same program
// against the same master (process start to exit). Set
// FLINT_DISPATCHER_BENCH=N to run it (docs/benchmarks.md).
func TestClusterModeLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FLINT_DISPATCHER_BENCH"))
	if n <= 0 {
		t.Skip("set FLINT_DISPATCHER_BENCH=N to measure N submissions")
	}
	c := startCluster(t)
	var running, finished, client []time.Duration
	for range n {
		start := time.Now()
		id := c.submit("--example", "pi", "--", "2", "1000")
		for st := c.status(id); st.DriverState != dispatcher.Running && !st.DriverState.Terminal(); st = c.status(id) {
			time.Sleep(20 * time.Millisecond) // the measurement's polling granularity, not synchronisation
		}
		running = append(running, time.Since(start))
		c.waitState(id, dispatcher.Finished)
		finished = append(finished, time.Since(start))
	}
	for range n {
		start := time.Now()
		if _, errOut, code := c.flint("submit", "--master", "mesos://"+c.master, "--example", "pi", "--", "2", "1000"); code != 0 {
			t.Fatalf("client mode: exit %d\n%s", code, errOut)
		}
		client = append(client, time.Since(start))
	}
	t.Logf("%d submissions: submit→RUNNING %s; submit→FINISHED %s; client mode start→exit %s", n,
		quantiles(running), quantiles(finished), quantiles(client))
}

func quantiles(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return "median " + q(0.5).Round(time.Millisecond).String() + ", p99 " + q(0.99).Round(time.Millisecond).String()
}
