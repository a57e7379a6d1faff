package fine_test

import (
	"testing"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/failovercheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

var failoverMode = failovercheck.Mode{Conf: baseConf, Role: contract.RoleFine, TaggedExecutors: true,
	Run: func(t *testing.T, master string, conf ...string) (*framework.Context, *mesostest.LogBuffer) {
		r := mustRun(t, master, conf...)
		return r.fc, r.logs
	}}

// failovercheck.CheckTakeover: a killed driver process's successor.
func TestDriverFailoverAcrossProcesses(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	failovercheck.CheckTakeover(t, c.URL(), mesosURL(c), failoverMode)
}

// failovercheck.CheckStopKeepsFramework: Stop keeps it for a successor.
func TestStopKeepsTheFrameworkForASuccessor(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	failovercheck.CheckStopKeepsFramework(t, c.URL(), mesosURL(c), failoverMode)
}
