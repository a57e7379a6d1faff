package webui

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/uistore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// demoStore is an application with a finished two-stage job, a running
// job whose stage waits on tasks, and two executors (one lost).
func demoStore() *uistore.Store {
	s := uistore.New(uistore.Limits{})
	for _, e := range []event.Event{
		event.ApplicationStart{Time: at(0), AppID: "app-1", Name: "demo", User: "ann", Version: "v1"},
		event.EnvironmentUpdate{Time: at(0), Properties: [][2]string{{"flint.app.name", "demo"}, {"flint.authenticate.secret", "*****"}}},
		event.ExecutorAdded{Time: at(1), ExecutorID: "1", Host: "agent-a", Cores: 2},
		event.ExecutorAdded{Time: at(1), ExecutorID: "2", Host: "agent-b", Cores: 2},
		event.JobStart{Time: at(10), JobID: 0, Name: "wordcount", StageIDs: []int{0, 1}, NumTasks: 3, Stages: []event.StageInfo{
			{StageID: 0, Name: "map", NumTasks: 2}, {StageID: 1, Name: "reduce", NumTasks: 1, ParentIDs: []int{0}}}},
		event.StageSubmitted{Time: at(11), JobID: 0, StageID: 0, Name: "map", NumTasks: 2},
		event.TaskStart{Time: at(12), StageID: 0, TaskID: 0, Index: 0, ExecutorID: "1", Host: "agent-a", Locality: "ANY"},
		event.TaskStart{Time: at(12), StageID: 0, TaskID: 1, Index: 1, ExecutorID: "2", Host: "agent-b", Locality: "ANY"},
		event.TaskEnd{Time: at(20), StageID: 0, TaskID: 0, Index: 0, ExecutorID: "1", State: "FINISHED", RunTime: 7 * time.Millisecond, ResultSize: 1500},
		event.TaskEnd{Time: at(21), StageID: 0, TaskID: 1, Index: 1, ExecutorID: "2", State: "FAILED", Reason: "fetch failed: <connection refused>"},
		event.TaskStart{Time: at(22), StageID: 0, TaskID: 2, Index: 1, Attempt: 1, ExecutorID: "1", Host: "agent-a", Locality: "ANY"},
		event.TaskEnd{Time: at(30), StageID: 0, TaskID: 2, Index: 1, Attempt: 1, ExecutorID: "1", State: "FINISHED", RunTime: 6 * time.Millisecond, ResultSize: 900},
		event.StageCompleted{Time: at(31), JobID: 0, StageID: 0},
		event.StageSubmitted{Time: at(32), JobID: 0, StageID: 1, Name: "reduce", NumTasks: 1, ParentIDs: []int{0}},
		event.TaskStart{Time: at(33), StageID: 1, TaskID: 3, Index: 0, ExecutorID: "1", Host: "agent-a", Locality: "NODE_LOCAL"},
		event.TaskEnd{Time: at(40), StageID: 1, TaskID: 3, Index: 0, ExecutorID: "1", State: "FINISHED", RunTime: 5 * time.Millisecond, ResultSize: 10},
		event.StageCompleted{Time: at(41), JobID: 0, StageID: 1},
		event.JobEnd{Time: at(42), JobID: 0},
		event.ExecutorRemoved{Time: at(50), ExecutorID: "2", Reason: "agent lost"},
		event.JobStart{Time: at(60), JobID: 1, Name: "waiting", StageIDs: []int{2}, NumTasks: 3},
		event.StageSubmitted{Time: at(61), JobID: 1, StageID: 2, Name: "waiting", NumTasks: 3},
		event.TaskStart{Time: at(62), StageID: 2, TaskID: 4, Index: 0, ExecutorID: "1", Host: "agent-a", Locality: "ANY"},
	} {
		s.OnEvent(e)
	}
	return s
}

func serve(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return at(100) }
	}
	srv := httptest.NewServer(Handler(Single{S: demoStore()}, o))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRESTErrors(t *testing.T) {
	srv := serve(t, Options{})
	for path, want := range map[string]int{
		"/api/v1/applications/nope/jobs":                           404,
		"/api/v1/applications/app-1/jobs/9":                        404,
		"/api/v1/applications/app-1/jobs/x":                        404,
		"/api/v1/applications/app-1/jobs?status=bogus":             400,
		"/api/v1/applications/app-1/stages/0/7":                    404,
		"/api/v1/applications/app-1/stages/0/0/taskList?sortBy=up": 400,
		"/api/v1/applications/app-1/stages/0/0/taskList?length=z":  400,
		"/api/v1/applications/app-1/storage/rdd":                   404,
		"/api/v1/applications?status=done":                         400,
		"/api/v1/applications/app-1/allexecutors":                  200,
	} {
		if code, body := get(t, srv, path); code != want {
			t.Errorf("GET %s = %d (%s), want %d", path, code, strings.TrimSpace(body), want)
		}
	}
}

func TestRESTExecutorsAndVersion(t *testing.T) {
	srv := serve(t, Options{})
	var active, all []uistore.ExecutorSummary
	_, body := get(t, srv, "/api/v1/applications/app-1/executors")
	_ = json.Unmarshal([]byte(body), &active)
	_, body = get(t, srv, "/api/v1/applications/app-1/allexecutors")
	_ = json.Unmarshal([]byte(body), &all)
	if len(active) != 1 || active[0].ID != "1" || len(all) != 2 || all[1].IsActive || all[1].RemoveReason != "agent lost" {
		t.Fatalf("active %+v, all %+v", active, all)
	}
	if _, body := get(t, srv, "/api/v1/version"); !strings.Contains(body, `"spark": "v1"`) {
		t.Fatalf("version = %s", body)
	}
}

func TestRESTTaskSummary(t *testing.T) {
	srv := serve(t, Options{})
	var d uistore.TaskMetricDistributions
	code, body := get(t, srv, "/api/v1/applications/app-1/stages/0/0/taskSummary?quantiles=0,0.5,1")
	if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil {
		t.Fatalf("%d %s", code, body)
	}
	// Stage 0's two successful tasks ran 7 ms and 6 ms and returned 1500 and 900 bytes.
	if len(d.Quantiles) != 3 || d.ExecutorRunTime[0] != 6 || d.ExecutorRunTime[2] != 7 || d.ResultSize[0] != 900 || d.ResultSize[1] != 1500 {
		t.Fatalf("summary %+v", d)
	}
	for path, want := range map[string]int{
		"/api/v1/applications/app-1/stages/0/0/taskSummary?quantiles=x": 400,
		"/api/v1/applications/app-1/stages/0/0/taskSummary?quantiles=2": 400,
		"/api/v1/applications/app-1/stages/2/0/taskSummary":             404, // nothing succeeded yet
	} {
		if code, body := get(t, srv, path); code != want {
			t.Errorf("GET %s = %d (%s), want %d", path, code, body, want)
		}
	}
	if _, body := get(t, srv, "/stages/stage/?id=0&attempt=0"); !strings.Contains(body, `id="summary"`) || !strings.Contains(body, "Summary metrics for 2 succeeded tasks") {
		t.Fatalf("stage page has no summary:\n%s", body)
	}
}
