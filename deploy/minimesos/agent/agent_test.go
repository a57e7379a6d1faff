package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestCommandTaskLifecycle(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw1", false)
	runTask(t, ta, fw, cmdTask("echo", "echo hello $MESOS_EXECUTOR_ID"))
	runTask(t, ta, fw, cmdTask("exit3", "exit 3"))

	fin := m.waitState(t, "echo", mesos.TASK_FINISHED)
	if got := stateNames(m.states("echo")); got != "TASK_STARTING,TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("echo updates %s", got)
	}
	if fin.AgentID.GetValue() != "S1" || fin.ExecutorID.GetValue() != "echo" || *fin.Source != mesos.SOURCE_EXECUTOR {
		t.Fatalf("finished status %+v", fin)
	}
	if fin.GetMessage() != "Command exited with status 0" {
		t.Fatalf("message %q", fin.GetMessage())
	}
	sb := filepath.Join(ta.workDir, "slaves/S1/frameworks/fw1/executors/echo/runs/latest")
	out, err := os.ReadFile(filepath.Join(sb, "stdout"))
	if err != nil || string(out) != "hello echo\n" {
		t.Fatalf("stdout %q, %v", out, err)
	}
	failed := m.waitState(t, "exit3", mesos.TASK_FAILED)
	if failed.GetMessage() != "Command exited with status 3" || failed.GetReason() != mesos.REASON_COMMAND_EXECUTOR_FAILED {
		t.Fatalf("failed status %q %v", failed.GetMessage(), failed.GetReason())
	}
	if e := m.waitExited(t, "exit3"); e.FrameworkID.Value != "fw1" {
		t.Fatalf("exited %+v", e)
	}
	// A second task on a command executor (same id) fails.
	ta.mu.Lock()
	f := ta.frameworks["fw1"]
	if f == nil { // forgotten once both tasks ended and were acknowledged
		f = &framework{info: fw, executors: map[string]*execRun{}}
		ta.frameworks["fw1"] = f
	}
	f.executors["dup"] = &execRun{fw: f, tasks: map[string]*task{}, state: exRunning}
	ta.mu.Unlock()
	runTask(t, ta, fw, cmdTask("dup", "true"))
	if st := m.waitState(t, "dup", mesos.TASK_FAILED); !strings.Contains(st.GetMessage(), "multiple tasks") {
		t.Fatalf("dup: %q", st.GetMessage())
	}
	ta.mu.Lock()
	delete(f.executors, "dup")
	ta.mu.Unlock()
}

func TestCommandMissing(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	no := false
	task := cmdTask("missing", "no-such-command-xyz")
	task.Command.Shell = &no
	runTask(t, ta, fwInfo("fw", false), task)
	st := m.waitState(t, "missing", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), "not found") {
		t.Fatalf("status %v %q", st.GetReason(), st.GetMessage())
	}
	runTask(t, ta, fwInfo("fw", false), cmdTask("missing-sh", "no-such-command-xyz"))
	if st := m.waitState(t, "missing-sh", mesos.TASK_FAILED); st.GetMessage() != "Command exited with status 127" {
		t.Fatalf("shell: %q", st.GetMessage())
	}
	// A user that does not exist fails the launch with a clear reason.
	task = cmdTask("baduser", "true")
	u := "no-such-user-xyz"
	task.Command.User = &u
	runTask(t, ta, fwInfo("fw", false), task)
	if st := m.waitState(t, "baduser", mesos.TASK_FAILED); !strings.Contains(st.GetMessage(), `user "no-such-user-xyz" does not exist`) {
		t.Fatalf("bad user: %q", st.GetMessage())
	}
}

// A task ignoring SIGTERM is killed with SIGKILL after the kill policy's
// grace period and reported KILLED; frameworks with TASK_KILLING_STATE
// see TASK_KILLING first.
func TestCommandKillIgnoringSIGTERM(t *testing.T) {
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	clk := clock.NewFake(time.Time{})
	cfg.Clock = clk
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)
	fw.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE}}
	trapped := filepath.Join(t.TempDir(), "trapped")
	ticks := filepath.Join(t.TempDir(), "ticks")
	task := cmdTask("stubborn", "trap '' TERM; touch "+trapped+"; while :; do echo tick >> "+ticks+"; sleep 0.02; done")
	task.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(300 * time.Millisecond)}}
	runTask(t, ta, fw, task)
	m.waitState(t, "stubborn", mesos.TASK_RUNNING)
	waitfor.True(t, 10*time.Second, "the shell to install its trap", func() bool { return exists(trapped) })
	m.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *fw.ID, TaskID: task.TaskID}})
	// SIGTERM is sent, then SIGKILL armed for the kill policy's grace on
	// the agent's clock: the task ends only once that has passed.
	waitfor.True(t, 10*time.Second, "SIGKILL armed for the task's grace period", func() bool { return clk.HasPending(300 * time.Millisecond) })
	m.waitState(t, "stubborn", mesos.TASK_KILLING)
	count := func() int { b, _ := os.ReadFile(ticks); return strings.Count(string(b), "tick\n") }
	n := count()
	waitfor.True(t, 10*time.Second, "a tick after SIGTERM (the task ignores it)", func() bool { return count() > n })
	if got := stateNames(m.states("stubborn")); got != "TASK_STARTING,TASK_RUNNING,TASK_KILLING" {
		t.Fatalf("updates before the grace period passed: %s", got)
	}
	clk.Advance(300 * time.Millisecond)
	st := m.waitState(t, "stubborn", mesos.TASK_KILLED)
	if st.GetMessage() != "Command terminated with signal Killed" {
		t.Fatalf("message %q", st.GetMessage())
	}
	if got := stateNames(m.states("stubborn")); got != "TASK_STARTING,TASK_RUNNING,TASK_KILLING,TASK_KILLED" {
		t.Fatalf("updates %s", got)
	}
	if procs := processesIn(ta.workDir); len(procs) > 0 {
		t.Fatalf("process tree survived the kill: %v", procs)
	}
}

func TestCustomExecutor(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", false)
	ex := executorInfo("ex1")
	runTask(t, ta, fw, executorTask("t1", "finish", ex))
	runTask(t, ta, fw, executorTask("t2", "run", ex))
	m.waitState(t, "t1", mesos.TASK_FINISHED)
	if got := stateNames(m.states("t1")); got != "TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("t1 updates %s", got)
	}
	m.waitState(t, "t2", mesos.TASK_RUNNING)
	m.deliver(t, link.MasterMessage{FrameworkMessage: &link.FrameworkMessage{FrameworkID: *fw.ID, ExecutorID: ex.ExecutorID, Data: []byte("ping")}})
	waitfor.True(t, 10*time.Second, "the executor's message to reach the master", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.msgs) > 0
	})
	m.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *fw.ID, TaskID: mesos.TaskID{Value: "t2"}}})
	m.waitState(t, "t2", mesos.TASK_KILLED)

	runTask(t, ta, fw, executorTask("t3", "run", ex))
	m.waitState(t, "t3", mesos.TASK_RUNNING)
	m.deliver(t, link.MasterMessage{ShutdownExecutor: &link.ShutdownExecutor{FrameworkID: *fw.ID, ExecutorID: ex.ExecutorID}})
	st := m.waitState(t, "t3", mesos.TASK_LOST)
	if *st.Source != mesos.SOURCE_AGENT || st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Fatalf("lost status %+v", st)
	}
	if e := m.waitExited(t, "ex1"); e.Status != 0 {
		t.Fatalf("executor exit status %d", e.Status)
	}
	// Every update carries the agent id and the executor id.
	for _, st := range append(m.states("t1"), m.states("t2")...) {
		if st.AgentID.GetValue() != "S1" || st.ExecutorID.GetValue() != "ex1" {
			t.Fatalf("update without ids: %+v", st)
		}
	}
}

// TestExecutorCrash: an executor that exits before it subscribes fails its
// task as terminated. The registration timeout is long, so a slow start on
// a loaded machine cannot turn the crash into a timeout.
func TestExecutorCrash(t *testing.T) {
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.RegistrationTimeout = time.Minute
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)
	runTask(t, ta, fw, executorTask("c1", "finish", executorInfo("crasher", "TESTEXEC_MODE", "crash")))
	st := m.waitState(t, "c1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED || *st.Source != mesos.SOURCE_AGENT {
		t.Fatalf("crash status %v %v", st.GetReason(), st.Source)
	}
	if e := m.waitExited(t, "crasher"); e.Status != 2<<8 {
		t.Fatalf("crash exit status %d", e.Status)
	}
}

func TestExecutorRegistrationTimeout(t *testing.T) {
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.RegistrationTimeout = 300 * time.Millisecond
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)
	runTask(t, ta, fw, executorTask("s1", "finish", executorInfo("silent", "TESTEXEC_MODE", "nosubscribe")))
	st := m.waitState(t, "s1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT {
		t.Fatalf("timeout status %v %q", st.GetReason(), st.GetMessage())
	}
	if e := m.waitExited(t, "silent"); e.Status != 9 { // SIGKILL, as wait(2) reports it
		t.Fatalf("silent exit status %d", e.Status)
	}
}

func TestFrameworkShutdownAndGC(t *testing.T) {
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.GCDelay = 200 * time.Millisecond
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)
	runTask(t, ta, fw, executorTask("a", "run", executorInfo("exa")))
	runTask(t, ta, fw, cmdTask("b", "sleep 100"))
	m.waitState(t, "a", mesos.TASK_RUNNING)
	m.waitState(t, "b", mesos.TASK_RUNNING)
	m.deliver(t, link.MasterMessage{ShutdownFramework: &link.ShutdownFramework{FrameworkID: *fw.ID}})
	m.waitState(t, "a", mesos.TASK_LOST)
	m.waitState(t, "b", mesos.TASK_KILLED)
	m.waitExited(t, "exa")
	m.waitExited(t, "b")
	dir := filepath.Join(cfg.WorkDir, "slaves/S1/frameworks/fw/executors/exa")
	waitfor.True(t, 10*time.Second, "the sandbox to be garbage collected", func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
}

func TestParseResourcesAndAttributes(t *testing.T) {
	rs, err := ParseResources("cpus:4;mem:2048;ports:[31000-32000,33000-33001];disks:{a,b};gpus(ml):1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 5 || rs[0].Scalar.Value != 4 || rs[2].Ranges.Range[1].End != 33001 || rs[3].Set.Item[1] != "b" || rs[4].GetRole() != "ml" {
		t.Fatalf("resources %+v", rs)
	}
	for _, bad := range []string{"cpus", "cpus:-1", "ports:[5-1]", "ports:[1-2", "x:text"} {
		if _, err := ParseResources(bad); err == nil {
			t.Errorf("ParseResources(%q) accepted", bad)
		}
	}
	as, err := ParseAttributes("rack:r1;zone:z2;level:3")
	if err != nil || len(as) != 3 || as[0].Text.Value != "r1" || as[2].Scalar.Value != 3 {
		t.Fatalf("attributes %+v %v", as, err)
	}
	if _, err := ParseAttributes("rack"); err == nil {
		t.Error("attribute without value accepted")
	}
}

// URIs are fetched into the sandbox before the command runs; a failed
// fetch fails the task with REASON_CONTAINER_LAUNCH_FAILED and the cause.
func TestFetchURIs(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	src := filepath.Join(t.TempDir(), "tool.sh")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho fetched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yes := true
	task := cmdTask("fetch", "./tool.sh")
	task.Command.URIs = []mesos.CommandInfo_URI{{Value: src, Executable: &yes}}
	runTask(t, ta, fwInfo("fw", false), task)
	m.waitState(t, "fetch", mesos.TASK_FINISHED)
	out, _ := os.ReadFile(filepath.Join(ta.workDir, "slaves/S1/frameworks/fw/executors/fetch/runs/latest/stdout"))
	if string(out) != "fetched\n" {
		t.Fatalf("stdout %q", out)
	}
	task = cmdTask("nofetch", "true")
	task.Command.URIs = []mesos.CommandInfo_URI{{Value: "/no/such/file.tgz"}}
	runTask(t, ta, fwInfo("fw", false), task)
	st := m.waitState(t, "nofetch", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), "/no/such/file.tgz") {
		t.Fatalf("failed fetch: %v %q", st.GetReason(), st.GetMessage())
	}
	if got := stateNames(m.states("nofetch")); got != "TASK_FAILED" || *st.Source != mesos.SOURCE_AGENT {
		t.Fatalf("updates %s", got)
	}
}

// A mesos-go executor on the JSON codec works too, and an update it sends
// for a task it does not own is refused with 400.
func TestCustomExecutorJSONAndForeignTask(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	runTask(t, ta, fwInfo("fw", false), executorTask("j", "foreign", executorInfo("exj", "TESTEXEC_JSON", "1")))
	m.waitState(t, "j", mesos.TASK_FINISHED)
	if got := stateNames(m.states("j")); got != "TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("updates %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(ta.workDir, "slaves/S1/frameworks/fw/executors/exj/runs/latest/foreign"))
	if !strings.Contains(string(b), "400") && !strings.Contains(string(b), "not known") {
		t.Fatalf("foreign update answer %q, want a 400", b)
	}
	if len(m.states("not-mine")) != 0 {
		t.Fatal("update for a foreign task reached the master")
	}
}

// TestExecutorDisconnectIsNotAShutdown: as in Mesos, an executor of a
// framework without checkpointing that drops its subscription is left to
// exit on its own; when its process ends, its tasks fail with
// REASON_EXECUTOR_TERMINATED. (An agent that shut the executor down on the
// disconnect made them TASK_LOST, racing the process's exit.)
func TestExecutorDisconnectIsNotAShutdown(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", false)
	runTask(t, ta, fw, executorTask("h1", "hangup", executorInfo("hung")))
	m.waitState(t, "h1", mesos.TASK_RUNNING)
	var pid int
	waitfor.True(t, 10*time.Second, "the agent to see the executor's subscription close", func() bool {
		ta.mu.Lock()
		defer ta.mu.Unlock()
		ex := ta.frameworks["fw"].executors["hung"]
		if ex.sub != nil || ex.proc == nil {
			return false
		}
		if ex.state != exRunning {
			t.Fatalf("after the disconnect the executor is in state %d, want running", ex.state)
		}
		pid = ex.proc.Pid()
		return true
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := m.waitState(t, "h1", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED || st.GetSource() != mesos.SOURCE_AGENT || st.GetMessage() != "Executor terminated" {
		t.Fatalf("update after the executor died: %v %v %q", st.GetReason(), st.GetSource(), st.GetMessage())
	}
	if e := m.waitExited(t, "hung"); e.Status != 9 {
		t.Fatalf("executor exit status %d, want 9 (SIGKILL)", e.Status)
	}
}
