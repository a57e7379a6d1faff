package coarse_test

import (
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/constraintcheck"
)

// The scenario: internal/testkit/constraintcheck.
func TestScalarConstraintMatchesAtLeast(t *testing.T) {
	c := startCluster(t, clusterOpts{attrs: constraintcheck.Attrs})
	constraintcheck.Run(t, func(t *testing.T, conf ...string) (*framework.Context, func() int) {
		r := mustRun(t, mesosURL(c), conf...)
		return r.fc, func() int { return len(r.executors()) }
	}, "flint.mesos.coarse.noExecutorTimeout")
}
