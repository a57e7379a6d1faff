package dataset_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

func explode(n int) int {
	var m map[int]int
	m[n] = n // assignment to entry in nil map
	return n
}

var panicJob = dataset.Job("test.panic", func(b *dataset.Builder, n int) error {
	_, err := dataset.Collect(dataset.Map(dataset.Parallelize(b, []int{1, 2, 3}, 1), func(x int) int { return explode(x) }))
	return err
})

// A panic inside a dataset closure reaches the job's error and the task's
// end event with its stack, trimmed: the panic, then the user's frames
// first, without the executor's.
func TestPanicInADatasetClosureCarriesItsStack(t *testing.T) {
	rec := &stagecheck.TaskEnds{}
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[1,2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	_, err = panicJob.Run(context.Background(), fc, 1)
	if serr := fc.Stop(context.Background()); serr != nil {
		t.Fatal(serr)
	}
	var je *framework.JobError
	if !errors.As(err, &je) {
		t.Fatalf("error %v is not a *framework.JobError", err)
	}
	if je.FailureKind != "Panic" || !strings.Contains(je.Message, "assignment to entry in nil map") || je.TaskIndex != 0 || je.Attempt != 1 {
		t.Errorf("job error: kind %q, message %q, task %d attempt %d; want the panic of task 0's second attempt", je.FailureKind, je.Message, je.TaskIndex, je.Attempt)
	}
	checkUserStack(t, "job error", je.Stack)
	t.Log(err)
	if !strings.Contains(err.Error(), "task stack:\n"+je.Stack) {
		t.Errorf("the error's text lacks the stack:\n%v", err)
	}
	ends := rec.Ends()
	if len(ends) != 2 {
		t.Fatalf("%d task ends, want 2 failed attempts", len(ends))
	}
	for _, e := range ends {
		checkUserStack(t, "TaskEnd", e.Stack)
	}
}

func checkUserStack(t *testing.T, where, stack string) {
	t.Helper()
	lines := strings.Split(stack, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[1], "panic(") || !strings.Contains(lines[3], "dataset_test.explode") || !strings.Contains(lines[4], "panic_test.go:") {
		t.Errorf("%s: stack does not start with the panic and the user's function:\n%s", where, stack)
	}
	if strings.Contains(stack, "executor.(*Runtime)") || strings.Contains(stack, "debug.Stack") {
		t.Errorf("%s: stack keeps the executor's frames:\n%s", where, stack)
	}
}
