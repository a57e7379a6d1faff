package fine_test

import (
	"testing"

	"github.com/flint-mesos/flint/internal/testkit/jobconfcheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// Every flint.* setting reaches the executors in ExecutorInfo.data, typed, and
// tasks read it through their context; the driver's secret reaches neither
// the tasks nor any executor's environment.
func TestTasksReadTheJobsConfiguration(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	app := "conf-" + mesostest.NewMark()
	r := mustRun(t, mesosURL(c), jobconfcheck.Conf(app)...)
	jobconfcheck.Check(t, r.fc, app, r.mark)
}
