package coarse_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// identity is who a task runs as.
type identity struct {
	UID       int
	FlintUser string
}

var whoAmI = framework.Register("coarse_test.whoAmI", func(_ context.Context, _ int) (identity, error) {
	return identity{UID: os.Getuid(), FlintUser: os.Getenv("FLINT_USER")}, nil
})

// flint.mesos.user is the framework's user: an agent running as root runs
// the executors, and so the tasks, as that user (a real OS user the test
// creates), and task code sees it in FLINT_USER.
func TestExecutorsRunAsTheFrameworkUser(t *testing.T) {
	name, uid := mesostest.OSUser(t)
	c := startCluster(t, clusterOpts{workDir: mesostest.SharedWorkDir(t)})
	r := mustRun(t, mesosURL(c), "flint.mesos.user="+name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := framework.Map(ctx, r.fc, whoAmI, ints(4))
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range got {
		if id != (identity{UID: uid, FlintUser: name}) {
			t.Fatalf("task %d ran as %+v, want uid %d and FLINT_USER %s", i, id, uid, name)
		}
	}
}

// A run-as user the agents do not know fails the executor launch with a
// message naming the user and the agent.
func TestUnknownRunAsUserFailsTheLaunch(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const name = "flint-no-such-user"
	r := mustRun(t, mesosURL(c), "flint.mesos.user="+name, "flint.mesos.executor.agentExclusionTimeout=2h", "flint.mesos.coarse.noExecutorTimeout=1h")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := framework.Map(ctx, r.fc, whoAmI, ints(1))
	if !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it", err)
	}
	for _, want := range []string{`user "` + name + `" does not exist`, c.Agents[0].ID(), c.Agents[1].ID()} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("job error lacks %q: %v", want, err)
		}
	}
}
