package agent

import (
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// An agent stopped without killing its processes and restarted on the same
// work dir re-attaches to a checkpointing framework's executor (which
// re-subscribes) and command task, and kills a non-checkpointing
// framework's executor. No task of the checkpointing framework is lost.
func TestRestartRecovery(t *testing.T) {
	workDir := t.TempDir()
	m := newFakeMaster()
	cfg := fastConfig(t, workDir)
	a1 := startAgent(t, m, cfg)
	ck, nc := fwInfo("ck", true), fwInfo("nc", false)
	runTask(t, a1, ck, executorTask("r", "run", executorInfo("exck")))
	runTask(t, a1, ck, cmdTask("cmd", "sleep 100"))
	runTask(t, a1, nc, executorTask("n", "run", executorInfo("exnc")))
	m.waitState(t, "r", mesos.TASK_RUNNING)
	m.waitState(t, "cmd", mesos.TASK_RUNNING)
	m.waitState(t, "n", mesos.TASK_RUNNING)

	a1.Stop()
	a1.srv.Close()
	time.Sleep(50 * time.Millisecond)

	cfg.Endpoint = a1.cfg.Endpoint // executors know this address
	m2 := newFakeMaster()
	m2.nextID = "S-new" // must not be used: the agent re-registers as S1
	a2 := startAgent(t, m2, cfg)
	if a2.ID() != "S1" {
		t.Fatalf("recovered agent id %q", a2.ID())
	}
	reg := m2.registrations()[0]
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 2 || len(reg.Tasks) != 2 {
		t.Fatalf("re-registration: id %v, %d executors, %d tasks", reg.AgentInfo.ID, len(reg.Executors), len(reg.Tasks))
	}
	for _, tk := range reg.Tasks {
		if tk.GetState() != mesos.TASK_RUNNING {
			t.Fatalf("reported task %s in %v", tk.TaskID.Value, tk.GetState())
		}
	}
	ncSandbox := filepath.Join(workDir, "slaves/S1/frameworks/nc")
	if procs := processesIn(ncSandbox); len(procs) > 0 {
		t.Fatalf("non-checkpointing executor survived the restart: %v", procs)
	}
	// The executor re-subscribed: a KILL reaches it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a2.mu.Lock()
		ex := a2.frameworks["ck"].executors["exck"]
		subscribed := ex != nil && ex.sub != nil
		a2.mu.Unlock()
		if subscribed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("executor never re-subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	m2.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *ck.ID, TaskID: mesos.TaskID{Value: "r"}}})
	m2.waitState(t, "r", mesos.TASK_KILLED)
	m2.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *ck.ID, TaskID: mesos.TaskID{Value: "cmd"}}})
	m2.waitState(t, "cmd", mesos.TASK_KILLED)
	for _, task := range []string{"r", "cmd"} {
		for _, st := range m2.states(task) {
			if s := st.GetState(); s == mesos.TASK_LOST || s == mesos.TASK_FAILED {
				t.Fatalf("task %s lost across the restart: %v %q", task, s, st.GetMessage())
			}
		}
	}
}

// After ErrUnknownAgent (the master forgot the agent) the agent
// re-registers, reporting what runs.
func TestReregisterOnUnknownAgent(t *testing.T) {
	m := newFakeMaster()
	a := startAgent(t, m, fastConfig(t, t.TempDir()))
	runTask(t, a, fwInfo("fw", true), executorTask("r", "run", executorInfo("ex")))
	m.waitState(t, "r", mesos.TASK_RUNNING)
	m.mu.Lock()
	m.unknown = 1
	m.mu.Unlock()
	m.deliver(t, link.MasterMessage{Ping: &link.Ping{Seq: 1}})
	deadline := time.Now().Add(10 * time.Second)
	for len(m.registrations()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("agent did not re-register")
		}
		time.Sleep(5 * time.Millisecond)
	}
	reg := m.registrations()[1]
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 1 || len(reg.Tasks) != 1 || len(reg.Frameworks) != 1 {
		t.Fatalf("re-registration %+v", reg)
	}
}
