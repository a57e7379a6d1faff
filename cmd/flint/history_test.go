package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/eventlog"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// historyServer starts `flint history` on dir and returns its URL and token.
func historyServer(t *testing.T, dir string) (url, token string) {
	t.Helper()
	cmd := exec.Command(flintBin, "history", "--dir", dir, "--port", "0", "--host", "127.0.0.1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("flint history after SIGINT: %v", err)
		}
	})
	r := bufio.NewReader(out)
	first, _ := r.ReadString('\n')
	second, _ := r.ReadString('\n')
	go io.Copy(io.Discard, r)
	_, url, ok := strings.Cut(strings.TrimSpace(first), " at ")
	_, token, ok2 := strings.Cut(strings.TrimSpace(second), "/?token=")
	if !ok || !ok2 {
		t.Fatalf("flint history printed %q %q", first, second)
	}
	return url, token
}

func getWith(t *testing.T, url, token string, v any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

func TestHistoryServesAFinishedAppFromItsTruncatedEventLog(t *testing.T) {
	logs := t.TempDir()
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(strings.Repeat("to be or not to be\n", 50)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runFlint(t, "submit", "--example", "wordcount", "--master", "local[2]",
		"--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir="+logs, "--conf", "flint.eventLog.compress=true",
		"--conf", "flint.eventLog.rolling.maxFileSize=1024",
		"--conf", "flint.ui.enabled=false", "--", "--partitions", "2", in)
	if code != 0 {
		t.Fatalf("wordcount exited %d:\n%s", code, errOut)
	}
	apps, err := eventlog.Apps(logs)
	if err != nil || len(apps) != 1 {
		t.Fatalf("event logs %v, %v", apps, err)
	}
	app := apps[0]
	url, token := historyServer(t, logs)
	if code, _ := getWith(t, url+"/api/v1/applications", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("history without the token: %d", code)
	}

	var infos []uistore.ApplicationInfo
	getWith(t, url+"/api/v1/applications", token, &infos)
	if len(infos) != 1 || infos[0].ID != app || !infos[0].Attempts[0].Completed {
		t.Fatalf("applications = %+v", infos)
	}
	var jobs []uistore.JobData
	getWith(t, url+"/api/v1/applications/"+app+"/jobs", token, &jobs)
	if len(jobs) == 0 {
		t.Fatal("no jobs in the history")
	}
	tasks, nStages := 0, 0
	for _, j := range jobs {
		if j.Status != "SUCCEEDED" || j.NumCompletedTasks != j.NumTasks || j.NumTasks == 0 {
			t.Fatalf("job %+v", j)
		}
		tasks += j.NumTasks
		nStages += len(j.StageIDs)
	}
	// wordcount's collect is one job of two stages: the map side of
	// ReduceByKey and the result stage reading its shuffle
	var stages []uistore.StageData
	getWith(t, url+"/api/v1/applications/"+app+"/stages", token, &stages)
	if len(stages) != nStages || nStages < 2 {
		t.Fatalf("stages = %+v, want the %d stages of %d jobs", stages, nStages, len(jobs))
	}
	for _, s := range stages {
		if s.Status != "COMPLETE" {
			t.Fatalf("stage %+v", s)
		}
	}
	var execs []uistore.ExecutorSummary
	getWith(t, url+"/api/v1/applications/"+app+"/allexecutors", token, &execs)
	if len(execs) != 1 || execs[0].CompletedTasks != tasks {
		t.Fatalf("executors = %+v, want one that ran %d tasks", execs, tasks)
	}
	if _, body := getWith(t, url+"/history/"+app+"/jobs/", token, nil); !strings.Contains(body, `data-job="0"`) || strings.Contains(body, "damaged") {
		t.Fatalf("jobs page:\n%s", body)
	}

	// Cut the log in the middle: the history shows what came before, and says so.
	files, _ := eventlog.Files(eventlog.AppDir(logs, app))
	if len(files) < 3 {
		t.Fatalf("%d event log files, want it rolled at 1024 bytes", len(files))
	}
	last := files[len(files)-1]
	if err := os.Truncate(last.Path, last.Size/2); err != nil {
		t.Fatal(err)
	}
	var cut []uistore.ApplicationInfo
	getWith(t, url+"/api/v1/applications", token, &cut)
	if len(cut) != 1 || cut[0].Attempts[0].Completed {
		t.Fatalf("applications after the cut = %+v (the end of the log is gone)", cut)
	}
	var cutJobs []uistore.JobData
	getWith(t, url+"/api/v1/applications/"+app+"/jobs", token, &cutJobs)
	if len(cutJobs) == 0 || len(cutJobs) > len(jobs) {
		t.Fatalf("%d jobs after the cut, had %d", len(cutJobs), len(jobs))
	}
	code, body := getWith(t, url+"/history/"+app+"/jobs/", token, nil)
	if code != http.StatusOK || !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "ends in the middle of an event") {
		t.Fatalf("jobs page of the cut log (%d):\n%s", code, body)
	}
	for _, page := range []string{"stages/", "executors/", "environment/"} {
		if code, _ := getWith(t, url+"/history/"+app+"/"+page, token, nil); code != http.StatusOK {
			t.Errorf("%s of the cut log: %d", page, code)
		}
	}
	if _, body := getWith(t, url+"/", token, nil); !strings.Contains(body, app) {
		t.Fatalf("application list:\n%s", body)
	}
}

func TestHistoryRefusesAMissingDir(t *testing.T) {
	_, errOut, code := runFlint(t, "history", "--dir", filepath.Join(t.TempDir(), "nope"), "--port", "0")
	if code != 1 || !strings.Contains(errOut, "history: --dir") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

// A driver killed with SIGKILL leaves a log that holds what it flushed
// (every second): the running job is there, and the history shows the
// application as in progress.
func TestKilledDriversEventLogHoldsItsRunningJob(t *testing.T) {
	logs := t.TempDir()
	cmd := exec.Command(flintBin, "submit", "--example", "pi", "--master", "local[1]",
		"--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir="+logs, "--conf", "flint.ui.enabled=false",
		"--", "100000", "100000000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var appDir string
	waitfor.True(t, 30*time.Second, "the running job's events in the log", func() bool {
		apps, _ := eventlog.Apps(logs)
		if len(apps) != 1 {
			return false
		}
		appDir = eventlog.AppDir(logs, apps[0])
		files, _ := eventlog.Files(appDir)
		for _, f := range files {
			if b, _ := os.ReadFile(f.Path); strings.Contains(string(b), `"Event":"TaskStart"`) {
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = cmd.Wait()
	st := uistore.New(uistore.Limits{})
	rep, err := eventlog.Replay(appDir, st)
	if err != nil {
		t.Fatal(err)
	}
	jobs := st.Jobs()
	if st.App().Completed || len(jobs) != 1 || jobs[0].Status != "RUNNING" || jobs[0].NumActiveTasks > 1 || jobs[0].NumTasks != 100000 {
		t.Fatalf("after SIGKILL: app %+v, jobs %+v, report %+v", st.App(), jobs, rep)
	}
}
