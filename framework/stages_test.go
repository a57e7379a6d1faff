package framework_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

var (
	held atomic.Int64
	hold = framework.Register("test.hold", func(ctx context.Context, x int) (int, error) {
		held.Add(1)
		<-ctx.Done()
		return 0, ctx.Err()
	})
)

// Every job goes through the DAG core: a job of independent tasks is one
// stage of it, which ExplainStage describes while it runs.
func TestJobsRunAsStagesOfTheDAGCore(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	if _, err := framework.Map(context.Background(), fc, square, ints(3)); err != nil {
		t.Fatal(err)
	}
	if ex := fc.ExplainStage(0); ex.State != framework.StageUnknown || ex.Detail != "no active stage 0" {
		t.Fatalf("a finished job's stage: %+v", ex)
	}
	held.Store(0)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := framework.Map(ctx, fc, hold, ints(5)); errc <- err }()
	waitFor(t, func() bool { return held.Load() == 2 })
	ex := fc.ExplainStage(1)
	if ex.State != framework.StageRunning || ex.Kind != framework.ResultStage || !slices.Equal(ex.Missing, []int{0, 1, 2, 3, 4}) ||
		!slices.Equal(ex.Jobs, []int64{1}) || ex.Attempt != 0 {
		t.Fatalf("running stage: %+v", ex)
	}
	if !strings.HasPrefix(ex.Detail, "stage 1 (") || !strings.Contains(ex.Detail, "is RUNNING at attempt 0; 5 partitions missing: p0 computing in attempt 0") {
		t.Fatalf("detail: %q", ex.Detail)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancellation", err)
	}
	if ex := fc.ExplainStage(1); ex.State != framework.StageUnknown {
		t.Fatalf("a cancelled job's stage is still known: %+v", ex)
	}
}
