package fine_test

import (
	"context"
	"os"
	"path/filepath"
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

var whoAmI = framework.Register("fine_test.whoAmI", func(_ context.Context, _ int) (identity, error) {
	return identity{UID: os.Getuid(), FlintUser: os.Getenv("FLINT_USER")}, nil
})

// flint.mesos.user is the framework's user: an agent running as root runs
// the executors, and so the tasks, as that user (a real OS user the test
// creates), and task code sees it in FLINT_USER.
func TestExecutorsRunAsTheFrameworkUser(t *testing.T) {
	name, uid := mesostest.OSUser(t)
	c := startCluster(t, clusterOpts{workDir: mesostest.SharedWorkDir(t)})
	r := mustRun(t, mesosURL(c), "flint.mesos.user="+name, "flint.task.maxFailures=1")
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

// A run-as user the agents do not know fails the job at its first launch
// (not after flint.task.maxFailures launches) with a message naming the
// user and the agent.
func TestUnknownRunAsUserFailsTheLaunch(t *testing.T) {
	wd := t.TempDir()
	c := startCluster(t, clusterOpts{agents: 1, workDir: wd})
	const name = "flint-no-such-user"
	r := mustRun(t, mesosURL(c), "flint.mesos.user="+name, "flint.task.maxFailures=4")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := framework.Map(ctx, r.fc, whoAmI, ints(1))
	if err == nil || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the launch failure (not the test's deadline)", err)
	}
	for _, want := range []string{`user "` + name + `" does not exist`, c.Agents[0].ID(), "no task can run"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("job error lacks %q: %v", want, err)
		}
	}
	all, _ := filepath.Glob(filepath.Join(wd, "*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "*"))
	var runs []string
	for _, p := range all {
		if filepath.Base(p) != "latest" { // the agent's link to the newest run
			runs = append(runs, p)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("%d executor launches (%v), want 1: the unknown user must not be retried", len(runs), runs)
	}
}
