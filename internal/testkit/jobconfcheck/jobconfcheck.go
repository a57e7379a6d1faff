package jobconfcheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// Secret is the driver's secret in the scenario's configuration.
const Secret = "job-secret-never-on-executors-42"

// Seen is what a task reads of the job's configuration.
type Seen struct {
	App      string
	Wait     time.Duration
	Greeting string
	Secret   string
}

// Read returns what a task's context says of the configuration.
var Read = framework.Register("jobconfcheck.read", func(ctx context.Context, _ int) (Seen, error) {
	c := framework.TaskConfig(ctx)
	if c == nil {
		return Seen{}, errors.New("the task's context carries no configuration")
	}
	return Seen{App: c.String("flint.app.name"), Wait: c.Duration("flint.locality.wait"),
		Greeting: c.Prefixed("flint.executorEnv.")["GREETING"], Secret: c.String("flint.authenticate.secret")}, nil
})

// Conf is the scenario's configuration for an application named app.
func Conf(app string) []string {
	return []string{"flint.app.name=" + app, "flint.locality.wait=3s", "flint.executorEnv.GREETING=hi",
		"flint.authenticate.secret=" + Secret}
}

// Check runs four tasks on fc, started with Conf(app), and fails t unless
// each saw the application's name, its typed locality wait and its
// executor environment but not the secret, and unless no executor process
// of the run (FLINT_TEST_MARK=mark) carries the secret in its environment.
func Check(t *testing.T, fc *framework.Context, app, mark string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := framework.Map(ctx, fc, Read, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != (Seen{App: app, Wait: 3 * time.Second, Greeting: "hi"}) {
			t.Fatalf("task %d saw %+v", i, s)
		}
	}
	procs := mesostest.Procs(func(env map[string]string) bool { return env["FLINT_TEST_MARK"] == mark })
	if len(procs) == 0 {
		t.Fatal("no executor process of the run found to inspect")
	}
	for _, p := range procs {
		for k, v := range p.Env {
			if strings.Contains(v, Secret) {
				t.Fatalf("executor %d's environment carries the secret in %s", p.PID, k)
			}
		}
	}
}
