package integration

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// A framework with a failover_timeout fails over: a second scheduler
// subscribes with the same framework id while the first is connected (the
// first gets ERROR "Framework failed over"), finds its running tasks by
// implicit reconciliation, and still talks to its executor and kills its
// task. Nothing is lost across the failover.
func TestFrameworkFailoverKeepsTasks(t *testing.T) {
	e := startCluster(t, 1)
	agentID := e.c.Agents[0].ID()
	fi := fwInfo("failover", false)
	timeout := 30.0
	fi.FailoverTimeout = &timeout
	s1 := e.subscribe(protobuf, fi)
	s1.launch(s1.offer(agentID), executorTask("r", "run", executorInfo("fex", protobuf)), commandTask("c", "sleep 30"))
	s1.waitState("r", mesos.TASK_RUNNING)
	s1.waitState("c", mesos.TASK_RUNNING)
	s1.waitAcked("r", mesos.TASK_RUNNING)
	s1.waitAcked("c", mesos.TASK_RUNNING)

	failover := *fi
	s2 := subscribeTo(t, e.schedulerURL(), jsonCodec, &failover)
	if s2.id != s1.id {
		t.Fatalf("failed-over framework got id %q, want %q", s2.id, s1.id)
	}
	errEv := s1.waitEvent("ERROR on the old stream", func(ev *scheduler.Event) bool { return ev.GetType() == scheduler.Event_ERROR })
	if !strings.Contains(errEv.Error.Message, "failed over") {
		t.Fatalf("ERROR %q", errEv.Error.Message)
	}
	s2.mustCall(calls.Reconcile())
	for _, id := range []string{"r", "c"} {
		st := s2.waitEvent("reconciliation of "+id, func(ev *scheduler.Event) bool {
			st := ev.GetUpdate().GetStatus()
			return ev.GetType() == scheduler.Event_UPDATE && st.TaskID.Value == id && st.GetReason() == mesos.REASON_RECONCILIATION
		}).Update.Status
		if st.GetState() != mesos.TASK_RUNNING || len(st.UUID) != 0 || st.GetAgentID().GetValue() != agentID {
			t.Fatalf("reconciled %s: %v uuid=%x agent %v", id, st.GetState(), st.UUID, st.GetAgentID())
		}
	}
	s2.mustCall(calls.Message(agentID, "fex", []byte("after failover")))
	s2.waitEvent("echo", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_MESSAGE && string(ev.Message.Data) == "echo:after failover"
	})
	s2.mustCall(calls.Kill("r", agentID))
	s2.mustCall(calls.Kill("c", agentID))
	s2.waitState("r", mesos.TASK_KILLED)
	s2.waitState("c", mesos.TASK_KILLED)
	for _, s := range []*sched{s1, s2} {
		for _, id := range []string{"r", "c"} {
			for _, st := range s.updates(id) {
				if st.GetState() == mesos.TASK_LOST || st.GetState() == mesos.TASK_FAILED {
					t.Fatalf("task %s went %v", id, st.GetState())
				}
			}
		}
	}
}

// A disconnected framework whose failover_timeout expires is removed: its
// tasks are killed on the agents (no process of it is left) and /state
// lists it as completed with its tasks KILLED.
func TestFailoverTimeoutExpiryKillsTasks(t *testing.T) {
	e := startCluster(t, 1)
	agentID := e.c.Agents[0].ID()
	fi := fwInfo("expiring", true)
	timeout := 0.3
	fi.FailoverTimeout = &timeout
	s := e.subscribe(protobuf, fi)
	s.launch(s.offer(agentID), executorTask("r", "run", executorInfo("xex", protobuf)), commandTask("c", "sleep 30"))
	s.waitState("r", mesos.TASK_RUNNING)
	s.waitState("c", mesos.TASK_RUNNING)
	if procs := liveProcesses("", []string{s.id}); len(procs) < 2 {
		t.Fatalf("expected the executor and the command running, found %v", procs)
	}
	s.close()
	eventually(t, func() string {
		if procs := liveProcesses("", []string{s.id}); len(procs) > 0 {
			return "processes of the expired framework still running: " + strings.Join(procs, "; ")
		}
		return ""
	})
	eventually(t, func() string {
		if got := completedFramework(t, e.c.URL(), s.id); got != "r=TASK_KILLED c=TASK_KILLED" && got != "c=TASK_KILLED r=TASK_KILLED" {
			return "completed framework tasks: " + got
		}
		return ""
	})
}

// TEARDOWN removes the framework at once: every task on every agent is
// killed, every process it started is gone, and its event stream ends.
func TestTeardownKillsEveryProcess(t *testing.T) {
	e := startCluster(t, 2)
	s := e.subscribe(jsonCodec, fwInfo("teardown", true))
	for i, a := range e.c.Agents {
		n := string(rune('0' + i))
		s.launch(s.offer(a.ID()),
			commandTask("sleep"+n, "sleep 30 & sleep 30; wait"),
			executorTask("exec"+n, "run", executorInfo("tex"+n, jsonCodec)))
	}
	for _, id := range []string{"sleep0", "sleep1", "exec0", "exec1"} {
		s.waitState(id, mesos.TASK_RUNNING)
	}
	if procs := liveProcesses("", []string{s.id}); len(procs) < 6 {
		t.Fatalf("expected at least 6 processes (2 shells, 2×2 sleeps, 2 executors), found %v", procs)
	}
	s.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	eventually(t, func() string {
		if procs := liveProcesses("", []string{s.id}); len(procs) > 0 {
			return "processes survived TEARDOWN: " + strings.Join(procs, "; ")
		}
		return ""
	})
	select {
	case <-s.done:
	case <-time.After(waitTimeout):
		t.Fatal("event stream still open after TEARDOWN")
	}
	eventually(t, func() string {
		got := completedFramework(t, e.c.URL(), s.id)
		for _, id := range []string{"sleep0", "sleep1", "exec0", "exec1"} {
			if !strings.Contains(got, id+"=TASK_KILLED") {
				return "completed framework tasks: " + got
			}
		}
		return ""
	})
}
