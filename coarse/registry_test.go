package coarse_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// An executor registering other functions than the driver (here: one
// registered only when an environment variable is set, as a job
// registered conditionally would be) refuses to register, exits with
// status 65 and says why on stderr.
func TestExecutorRefusesMismatchedRegistry(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c), "flint.executorEnv."+envConditionalFunction+"=1",
		"flint.mesos.coarse.noExecutorTimeout=1s", "flint.mesos.executor.maxFailuresPerAgent=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, r.fc, double, ints(2)); !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it", err)
	}
	if logs := r.logs.String(); !strings.Contains(logs, "Command exited with status 65") || !strings.Contains(logs, "registers other functions and jobs") {
		t.Fatalf("the driver does not report the failed check")
	}
	if n := mesostest.SandboxesContaining(t, work, "function registry mismatch", "the driver's have "+task.Default().Fingerprint()); n == 0 {
		t.Fatal("no sandbox's stderr says why the executor refused to run")
	}
}
