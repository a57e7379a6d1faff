package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestStateListsExecutorsAndLatestRunServesLogs(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	runTask(t, ta, fwInfo("fw-state", false), cmdTask("t-state", "echo hello-from-sandbox; sleep 30"))
	m.waitState(t, "t-state", mesos.TASK_RUNNING)
	base := "http://" + ta.cfg.Endpoint

	var st agentState
	resp, err := http.Get(base + "/state")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.ID == "" || st.Flags["work_dir"] != ta.cfg.WorkDir || len(st.Frameworks) != 1 {
		t.Fatalf("state = %+v", st)
	}
	ex := st.Frameworks[0].Executors
	if len(ex) != 1 || ex[0].ID != "t-state" || len(ex[0].Tasks) != 1 || ex[0].Tasks[0].State != "TASK_RUNNING" {
		t.Fatalf("executors = %+v", ex)
	}
	latest := filepath.Join(st.Flags["work_dir"], "slaves", st.ID, "frameworks", "fw-state", "executors", "t-state", "runs", "latest", "stdout")
	for _, p := range []string{filepath.Join(ex[0].Directory, "stdout"), latest} {
		waitfor.Msg(t, 5*time.Second, func() string {
			var page struct{ Data string }
			resp, err := http.Get(base + "/files/read?" + url.Values{"path": {p}, "offset": {"0"}}.Encode())
			if err != nil {
				t.Fatal(err)
			}
			_ = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(page.Data, "hello-from-sandbox") {
				return ""
			}
			return fmt.Sprintf("/files/read %s: status %d, data %q", p, resp.StatusCode, page.Data)
		})
	}
	if resp, err := http.Post(base+"/state", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /state: %v %v", resp, err)
	}
}
