package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
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

	cfg.Endpoint = a1.cfg.Endpoint // executors know this address
	m2 := newFakeMaster()
	m2.nextID = "S-new" // must not be used: the agent re-registers as S1
	a2 := startAgent(t, m2, cfg)
	if a2.ID() != "S1" {
		t.Fatalf("recovered agent id %q", a2.ID())
	}
	reg := m2.registrations()[0]
	// exck and both tasks; not the command executor the agent generated
	// for "cmd" (Mesos' agent does not re-register those).
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 1 || reg.Executors[0].Info.ExecutorID.Value != "exck" || len(reg.Tasks) != 2 {
		t.Fatalf("re-registration: id %v, executors %v, %d tasks", reg.AgentInfo.ID, reg.Executors, len(reg.Tasks))
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
	waitfor.True(t, 10*time.Second, "the executor to re-subscribe", func() bool {
		a2.mu.Lock()
		defer a2.mu.Unlock()
		ex := a2.frameworks["ck"].executors["exck"]
		return ex != nil && ex.sub != nil
	})
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

// A master that does not know the agent (it restarted) ignores its
// messages, as Mesos' does: a refused message is no reason to re-register
// (the agent keeps answering pings, so it stays put), but once the master
// is silent for five ping intervals the agent re-registers, reporting
// what runs.
func TestUnknownAgentWaitsForItsPingTimeout(t *testing.T) {
	const every = 50 * time.Millisecond
	m, a := watchdogAgent(t, every)
	runTask(t, a, fwInfo("fw", true), executorTask("r", "run", executorInfo("ex")))
	m.waitState(t, "r", mesos.TASK_RUNNING)
	m.mu.Lock()
	m.unknown = 1
	m.mu.Unlock()
	// The agent's next message (the pong to ping 1) is refused as from an
	// unknown agent; then pingFor waits for the agent to answer every later
	// ping, on the agent's clock.
	var seq uint64 = 1
	m.deliver(t, link.MasterMessage{Ping: &link.Ping{Seq: seq}})
	waitfor.True(t, 30*time.Second, "a message refused as from an unknown agent", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.unknown == 0
	})
	lastPing := pingFor(t, m, &seq, every/2, 12*every)
	if n := len(m.registrations()); n != 1 {
		t.Fatalf("%d registrations after a message was refused as unknown while pings arrived; want 1", n)
	}
	silence(t, m, every/5)
	m.mu.Lock()
	after := m.regAt[1].Sub(lastPing)
	m.mu.Unlock()
	if after <= 5*every {
		t.Fatalf("re-registered %v after the last ping on its clock, before five intervals (%v)", after, 5*every)
	}
	reg := m.registrations()[1]
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 1 || len(reg.Tasks) != 1 || len(reg.Frameworks) != 1 {
		t.Fatalf("re-registration %+v", reg)
	}
}

// A non-checkpointing framework's run record holds its process (what a
// restarted agent needs to kill it) and none of its tasks: their TaskInfos
// carry the tasks' data, megabytes for large inputs, which the agent must
// not encode under its lock (fine TestLargeTaskInputs timed out under
// load when it did: pings went unanswered and an executor's SUBSCRIBE
// waited past its 5 s header timeout). A checkpointing framework's record
// keeps its tasks, which recovery needs, without the data of those already
// launched (the executor has it; only queued tasks are sent again).
func TestRunRecordOfNonCheckpointingFrameworkHasNoTasks(t *testing.T) {
	workDir := t.TempDir()
	m := newFakeMaster()
	a := startAgent(t, m, fastConfig(t, workDir))
	data := strings.Repeat("d", 1<<20)
	nc, ck := fwInfo("nc", false), fwInfo("ck", true)
	runTask(t, a, nc, executorTask("n", data, executorInfo("exnc")))
	runTask(t, a, ck, executorTask("c", data, executorInfo("exck")))
	m.waitState(t, "n", mesos.TASK_RUNNING)
	m.waitState(t, "c", mesos.TASK_RUNNING)
	a.ckpt.sync() // the records are written after the agent's lock is released
	read := func(fw, ex string) runState {
		t.Helper()
		paths, _ := filepath.Glob(filepath.Join(workDir, "meta/slaves/S1/frameworks", fw, "executors", ex, "runs/*/run.json"))
		if len(paths) != 1 {
			t.Fatalf("%s run records: %v", ex, paths)
		}
		b, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		var rs runState
		if err := json.Unmarshal(b, &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	if rs := read("nc", "exnc"); rs.Pid <= 0 || rs.StartTime == 0 || len(rs.Tasks) != 0 {
		t.Fatalf("non-checkpointing run record: pid %d, start %d, %d tasks; want the process and no tasks", rs.Pid, rs.StartTime, len(rs.Tasks))
	}
	rs := read("ck", "exck")
	if rs.Pid <= 0 || len(rs.Tasks) != 1 {
		t.Fatalf("checkpointing run record: pid %d, %d tasks; want the process and task c", rs.Pid, len(rs.Tasks))
	}
	if tk := rs.Tasks[0]; tk.Info.TaskID.Value != "c" || !tk.Launched || len(tk.Info.Data) != 0 {
		t.Fatalf("checkpointed task %q launched %v with %d bytes of data; want launched task c without its data", tk.Info.TaskID.Value, tk.Launched, len(tk.Info.Data))
	}
}
