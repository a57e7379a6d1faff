package integration

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// An update the framework does not acknowledge is resent (same uuid)
// until it is, and the task's next update waits behind it: only the head
// of a task's stream is in flight.
func TestUpdatesRetriedUntilAcked(t *testing.T) {
	e := startCluster(t, 1)
	agentID := e.c.Agents[0].ID()
	s := e.subscribe(protobuf, fwInfo("retry", false))
	s.mu.Lock()
	s.hold = func(st mesos.TaskStatus) bool {
		return st.TaskID.Value == "f" && (st.GetState() == mesos.TASK_RUNNING || st.GetState() == mesos.TASK_FINISHED)
	}
	s.mu.Unlock()
	s.launch(s.offer(agentID), executorTask("f", "finish", executorInfo("ex", protobuf)))

	var running mesos.TaskStatus
	s.waitEvent("RUNNING of f resent twice", func(*scheduler.Event) bool {
		n := 0
		for _, ev := range s.snapshot() {
			if ev.GetType() == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == "f" && ev.Update.Status.GetState() == mesos.TASK_RUNNING {
				if n > 0 && !bytes.Equal(ev.Update.Status.UUID, running.UUID) {
					t.Fatalf("second RUNNING with another uuid")
				}
				running = ev.Update.Status
				n++
			}
		}
		return n >= 3
	})
	if got := stateNames(s.updates("f")); got != "RUNNING" {
		t.Fatalf("updates %s before RUNNING was acknowledged, want RUNNING only", got)
	}
	s.mustCall(calls.Acknowledge(agentID, "f", running.UUID))
	s.waitState("f", mesos.TASK_FINISHED)
	s.expectUpdates("f", agentID, "RUNNING,FINISHED")
	// The acknowledged RUNNING is not resent any more. FINISHED follows it
	// only once the agent has the acknowledgement; while FINISHED (held
	// unacknowledged) is resent twice, retry periods pass in which a
	// RUNNING resend would show.
	count := func(uuid []byte) int {
		n := 0
		for _, ev := range s.snapshot() {
			if ev.GetType() == scheduler.Event_UPDATE && bytes.Equal(ev.Update.Status.UUID, uuid) {
				n++
			}
		}
		return n
	}
	finished := s.waitState("f", mesos.TASK_FINISHED)
	before := count(running.UUID)
	s.waitEvent("FINISHED of f resent twice", func(*scheduler.Event) bool { return count(finished.UUID) >= 3 })
	if n := count(running.UUID); n != before {
		t.Fatalf("acknowledged RUNNING still resent (%d then %d times)", before, n)
	}
	s.mustCall(calls.Acknowledge(agentID, "f", finished.UUID))
}

func tgz(t *testing.T, name, content string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(content))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// Task and executor URIs are fetched from an HTTP server into the sandbox
// before the command runs (plain, executable, extracted archive); a
// missing URI fails the task with REASON_CONTAINER_LAUNCH_FAILED before it
// starts, for command tasks and custom executors alike.
func TestFetchURIs(t *testing.T) {
	archive := tgz(t, "data/inside.txt", "from the archive")
	mux := http.NewServeMux()
	mux.HandleFunc("/payload.txt", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) })
	mux.HandleFunc("/run.sh", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("#!/bin/sh\ntest \"$(cat payload.txt)\" = hello && test \"$(cat data/inside.txt)\" = 'from the archive'\n"))
	})
	mux.HandleFunc("/bundle.tar.gz", func(w http.ResponseWriter, _ *http.Request) { w.Write(archive) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	e := startCluster(t, 1)
	agentID := e.c.Agents[0].ID()
	s := e.subscribe(jsonCodec, fwInfo("fetch", false))
	yes := true
	ok := commandTask("ok", "./run.sh")
	ok.Command.URIs = []mesos.CommandInfo_URI{
		{Value: srv.URL + "/payload.txt"},
		{Value: srv.URL + "/run.sh", Executable: &yes},
		{Value: srv.URL + "/bundle.tar.gz"},
	}
	missing := commandTask("missing", "true")
	missing.Command.URIs = []mesos.CommandInfo_URI{{Value: srv.URL + "/payload.txt"}, {Value: srv.URL + "/nope"}}
	ex := executorInfo("ex-missing", jsonCodec)
	ex.Command.URIs = []mesos.CommandInfo_URI{{Value: srv.URL + "/nope"}}
	s.launch(s.offer(agentID), ok, missing, executorTask("ex-task", "finish", ex))

	s.waitState("ok", mesos.TASK_FINISHED)
	s.expectUpdates("ok", agentID, "STARTING,RUNNING,FINISHED")
	for _, id := range []string{"missing", "ex-task"} {
		st := s.waitState(id, mesos.TASK_FAILED)
		s.expectUpdates(id, agentID, "FAILED")
		if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || st.GetSource() != mesos.SOURCE_AGENT {
			t.Fatalf("task %s: %v %v %q", id, st.GetSource(), st.GetReason(), st.GetMessage())
		}
	}
	s.waitEvent("FAILURE of ex-missing", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetExecutorID().GetValue() == "ex-missing"
	})
}
