package framework_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/eventlog"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
	"github.com/flint-mesos/flint/internal/driverseam"
)

const uiSecret = "rest-test-secret-0123456789"

// getJSON GETs path from the context's UI with the application's token and
// decodes the answer into v.
func getJSON(t *testing.T, fc *framework.Context, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fc.UIURL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+webui.TokenFor(uiSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// waitJobs waits until the UI store has seen n jobs end.
func waitJobs(t *testing.T, fc *framework.Context, n int) {
	t.Helper()
	st := driverseam.Of(fc).UIStore
	deadline := time.After(10 * time.Second)
	for {
		ch := st.Changed()
		ended := 0
		for _, j := range st.Jobs() {
			if j.Status != uistore.JobRunning {
				ended++
			}
		}
		if ended >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the UI saw %d of %d jobs end", ended, n)
		}
	}
}

func uiContext(t *testing.T, conf ...string) *framework.Context {
	return newContext(t, append([]string{"flint.master=local[2]", "flint.ui.port=0", "flint.app.name=rest-test",
		"flint.authenticate.secret=" + uiSecret}, conf...)...)
}

func TestRESTReportsAMultiTaskJobFieldByField(t *testing.T) {
	fc := uiContext(t, "flint.task.maxFailures=1")
	start := time.Now()
	const n = 6
	results, err := fc.RunJob(context.Background(), &framework.Job{Name: "squares", Tasks: tasksOf(t, square, ints(n))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fc.RunJob(context.Background(), &framework.Job{Name: "cursed", Tasks: tasksOf(t, fail, []int{7})}); err == nil {
		t.Fatal("the failing job succeeded")
	}
	waitJobs(t, fc, 2)
	app := "/api/v1/applications/" + fc.AppID()

	var apps []uistore.ApplicationInfo
	getJSON(t, fc, "/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].ID != fc.AppID() || apps[0].Name != "rest-test" || len(apps[0].Attempts) != 1 {
		t.Fatalf("applications = %+v", apps)
	}
	at := apps[0].Attempts[0]
	if at.Completed || at.SparkUser == "" || at.AppSparkVersion == "" || at.StartTime.Before(start.Add(-time.Minute)) ||
		at.StartTimeEpoch != at.StartTime.UnixMilli() || at.Duration < 0 {
		t.Fatalf("attempt = %+v", at)
	}

	var jobs []uistore.JobData
	getJSON(t, fc, app+"/jobs", &jobs)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	ok, bad := jobs[1], jobs[0] // newest first
	if ok.JobID != 0 || ok.Name != "squares" || ok.Status != "SUCCEEDED" || ok.NumTasks != n || ok.NumCompletedTasks != n ||
		ok.NumCompletedIndices != n || ok.NumActiveTasks != 0 || ok.NumFailedTasks != 0 || ok.NumKilledTasks != 0 ||
		len(ok.StageIDs) != 1 || ok.NumCompletedStages != 1 || ok.NumActiveStages != 0 || ok.NumFailedStages != 0 ||
		ok.SubmissionTime == nil || ok.CompletionTime == nil || ok.CompletionTime.Before(ok.SubmissionTime.Time) {
		t.Fatalf("job 0 = %+v", ok)
	}
	if bad.JobID != 1 || bad.Name != "cursed" || bad.Status != "FAILED" || bad.NumFailedTasks != 1 || bad.NumCompletedTasks != 0 ||
		bad.NumFailedStages != 1 || !strings.Contains(bad.FailureReason, "cursed") {
		t.Fatalf("job 1 = %+v", bad)
	}
	var one uistore.JobData
	getJSON(t, fc, fmt.Sprintf("%s/jobs/%d", app, ok.JobID), &one)
	if one.Name != "squares" || one.Status != "SUCCEEDED" {
		t.Fatalf("jobs/0 = %+v", one)
	}
	var running []uistore.JobData
	getJSON(t, fc, app+"/jobs?status=running", &running)
	if len(running) != 0 {
		t.Fatalf("running jobs = %+v", running)
	}

	stage := ok.StageIDs[0]
	var stages []uistore.StageData
	getJSON(t, fc, app+"/stages?status=complete", &stages)
	if len(stages) != 1 {
		t.Fatalf("complete stages = %+v", stages)
	}
	sd := stages[0]
	var resultBytes, runMillis int64
	for _, r := range results {
		resultBytes += r.Metrics.ResultSize
		runMillis += r.Metrics.RunTime.Milliseconds()
	}
	if sd.StageID != stage || sd.AttemptID != 0 || sd.Status != "COMPLETE" || sd.Name != "squares" || sd.NumTasks != n ||
		sd.NumCompleteTasks != n || sd.NumCompletedIndices != n || sd.NumFailedTasks != 0 || sd.NumActiveTasks != 0 ||
		sd.ResultSize != resultBytes || sd.ExecutorRunTime != runMillis || sd.SubmissionTime == nil ||
		sd.FirstTaskLaunchedTime == nil || sd.CompletionTime == nil || sd.FailureReason != "" || sd.JobID != 0 {
		t.Fatalf("stage = %+v (want result bytes %d, run time %d ms)", sd, resultBytes, runMillis)
	}

	var tasks []uistore.TaskData
	getJSON(t, fc, fmt.Sprintf("%s/stages/%d/0/taskList?length=100", app, stage), &tasks)
	if len(tasks) != n {
		t.Fatalf("%d tasks, want %d", len(tasks), n)
	}
	seen := map[int]bool{}
	for i, td := range tasks {
		r := results[td.Index]
		if i > 0 && td.TaskID <= tasks[i-1].TaskID {
			t.Fatalf("tasks not sorted by ID: %d after %d", td.TaskID, tasks[i-1].TaskID)
		}
		if td.Status != "SUCCESS" || td.ExecutorID != r.ExecutorID || td.Attempt != r.Attempt || td.Host != "localhost" ||
			td.PartitionID != td.Index || td.Duration == nil || *td.Duration < 0 || td.ErrorMessage != "" ||
			td.TaskMetrics == nil || td.TaskMetrics.ResultSize != r.Metrics.ResultSize ||
			td.TaskMetrics.ExecutorRunTime != r.Metrics.RunTime.Milliseconds() ||
			td.TaskMetrics.InputMetrics.BytesRead != r.Metrics.InputSize || td.TaskLocality == "" {
			t.Fatalf("task %+v (metrics %+v) does not match result %+v", td, td.TaskMetrics, r)
		}
		seen[td.Index] = true
	}
	if len(seen) != n {
		t.Fatalf("task indices %v, want 0..%d", seen, n-1)
	}
	var page []uistore.TaskData
	getJSON(t, fc, fmt.Sprintf("%s/stages/%d/0/taskList?offset=2&length=3&sortBy=-ID", app, stage), &page)
	if len(page) != 3 || page[0].TaskID != tasks[n-3].TaskID || page[2].TaskID != tasks[n-5].TaskID {
		t.Fatalf("page = %+v", page)
	}
	var failed []uistore.StageData
	getJSON(t, fc, fmt.Sprintf("%s/stages/%d", app, bad.StageIDs[0]), &failed)
	if len(failed) != 1 || failed[0].Status != "FAILED" || failed[0].FailureReason == "" || len(failed[0].Tasks) != 1 {
		t.Fatalf("failed stage = %+v", failed)
	}
	for _, td := range failed[0].Tasks {
		if td.Status != "FAILED" || !strings.Contains(td.ErrorMessage, "input 7 is cursed") {
			t.Fatalf("failed task = %+v", td)
		}
	}

	var execs []uistore.ExecutorSummary
	getJSON(t, fc, app+"/executors", &execs)
	if len(execs) != 1 || execs[0].ID != results[0].ExecutorID || execs[0].HostPort != "localhost" || !execs[0].IsActive ||
		execs[0].TotalCores != 2 || execs[0].CompletedTasks != n || execs[0].FailedTasks != 1 || execs[0].TotalTasks != n+1 ||
		execs[0].ActiveTasks != 0 {
		t.Fatalf("executors = %+v", execs)
	}

	var env uistore.ApplicationEnvironmentInfo
	getJSON(t, fc, app+"/environment", &env)
	props := map[string]string{}
	for _, kv := range env.SparkProperties {
		props[kv[0]] = kv[1]
	}
	if props["flint.app.name"] != "rest-test" || props["flint.master"] != "local[2]" || props["flint.authenticate.secret"] != "*****" ||
		env.Runtime["goVersion"] != runtime.Version() {
		t.Fatalf("environment = %+v", env)
	}
}

func TestUINeedsTheApplicationsToken(t *testing.T) {
	fc := uiContext(t)
	get := func(path, bearer string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, fc.UIURL()+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	token := webui.TokenFor(uiSecret)
	if r := get("/api/v1/applications", ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %s", r.Status)
	}
	if r := get("/api/v1/applications", uiSecret); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the secret itself as token: %s", r.Status)
	}
	if r := get("/api/v1/applications", token); r.StatusCode != http.StatusOK {
		t.Fatalf("bearer token: %s", r.Status)
	}
	r := get("/api/v1/applications?token="+token, "")
	if r.StatusCode != http.StatusOK || len(r.Cookies()) != 1 || !r.Cookies()[0].HttpOnly {
		t.Fatalf("query token: %s, cookies %v", r.Status, r.Cookies())
	}
}

func TestUIWithoutAuthAndDisabled(t *testing.T) {
	fc := uiContext(t, "flint.ui.auth=false")
	resp, err := http.Get(fc.UIURL() + "/api/v1/applications/" + fc.AppID())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("flint.ui.auth=false: %s", resp.Status)
	}
	off := uiContext(t, "flint.ui.enabled=false")
	if off.UIURL() != "" || off.AppID() == "" {
		t.Fatalf("disabled UI: url %q, app %q", off.UIURL(), off.AppID())
	}
}

func TestUILogsItsURLOnceAndWritesTheSignInLink(t *testing.T) {
	var buf lockedBuilder // the driver loop logs while the test reads
	fc := contextLogging(t, &buf, "flint.master=local[1]", "flint.ui.port=0", "flint.authenticate.secret="+uiSecret)
	out := buf.String()
	if strings.Count(out, "web UI at "+fc.UIURL()) != 1 || strings.Contains(out, webui.TokenFor(uiSecret)) {
		t.Fatalf("log:\n%s", out)
	}
	i := strings.Index(out, "link with the application's token in ")
	if i < 0 {
		t.Fatalf("no sign-in file in log:\n%s", out)
	}
	path := strings.Fields(out[i+len("link with the application's token in "):])[0]
	path = strings.TrimRight(path, `)"`)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(b)) != fc.UIURL()+"/?token="+webui.TokenFor(uiSecret) {
		t.Fatalf("sign-in file holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("sign-in file mode %v", fi.Mode())
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("sign-in file left after Stop: %v", err)
	}
}

func tasksOf(t *testing.T, f framework.Func[int, int], in []int) []framework.Task {
	t.Helper()
	out := make([]framework.Task, len(in))
	for i, x := range in {
		task, err := f.Task(x)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = task
	}
	return out
}

// contextLogging is newContext with the context's log written to w.
// lockedBuilder is a strings.Builder safe for a writer and a reader at once.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func contextLogging(t *testing.T, w io.Writer, conf ...string) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	for _, kv := range conf {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(w)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.Stop(context.Background()) })
	return fc
}

func TestMetricsScrapedAndParsed(t *testing.T) {
	fc := uiContext(t, "flint.task.maxFailures=1")
	const n = 5
	results, err := fc.RunJob(context.Background(), &framework.Job{Name: "squares", Tasks: tasksOf(t, square, ints(n))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fc.RunJob(context.Background(), &framework.Job{Name: "cursed", Tasks: tasksOf(t, fail, []int{1})}); err == nil {
		t.Fatal("the failing job succeeded")
	}
	// The metrics are a listener of their own: wait until it has seen
	// both jobs end, not just the UI store.
	if err := fc.FlushEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, fc.UIURL()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+webui.TokenFor(uiSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no metric %s", name)
		}
		for _, m := range f.Metric {
			match := true
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.Label {
					found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
				}
				match = match && found
			}
			if !match {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	var resultBytes int64
	for _, r := range results {
		resultBytes += r.Metrics.ResultSize
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"flint_jobs_started_total", nil, 2},
		{"flint_jobs_ended_total", []string{"state", "succeeded"}, 1},
		{"flint_jobs_ended_total", []string{"state", "failed"}, 1},
		{"flint_jobs_running", nil, 0},
		{"flint_stages_ended_total", []string{"state", "complete"}, 1},
		{"flint_stages_ended_total", []string{"state", "failed"}, 1},
		{"flint_tasks_started_total", nil, n + 1},
		{"flint_tasks_ended_total", []string{"state", "finished"}, n},
		{"flint_tasks_ended_total", []string{"state", "failed"}, 1},
		{"flint_tasks_running", nil, 0},
		{"flint_task_duration_seconds", []string{"state", "finished"}, n},
		{"flint_task_result_bytes_total", nil, float64(resultBytes)},
		{"flint_executors", nil, 1},
		{"flint_listener_events_dropped_total", nil, 0},
	} {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, name := range []string{"flint_mesos_offers_received_total", "flint_mesos_resubscriptions_total", "flint_shuffle_read_bytes_total", "go_goroutines"} {
		if fams[name] == nil {
			t.Errorf("no metric %s", name)
		}
	}
}

func TestEventLogRecordsTheApplication(t *testing.T) {
	dir := t.TempDir()
	fc := uiContext(t, "flint.ui.enabled=false", "flint.eventLog.enabled=true", "flint.eventLog.dir="+dir, "flint.eventLog.compress=true")
	if _, err := fc.RunJob(context.Background(), &framework.Job{Name: "squares", Tasks: tasksOf(t, square, ints(4))}); err != nil {
		t.Fatal(err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := uistore.New(uistore.Limits{})
	rep, err := eventlog.Replay(eventlog.AppDir(dir, fc.AppID()), st)
	if err != nil || len(rep.Warnings) != 0 {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
	a := st.App()
	jobs := st.Jobs()
	if a.ID != fc.AppID() || a.Name != "rest-test" || !a.Completed || len(jobs) != 1 || jobs[0].Status != "SUCCEEDED" || jobs[0].NumCompletedTasks != 4 {
		t.Fatalf("replayed app %+v, jobs %+v", a, jobs)
	}
	env := st.Environment()
	for _, kv := range env.SparkProperties {
		if strings.Contains(kv[1], uiSecret) {
			t.Fatalf("the event log holds the secret: %v", kv)
		}
	}
}

func TestEventLogDirThatCannotBeCreatedFailsTheContext(t *testing.T) {
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := framework.NewConfig()
	for _, kv := range [][2]string{{"flint.master", "local[1]"}, {"flint.eventLog.enabled", "true"}, {"flint.eventLog.dir", file}, {"flint.ui.port", "0"}} {
		_ = cfg.Set(kv[0], kv[1])
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	if fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log)); err == nil || !strings.Contains(err.Error(), "flint.eventLog") {
		if fc != nil {
			_ = fc.Stop(context.Background())
		}
		t.Fatalf("NewContext with an event log dir under a file: %v", err)
	}
}

// A job of three stages (two shuffles) through the DAG core: the REST API
// shows each stage with the stages it reads from, and the job's tasks are
// all its stages'.
func TestRESTShowsAMultiStageJob(t *testing.T) {
	fc := uiContext(t)
	out, err := driverseam.Of(fc).Driver.RunStages(context.Background(), sumsJob())
	if err != nil || len(out) != 1 {
		t.Fatalf("%q, %v", out, err)
	}
	waitJobs(t, fc, 1)
	app := "/api/v1/applications/" + fc.AppID()
	var jobs []uistore.JobData
	getJSON(t, fc, app+"/jobs", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	j := jobs[0]
	// sumsJob: 4 map tasks, 3 reduce-and-map tasks, 1 result task.
	if j.Status != "SUCCEEDED" || len(j.StageIDs) != 3 || j.NumTasks != 8 || j.NumCompletedTasks != 8 || j.NumCompletedIndices != 8 ||
		j.NumCompletedStages != 3 {
		t.Fatalf("job %+v", j)
	}
	var stages []uistore.StageData
	getJSON(t, fc, app+"/stages", &stages)
	byTasks := map[int]uistore.StageData{}
	for _, s := range stages {
		byTasks[s.NumTasks] = s
	}
	m, r, f := byTasks[4], byTasks[3], byTasks[1]
	if len(stages) != 3 || m.Status != "COMPLETE" || len(m.ParentIDs) != 0 ||
		len(r.ParentIDs) != 1 || r.ParentIDs[0] != m.StageID || len(f.ParentIDs) != 1 || f.ParentIDs[0] != r.StageID {
		t.Fatalf("stages %+v", stages)
	}
	var tasks []uistore.TaskData
	getJSON(t, fc, fmt.Sprintf("%s/stages/%d/0/taskList", app, r.StageID), &tasks)
	if len(tasks) != 3 || tasks[0].Status != "SUCCESS" {
		t.Fatalf("reduce stage tasks %+v", tasks)
	}
}
