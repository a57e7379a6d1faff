// Package constraintcheck is the attribute-constraint scenario both Mesos
// modes run (coarse and fine TestScalarConstraintMatchesAtLeast): one
// copy of the jobs, the constraints and the checks, each mode supplying
// how it starts a context and counts its executors.
package constraintcheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// Attrs are the attributes of the scenario's agents.
const Attrs = "speed:4.5;rack:r1"

// Start starts a context with conf on a cluster whose agents have Attrs,
// returning it and a count of the run's executors.
type Start func(t *testing.T, conf ...string) (fc *framework.Context, executors func() int)

var double = framework.Register("constraintcheck.double", func(_ context.Context, x int) (int, error) { return 2 * x, nil })

// Run checks that a scalar attribute constraint holds when the required
// value is at most the offered one (Spark's semantics): agents with
// speed:4.5 run jobs for speed:4 and speed:4.5, and none for speed:5,
// whose job fails naming the unmet constraint once noFitKey (the mode's
// no-fit timeout, set to 1s) passes, with no executor started.
func Run(t *testing.T, start Start, noFitKey string) {
	for _, want := range []string{"speed:4", "speed:4.5", "rack:r1;speed:1,4"} {
		t.Run(want, func(t *testing.T) {
			fc, _ := start(t, "flint.mesos.constraints="+want)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			got, err := framework.Map(ctx, fc, double, []int{0, 1, 2, 3})
			if err != nil {
				t.Fatalf("job with constraints %q on agents with speed:4.5: %v", want, err)
			}
			if len(got) != 4 || got[3] != 6 {
				t.Fatalf("results = %v, want [0 2 4 6]", got)
			}
		})
	}
	t.Run("speed:5", func(t *testing.T) {
		fc, executors := start(t, "flint.mesos.constraints=speed:5", noFitKey+"=1s")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := framework.Map(ctx, fc, double, []int{0, 1})
		if !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
			t.Fatalf("job error = %v, want the backend to abort it", err)
		}
		if !strings.Contains(err.Error(), `scalar attribute "speed" is 4.5, want at least one of 5`) {
			t.Fatalf("job error does not name the unmet constraint: %v", err)
		}
		if n := executors(); n != 0 {
			t.Fatalf("%d executors started on agents that do not meet speed:5", n)
		}
	})
}
