package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/sandbox"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// fakeAgent serves /state and a growing stdout through /files/read.
type fakeAgent struct {
	mu      sync.Mutex
	content string
	paths   []string
	page    int // the most bytes one read answers; 0: no limit
}

func (f *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/state":
		json.NewEncoder(w).Encode(map[string]any{"flags": map[string]string{"work_dir": "/wd"}})
	case "/files/read":
		f.mu.Lock()
		defer f.mu.Unlock()
		f.paths = append(f.paths, r.URL.Query().Get("path"))
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		data := ""
		if off < len(f.content) {
			data = f.content[off:]
		}
		if f.page > 0 && len(data) > f.page {
			data = data[:f.page]
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "offset": off})
	default:
		http.NotFound(w, r)
	}
}

func fakeMasterFor(agentAddr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"slaves": []map[string]any{{"id": "M-S0", "pid": "slave(1)@" + agentAddr}},
			"frameworks": []map[string]any{{"id": "fw1", "tasks": []map[string]any{
				{"id": "cmd-task", "framework_id": "fw1", "slave_id": "M-S0"},
				{"id": "dup", "framework_id": "fw1", "slave_id": "M-S0"}}}},
			"completed_frameworks": []map[string]any{{"id": "fw0", "completed_tasks": []map[string]any{
				{"id": "exec-task", "framework_id": "fw0", "executor_id": "ex9", "slave_id": "M-S0"},
				{"id": "dup", "framework_id": "fw0", "slave_id": "M-S0"}}}},
		})
	})
}

func TestLogsFindsTheSandboxThroughMasterAndAgent(t *testing.T) {
	agent := &fakeAgent{content: "line one\n"}
	as := httptest.NewServer(agent)
	defer as.Close()
	ms := httptest.NewServer(fakeMasterFor(strings.TrimPrefix(as.URL, "http://")))
	defer ms.Close()
	ctx := context.Background()

	s, err := sandbox.Locate(ctx, http.DefaultClient, ms.URL, "", "exec-task")
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != "/wd/slaves/M-S0/frameworks/fw0/executors/ex9/runs/latest" || s.AgentURL != as.URL {
		t.Fatalf("sandbox = %+v", s)
	}
	s, err = sandbox.Locate(ctx, http.DefaultClient, ms.URL, "", "cmd-task")
	if err != nil || s.Dir != "/wd/slaves/M-S0/frameworks/fw1/executors/cmd-task/runs/latest" {
		t.Fatalf("command task sandbox = %+v, %v (executor id must default to the task id)", s, err)
	}
	var out bytes.Buffer
	if err := readSandboxFile(ctx, &out, s, "stderr", false); err != nil || out.String() != "line one\n" {
		t.Fatalf("read: %q, %v", out.String(), err)
	}
	if agent.paths[0] != s.Dir+"/stderr" {
		t.Fatalf("read path %q", agent.paths[0])
	}
	if _, err := sandbox.Locate(ctx, http.DefaultClient, ms.URL, "", "nope"); err == nil || !strings.Contains(err.Error(), `no task "nope"`) {
		t.Fatalf("unknown task: %v", err)
	}
	if _, err := sandbox.Locate(ctx, http.DefaultClient, ms.URL, "", "dup"); err == nil || !strings.Contains(err.Error(), "--framework") {
		t.Fatalf("ambiguous task: %v", err)
	}
	if s, err := sandbox.Locate(ctx, http.DefaultClient, ms.URL, "fw0", "dup"); err != nil || !strings.Contains(s.Dir, "/frameworks/fw0/") {
		t.Fatalf("--framework fw0: %+v, %v", s, err)
	}
}

func TestLogsFollowPrintsGrowth(t *testing.T) {
	agent := &fakeAgent{content: "first\n"}
	as := httptest.NewServer(agent)
	defer as.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- readSandboxFile(ctx, lockedWriter{&mu, &out}, sandbox.Sandbox{AgentURL: as.URL, Dir: "/d"}, "stdout", true)
	}()
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	// The file grows only once its first content has been read.
	waitfor.True(t, 5*time.Second, "the first read", func() bool { return output() == "first\n" })
	agent.mu.Lock()
	agent.content += "second\n"
	agent.mu.Unlock()
	waitfor.Msg(t, 5*time.Second, func() string {
		if got := output(); got != "first\nsecond\n" {
			return fmt.Sprintf("followed output %q", got)
		}
		return ""
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestLogsMaskTheFetchToken reads a stderr holding the line Mesos' fetcher
// writes, with the file server's token, in pages that cut the token in
// two: no part of it is printed.
func TestLogsMaskTheFetchToken(t *testing.T) {
	const token = "fetch-token-0123456789"
	line := "I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=" + token + "'\n"
	for _, page := range []int{0, 7, len(line) - len(token) + 4} {
		agent := &fakeAgent{content: "first\n" + line + "last", page: page}
		as := httptest.NewServer(agent)
		var out bytes.Buffer
		err := readSandboxFile(context.Background(), &out, sandbox.Sandbox{AgentURL: as.URL, Dir: "/d"}, "stderr", false)
		as.Close()
		want := "first\nI1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=*****'\nlast"
		if err != nil || out.String() != want {
			t.Errorf("pages of %d bytes: %q, %v; want %q", page, out.String(), err, want)
		}
	}
}
