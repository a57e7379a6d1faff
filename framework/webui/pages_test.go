package webui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestPagesRenderTheStore(t *testing.T) {
	explained := map[int]bool{}
	srv := serve(t, Options{Explain: func(stage, index int) (Explanation, error) {
		explained[index] = true
		if index == 2 {
			return Explanation{}, errors.New("no such task")
		}
		return Explanation{Reason: "NO_OFFER_FITS", Detail: "largest offer has 0 free cores"}, nil
	}})
	for path, want := range map[string][]string{
		"/jobs/":                            {`data-job="0"`, "wordcount", `class="status SUCCEEDED"`, `data-job="1"`, "RUNNING", `http-equiv="refresh"`},
		"/jobs/job/?id=0":                   {`aria-label="stage DAG"`, `data-stage="0"`, `data-stage="1"`, `data-from="0" data-to="1"`, "reduce"},
		"/stages/":                          {`data-stage="2"`, `data-stage="0"`, "ACTIVE", "2/2 (1 failed)"},
		"/stages/stage/?id=0&attempt=0":     {`data-task="1"`, "fetch failed: &lt;connection refused&gt;", "agent-b", "1.5 KiB"},
		"/stages/stage/?id=2&attempt=0":     {`id="pending"`, `data-index="1"`, "NO_OFFER_FITS", "largest offer has 0 free cores", "no such task"},
		"/executors/":                       {`data-executor="1"`, `data-executor="2"`, "Dead: agent lost", "no sandbox"},
		"/environment/":                     {"flint.authenticate.secret", "*****"},
		"/history/app-1/jobs/":              {"wordcount"},
		"/stages/stage/?id=0&attempt=9":     {"unknown stage 0 attempt 9"},
		"/executors/logs/?id=1&file=stdout": {"no Mesos sandbox"},
	} {
		_, body := get(t, srv, path)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q:\n%s", path, w, body)
			}
		}
	}
	if !explained[1] || !explained[2] || explained[0] {
		t.Errorf("explained %v, want the pending indices 1 and 2 only", explained)
	}
	if code, _ := get(t, srv, "/"); code != http.StatusOK { // redirected to /jobs/
		t.Errorf("GET / = %d", code)
	}
}

func TestExecutorLogsComeFromTheAgentsFilesEndpoint(t *testing.T) {
	stdout := strings.Repeat("x", logTail) + "\nlast line <b>\n"
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/files/read" || q.Get("path") != "/work/slaves/a1/frameworks/f1/executors/1/runs/latest/stdout" {
			http.Error(w, "File not found", http.StatusNotFound)
			return
		}
		if q.Get("offset") == "-1" {
			_ = json.NewEncoder(w).Encode(filesRead{Offset: int64(len(stdout))})
			return
		}
		from := len(stdout) - logTail
		if q.Get("offset") != "15" || q.Get("length") != "65536" || from != 15 {
			http.Error(w, "unexpected page "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(filesRead{Offset: 15, Data: stdout[15:]})
	}))
	defer agent.Close()
	srv := serve(t, Options{Sandbox: func(_ context.Context, id string) (Sandbox, error) {
		if id != "1" {
			return Sandbox{}, errors.New("unknown executor")
		}
		return Sandbox{AgentURL: agent.URL, Dir: "/work/slaves/a1/frameworks/f1/executors/1/runs/latest"}, nil
	}})
	_, body := get(t, srv, "/executors/logs/?id=1&file=stdout")
	if !strings.Contains(body, "last line &lt;b&gt;") || !strings.Contains(body, "last 64.0 KiB of 64.0 KiB") {
		t.Fatalf("logs page:\n%s", body[max(0, len(body)-600):])
	}
	if code, body := get(t, srv, "/executors/logs/?id=1&file=stderr"); code != http.StatusBadGateway || !strings.Contains(body, "404") {
		t.Fatalf("missing stderr: %d %s", code, body)
	}
	if code, _ := get(t, srv, "/executors/logs/?id=1&file=../etc/passwd"); code != http.StatusBadRequest {
		t.Fatalf("file outside the two logs: %d", code)
	}
	_, body = get(t, srv, "/executors/")
	if !strings.Contains(body, "executors/logs/?id=1&amp;file=stderr") {
		t.Fatalf("executors page has no log links:\n%s", body)
	}
	var xs []struct {
		ExecutorLogs map[string]string `json:"executorLogs"`
	}
	_, body = get(t, srv, "/api/v1/applications/app-1/executors")
	if err := json.Unmarshal([]byte(body), &xs); err != nil || !strings.HasSuffix(xs[0].ExecutorLogs["stdout"], "/executors/logs/?id=1&file=stdout") {
		t.Fatalf("executorLogs = %+v (%v)", xs, err)
	}
}

// TestExecutorLogsMaskTheFetchToken: Mesos' fetcher writes the URIs it
// fetched into the sandbox's stderr, the file server's token included;
// the logs page shows neither it nor the end of one cut by the page's
// window.
func TestExecutorLogsMaskTheFetchToken(t *testing.T) {
	const token = "fetch-token-0123456789"
	fetched := "I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=" + token + "'\n"
	for _, stderr := range []string{
		fetched + "FATAL: the disk is on fire\n",
		// the window of the last logTail bytes starts inside the token
		fetched + strings.Repeat("y", logTail-len(token)/2-len("'\n")) + "\nFATAL: the disk is on fire\n",
	} {
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if q.Get("offset") == "-1" {
				_ = json.NewEncoder(w).Encode(filesRead{Offset: int64(len(stderr))})
				return
			}
			off, _ := strconv.Atoi(q.Get("offset"))
			_ = json.NewEncoder(w).Encode(filesRead{Offset: int64(off), Data: stderr[off:]})
		}))
		srv := serve(t, Options{Sandbox: func(_ context.Context, id string) (Sandbox, error) {
			return Sandbox{AgentURL: agent.URL, Dir: "/work/x"}, nil
		}})
		code, body := get(t, srv, "/executors/logs/?id=1&file=stderr")
		agent.Close()
		if code != http.StatusOK || !strings.Contains(body, "FATAL: the disk is on fire") {
			t.Fatalf("logs page: %d\n%s", code, body[max(0, len(body)-600):])
		}
		if strings.Contains(body, token[len(token)/2:]) {
			t.Fatalf("the page shows (part of) the fetch token:\n%s", body[max(0, len(body)-600):])
		}
		if len(stderr) <= logTail && !strings.Contains(body, "token=*****") {
			t.Fatalf("the page does not show the masked URL:\n%s", body[max(0, len(body)-600):])
		}
	}
}

// Pending tasks that all wait for a busy slot are one line, not a row each
// (issue 23, item 6); tasks waiting for different reasons keep their rows.
func TestPendingTasksWaitingForSlotsAreSummarised(t *testing.T) {
	srv := serve(t, Options{Explain: func(stage, index int) (Explanation, error) {
		return Explanation{Reason: ReasonSlotsBusy, Detail: "every slot busy (4 slots)", Slots: 4}, nil
	}})
	_, body := get(t, srv, "/stages/stage/?id=2&attempt=0")
	if !strings.Contains(body, `<p id="pending-summary">every slot busy, 2 tasks waiting, 4 slots</p>`) || strings.Contains(body, `id="pending"`) {
		t.Errorf("stage page should summarise the two waiting tasks in one line:\n%s", body)
	}
}
