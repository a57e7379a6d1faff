package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/statusupdate"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// stateFrameworks is the framework ids of the agent's /state.
func stateFrameworks(t *testing.T, ta *testAgent) []string {
	t.Helper()
	resp, err := http.Get("http://" + ta.cfg.Endpoint + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st agentState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, f := range st.Frameworks {
		ids = append(ids, f.ID)
	}
	return ids
}

// waitFrameworks waits until the agent keeps exactly want (sorted), as
// Frameworks and /state both show.
func waitFrameworks(t *testing.T, ta *testAgent, want ...string) {
	t.Helper()
	waitfor.Msg(t, 10*time.Second, func() string {
		got, st := ta.Frameworks(), stateFrameworks(t, ta)
		if slices.Equal(got, want) && slices.Equal(st, want) {
			return ""
		}
		return fmt.Sprintf("agent keeps frameworks %v (/state: %v), want %v", got, st, want)
	})
}

// holdTerminal makes autoAck leave terminal updates unacknowledged.
func holdTerminal(u link.StatusUpdate) bool { return statusupdate.IsTerminal(u.Status.GetState()) }

// ackAll acknowledges every update received so far, and those to come.
func (f *fakeMaster) ackAll(t testing.TB) {
	t.Helper()
	f.mu.Lock()
	f.autoAck, f.hold = true, nil
	var acks []link.Acknowledge
	for _, u := range f.updates {
		if !f.acked[string(u.Status.UUID)] {
			f.acked[string(u.Status.UUID)] = true
			acks = append(acks, link.Acknowledge{FrameworkID: u.FrameworkID, TaskID: u.Status.TaskID, UUID: u.Status.UUID})
		}
	}
	f.mu.Unlock()
	for _, a := range acks {
		f.deliver(t, link.MasterMessage{Acknowledge: &a})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A framework whose executors all ended, and which is not torn down (it
// is between tasks), is forgotten once its updates are acknowledged (as
// Mesos keeps a terminated executor, and so its framework, until then):
// its record, its checkpoint directory, its status update streams. A
// later launch for it recreates it and works.
func TestFrameworkForgottenWhenItsLastExecutorEnds(t *testing.T) {
	m := newFakeMaster()
	m.hold = holdTerminal
	cfg := fastConfig(t, t.TempDir())
	ta := startAgent(t, m, cfg)
	fw := fwInfo("between", true)
	meta := filepath.Join(cfg.WorkDir, "meta/slaves/S1/frameworks/between")
	runTask(t, ta, fw, cmdTask("c1", "true"))
	runTask(t, ta, fw, executorTask("e1", "run", executorInfo("ex1")))
	m.waitState(t, "c1", mesos.TASK_FINISHED)
	m.waitState(t, "e1", mesos.TASK_RUNNING)
	m.waitExited(t, "c1")
	waitFrameworks(t, ta, "between") // ex1 runs
	ta.ckpt.sync()
	if !exists(meta) {
		t.Fatal("no checkpoint for a checkpointing framework's executor")
	}
	m.deliver(t, link.MasterMessage{ShutdownExecutor: &link.ShutdownExecutor{FrameworkID: *fw.ID, ExecutorID: mesos.ExecutorID{Value: "ex1"}}})
	m.waitExited(t, "ex1")
	// No executor left, but updates wait for acknowledgements: kept.
	if got := ta.Frameworks(); !slices.Equal(got, []string{"between"}) {
		t.Fatalf("frameworks with unacknowledged updates: %v", got)
	}
	m.ackAll(t)
	waitFrameworks(t, ta)
	ta.ckpt.sync()
	if exists(meta) {
		t.Fatal("checkpoint directory of a forgotten framework kept")
	}
	if ups := ta.sum.Snapshot(); len(ups) != 0 {
		t.Fatalf("updates kept: %v", ups)
	}
	if _, ok := ta.ckptFW.Load("between"); ok {
		t.Fatal("still marked as a checkpointing framework")
	}

	// It launches again: the agent recreates it, and forgets it again.
	runTask(t, ta, fw, executorTask("e2", "finish", executorInfo("ex2")))
	runTask(t, ta, fw, cmdTask("c2", "true"))
	m.waitState(t, "e2", mesos.TASK_FINISHED)
	m.waitState(t, "c2", mesos.TASK_FINISHED)
	if got := stateNames(m.states("c2")); got != "TASK_STARTING,TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("relaunched command task: %s", got)
	}
	waitFrameworks(t, ta, "between") // ex2 runs
	ta.ckpt.sync()
	if !exists(meta) {
		t.Fatal("no checkpoint for the relaunched executor")
	}
	m.deliver(t, link.MasterMessage{ShutdownExecutor: &link.ShutdownExecutor{FrameworkID: *fw.ID, ExecutorID: mesos.ExecutorID{Value: "ex2"}}})
	m.waitExited(t, "ex2")
	waitFrameworks(t, ta)
}

// A launch that starts no executor (here: tasks that do not fit) leaves
// no framework behind once its updates are acknowledged.
func TestRefusedLaunchLeavesNoFramework(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	big := cmdTask("big", "true")
	big.Resources[0].Scalar.Value = 1e6
	runTask(t, ta, fwInfo("refused", false), big)
	if st := m.waitState(t, "big", mesos.TASK_LOST); st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Fatalf("refusal: %v %q", st.GetReason(), st.GetMessage())
	}
	waitFrameworks(t, ta)
}

// ShutdownFramework for a framework whose executors had all ended (the
// usual teardown of a finished coarse-mode job) removes it at once, with
// its unacknowledged updates and their checkpoint: a restarted agent
// neither recovers the framework nor resends its updates.
func TestShutdownFrameworkWithoutExecutors(t *testing.T) {
	m := newFakeMaster()
	m.hold = holdTerminal
	cfg := fastConfig(t, t.TempDir())
	a1 := startAgent(t, m, cfg)
	fw := fwInfo("done", true)
	runTask(t, a1, fw, cmdTask("c", "true"))
	m.waitState(t, "c", mesos.TASK_FINISHED)
	m.waitExited(t, "c")
	if got := a1.Frameworks(); !slices.Equal(got, []string{"done"}) {
		t.Fatalf("frameworks before shutdown: %v", got)
	}
	updates := filepath.Join(cfg.WorkDir, "meta/slaves/S1/updates.json")
	a1.ckpt.sync() // checkpoints are written after the agent's lock is released
	if b, _ := os.ReadFile(updates); !strings.Contains(string(b), `"done"`) {
		t.Fatalf("unacknowledged updates not checkpointed: %s", b)
	}
	m.deliver(t, link.MasterMessage{ShutdownFramework: &link.ShutdownFramework{FrameworkID: *fw.ID}})
	waitFrameworks(t, a1)
	a1.ckpt.sync()
	if ups := a1.sum.Snapshot(); len(ups) != 0 {
		t.Fatalf("updates kept: %v", ups)
	}
	if b, _ := os.ReadFile(updates); strings.Contains(string(b), `"done"`) {
		t.Fatalf("updates of the removed framework still checkpointed: %s", b)
	}
	a1.ckpt.sync()
	if exists(filepath.Join(cfg.WorkDir, "meta/slaves/S1/frameworks/done")) {
		t.Fatal("checkpoint directory of the removed framework kept")
	}

	a1.Stop()
	a1.srv.Close()
	m2 := newFakeMaster()
	a2 := startAgent(t, m2, cfg)
	if reg := m2.registrations()[0]; len(reg.Frameworks) != 0 || len(reg.Executors) != 0 {
		t.Fatalf("re-registration reports %v / %v", reg.Frameworks, reg.Executors)
	}
	waitFrameworks(t, a2)
	// A retry period has passed since the restart once another
	// framework's held update has been resent: "c"'s would have been too.
	m2.mu.Lock()
	m2.hold = holdTerminal
	m2.mu.Unlock()
	runTask(t, a2, fwInfo("other", false), cmdTask("o", "true"))
	waitfor.True(t, 10*time.Second, "a resend of o's unacknowledged FINISHED", func() bool {
		return m2.deliveries("o", mesos.TASK_FINISHED) >= 2
	})
	if sts := m2.states("c"); len(sts) != 0 {
		t.Fatalf("updates of the removed framework resent after restart: %s", stateNames(sts))
	}
}
