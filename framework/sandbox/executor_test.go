package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
