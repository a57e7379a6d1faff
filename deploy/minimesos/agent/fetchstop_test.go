package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// A framework shut down while its executor's binary is still being fetched
// from a file server that never answers (a driver killed mid-launch) stops
// the fetch at once, as Mesos' containerizer kills its fetcher when it
// destroys a container: the task ends and the fetch's request is
// abandoned, instead of the executor (and the framework with it) staying
// on the agent until the fetch gives up.
func TestShutdownStopsAFetchInProgress(t *testing.T) {
	arrived := make(chan struct{}, 1)
	abandoned := make(chan struct{})
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // never answers; ends when the agent gives the request up
		close(abandoned)
	}))
	defer files.Close()
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", false)
	ex := executorInfo("exf")
	ex.Command.URIs = []mesos.CommandInfo_URI{{Value: files.URL + "/flint"}}
	runTask(t, ta, fw, executorTask("f", "run", ex))
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("the agent never asked for the executor's binary")
	}
	m.deliver(t, link.MasterMessage{ShutdownFramework: &link.ShutdownFramework{FrameworkID: *fw.ID}})
	st := m.waitState(t, "f", mesos.TASK_FAILED)
	if !strings.Contains(st.GetMessage(), "context canceled") {
		t.Errorf("the task ended with %q, want the fetch's cancellation", st.GetMessage())
	}
	select {
	case <-abandoned:
	case <-time.After(time.Minute):
		t.Fatal("the fetch still waits on the file server after the framework's shutdown")
	}
}
