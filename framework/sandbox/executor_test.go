package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestMasterURLOfMasterInfo(t *testing.T) {
	ip, port := "10.0.0.1", int32(5050)
	for _, c := range []struct {
		mi   mesos.MasterInfo
		want string
	}{
		{mesos.MasterInfo{Hostname: ptr("m1"), Port: ptr(uint32(5050))}, "http://m1:5050"},
		{mesos.MasterInfo{Port: ptr(uint32(1)), Address: &mesos.Address{IP: &ip, Port: port}}, "http://10.0.0.1:5050"},
		{mesos.MasterInfo{}, ""},
	} {
		if got := MasterURL(c.mi); got != c.want {
			t.Errorf("MasterURL(%v) = %q, want %q", c.mi, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestLocateExecutorThroughMasterAndAgentState(t *testing.T) {
	var agentURL string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"flags": map[string]string{"work_dir": "/var/lib/mesos"}})
	}))
	defer agent.Close()
	agentURL = agent.URL
	master := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, hostPort, _ := strings.Cut(agentURL, "://")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"slaves": []map[string]string{{"id": "S1", "pid": "slave(1)@" + hostPort}},
			"frameworks": []map[string]any{{"id": "F1", "tasks": []map[string]string{
				{"id": "3", "slave_id": "S1"},                                            // a coarse executor: a command task
				{"id": "flint-task-9", "executor_id": "flint-fine-S1", "slave_id": "S1"}, // a fine task on its executor
			}}},
		})
	}))
	defer master.Close()
	for id, dir := range map[string]string{
		"3":             "/var/lib/mesos/slaves/S1/frameworks/F1/executors/3/runs/latest",
		"flint-fine-S1": "/var/lib/mesos/slaves/S1/frameworks/F1/executors/flint-fine-S1/runs/latest",
	} {
		loc, err := LocateExecutor(context.Background(), http.DefaultClient, master.URL, "F1", id)
		if err != nil || loc.AgentURL != agent.URL || loc.Dir != dir {
			t.Errorf("Locate(%s) = %+v, %v", id, loc, err)
		}
	}
	if _, err := LocateExecutor(context.Background(), http.DefaultClient, master.URL, "F1", "flint-task-9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a task run by an executor is not an executor: %v", err)
	}
	if _, err := LocateExecutor(context.Background(), http.DefaultClient, master.URL, "F2", "3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another framework's executor: %v", err)
	}
}

// TestDescribeMasksTheFetchToken: the dead executor's stderr holds the
// line Mesos' fetcher wrote with the file server's token; the report
// quotes the line with the token masked.
func TestDescribeMasksTheFetchToken(t *testing.T) {
	const token = "fetch-token-0123456789"
	stderr := "I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=" + token + "'\nFATAL: the disk is on fire\n"
	var agentURL string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/state":
			_ = json.NewEncoder(w).Encode(map[string]any{"flags": map[string]string{"work_dir": "/wd"}})
		case "/files/read":
			off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
			if off < 0 {
				_ = json.NewEncoder(w).Encode(map[string]any{"offset": len(stderr)})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"offset": off, "data": stderr[min(off, len(stderr)):]})
		default:
			http.NotFound(w, r)
		}
	}))
	defer agent.Close()
	agentURL = agent.URL
	master := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, hostPort, _ := strings.Cut(agentURL, "://")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"slaves":     []map[string]string{{"id": "S1", "pid": "slave(1)@" + hostPort}},
			"frameworks": []map[string]any{{"id": "F1", "tasks": []map[string]string{{"id": "3", "slave_id": "S1"}}}},
		})
	}))
	defer master.Close()
	got := Describe(context.Background(), http.DefaultClient, master.URL, Death{ExecutorID: "3", Host: "h", AgentID: "S1", FrameworkID: "F1", Lost: "stream broke"})
	want := "\n    I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=*****'\n    FATAL: the disk is on fire\n"
	if strings.Contains(got, token) || !strings.Contains(got, want) {
		t.Fatalf("Describe = %q, want it to contain %q and not the token", got, want)
	}
}
