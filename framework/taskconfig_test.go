package framework_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

var appName = framework.Register("test.appName", func(ctx context.Context, _ int) (string, error) {
	c := framework.TaskConfig(ctx)
	if c == nil {
		return "", errors.New("the task's context carries no configuration")
	}
	return c.String("flint.app.name"), nil
})

// In local mode too, tasks read the job's configuration from their context.
func TestTaskConfigInLocalMode(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]", "flint.app.name=local-conf")
	got, err := framework.Map(context.Background(), fc, appName, ints(2))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "local-conf" || got[1] != "local-conf" {
		t.Fatalf("tasks saw flint.app.name %q", got)
	}
	if framework.TaskConfig(context.Background()) != nil {
		t.Fatal("a context that is not a task's carries a configuration")
	}
}
