package coarse_test

import (
	"context"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// A job of stages runs on coarse executors over their real shuffle, and a
// second action skips its map stages (the scenario: stagecheck.OverTheShuffle).
func TestStagesOverTheExecutorsShuffle(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	stagecheck.OverTheShuffle(t, mustRun(t, mesosURL(c), "flint.executor.cores=1").fc)
}

// An executor killed mid-job while it holds map outputs: the driver's DAG
// core hears the loss from the backend (the executor's stream breaks),
// unregisters its outputs at once, so the retried task's read names them
// missing, and recomputes them (a new attempt of the first stage); the
// result is exact. Two one-core executors, both up before the job: each
// runs map tasks of the first stage, so whichever runs the gated task of
// the second holds map outputs.
func TestStagesRecomputeALostExecutorsOutputs(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.cores.max=2", "flint.excludeOnFailure.enabled=false")
	st := stagecheck.Listen(r.fc)
	waitFor(t, 60*time.Second, "two executors", func() bool { return st.Executors() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	stagecheck.RunKillingExecutor(ctx, t, r.fc, 0, 1)
	if got := st.MapExecutors(); len(got) < 2 {
		t.Fatalf("map outputs written by %v, want both executors (the victim among them)", got)
	}
	if a := st.Attempts(); a[0] < 1 {
		t.Fatalf("stage attempts %v: the first stage was not recomputed after its executor was lost", a)
	}
}
