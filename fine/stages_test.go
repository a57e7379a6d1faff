package fine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// A job of stages runs on fine executors (each task a Mesos task on
// Flint's per-agent executor) over their real shuffle, and a
// second action skips its map stages (the scenario: stagecheck.OverTheShuffle).
func TestStagesOverTheExecutorsShuffle(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	stagecheck.OverTheShuffle(t, mustRun(t, mesosURL(c)).fc)
}

// A fine executor killed mid-job while it runs a task of the second stage
// (and holds map outputs of the first): Mesos reports its tasks lost, they
// are retried, and the result is exact. In fine mode the driver's
// executor is the agent's, reported lost only once no task of it lives,
// so the retry may read the dead process's outputs from disk on the same
// host before the DAG core unregisters them; whichever way (read, or
// fetch failure and recompute), the result must be exact.
func TestStagesSurviveAKilledExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.excludeOnFailure.enabled=false")
	st := stagecheck.Listen(r.fc)
	waitFor(t, 60*time.Second, "two executors", func() bool { return st.Executors() >= 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	stagecheck.RunKillingExecutor(ctx, t, r.fc, 0, 1)
	waitFor(t, 10*time.Second, "the killed executor's tasks to be reported lost", func() bool {
		return strings.Contains(r.logs.String(), "REASON_EXECUTOR_TERMINATED")
	})
}
