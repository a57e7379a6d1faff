package executor_test

import (
	"testing"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// A task that could not read a shuffle block ends FAILED with the
// FetchFailed end reason naming the block (Spark's FetchFailed
// TaskEndReason), not FINISHED with the failure in its output.
func TestFetchFailureIsAFailedEndState(t *testing.T) {
	r, c := newRuntime(t, executor.Config{})
	if err := r.Launch(td(t, 1, "fetchFailed", 0)); err != nil {
		t.Fatal(err)
	}
	u := c.waitTerminal(t)
	if u.State != flintpb.TaskState_TASK_FAILED || u.Failure.GetKind() != flintpb.FailureKind_FETCH_FAILED || u.Result != nil {
		t.Fatalf("update = %v, want TASK_FAILED FETCH_FAILED without a result", u)
	}
	want := flintpb.FetchFailed{ShuffleId: 3, MapIndex: 1, ReduceIndex: 2, ExecutorId: "exec-9", Host: "h9",
		Address: "https://h9:7337", Message: "connection refused"}
	if got := u.Failure.FetchFailed; got == nil || *got != want {
		t.Errorf("fetch_failed = %v, want %v", got, &want)
	}
	if r.FreeCores() != 4 {
		t.Errorf("free cores = %d after the failure", r.FreeCores())
	}
}
