package fine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
)

// exitRig is a deathHandler in front of a recording handler, for agent S0
// (host h0) whose executor generation 1 runs tasks 1 and 2.
type exitRig struct {
	h      *deathHandler
	mu     sync.Mutex
	events []string // "update <task>: <message>" and "lost <executor>"
}

func newExitRig() *exitRig {
	b := newTestBackend(&recorder{})
	b.agents["S0"] = &agentExec{id: executorID("S0"), host: "h0", gen: 1, genUsed: true, launched: []int{1}}
	for _, id := range []uint64{1, 2} {
		b.tasks[mesosTaskID(id)] = &mtask{flintID: id, attempt: 1, agentID: "S0", execID: executorID("S0"), gen: 1, cpus: 1}
	}
	r := &exitRig{}
	r.h = newDeathHandler(b, mesosconn.HandlerFuncs{
		OnUpdate: func(st mesos.TaskStatus) { r.record("update " + st.TaskID.Value + ": " + st.GetMessage()) },
		OnExecutorLost: func(_ mesos.AgentID, e mesos.ExecutorID, _ int) {
			r.record("lost " + e.Value)
		},
	})
	return r
}

func (r *exitRig) record(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *exitRig) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

var agentS0, execS0 = mesos.AgentID{Value: "S0"}, mesos.ExecutorID{Value: executorID("S0")}

func terminated(id string) mesos.TaskStatus {
	msg := "Executor terminated"
	return mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: mesos.TASK_FAILED.Enum(), Source: mesos.SOURCE_AGENT.Enum(),
		Reason: mesos.REASON_EXECUTOR_TERMINATED.Enum(), AgentID: &agentS0, ExecutorID: &execS0, Message: &msg}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d is %q, want %q", what, i, got[i], want[i])
		}
	}
}

const (
	died     = "executor flint-fine-S0 died: it ran on h0 (agent S0) and ended: Executor terminated; it "
	verdict  = " (TASK_FAILED, REASON_EXECUTOR_TERMINATED)"
	exitCode = 3 << 8 // wait status: exit status 3
	sigKill  = 9      // wait status: killed by SIGKILL
)

// A fine executor's death names its exit status whether Mesos sends the
// FAILURE with it before the tasks' updates (as Apache Mesos usually
// does) or after them (as minimesos does).
func TestDeadExecutorsTasksCarryItsExitStatus(t *testing.T) {
	t.Run("failure first", func(t *testing.T) {
		r := newExitRig()
		r.h.ExecutorLost(agentS0, execS0, sigKill)
		r.h.Update(terminated("1"))
		r.h.Update(terminated("2"))
		equal(t, "events", r.take(), []string{"lost flint-fine-S0",
			"update 1: " + died + "was killed by signal 9 (killed)" + verdict,
			"update 2: " + died + "was killed by signal 9 (killed)" + verdict})
	})
	t.Run("updates first", func(t *testing.T) {
		r := newExitRig()
		r.h.Update(terminated("1"))
		r.h.Update(terminated("2"))
		equal(t, "events before the FAILURE", r.take(), nil) // held for the exit status
		r.h.ExecutorLost(agentS0, execS0, exitCode)
		equal(t, "events", r.take(), []string{
			"update 1: " + died + "exited with status 3" + verdict,
			"update 2: " + died + "exited with status 3" + verdict,
			"lost flint-fine-S0"})
		r.h.close()
	})
	t.Run("no failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newExitRig()
			r.h.Update(terminated("1"))
			time.Sleep(exitGrace - time.Millisecond) // synctest: moves the bubble's clock to just before the grace ends
			synctest.Wait()
			r.h.b.drain()
			equal(t, "events before the grace ended", r.take(), nil)
			time.Sleep(time.Millisecond) // synctest: moves the bubble's clock to the end of the grace
			synctest.Wait()
			r.h.b.drain() // the timer's end is an input of the owner, which the test is
			equal(t, "events", r.take(), []string{"update 1: executor flint-fine-S0 died: it ran on h0 (agent S0) and ended: " +
				"Executor terminated; Mesos reported no exit status for it within 2s" + verdict})
			r.h.close()
		})
	})
	t.Run("an older generation's exit", func(t *testing.T) {
		r := newExitRig()
		r.h.ExecutorLost(agentS0, execS0, exitCode) // generation 1 exits...
		r.take()
		r.h.b.agents["S0"].gen = 2 // ...generation 2 runs task 3 and dies
		r.h.b.agents["S0"].launched = []int{2}
		r.h.b.tasks["3"] = &mtask{flintID: 3, attempt: 1, agentID: "S0", execID: executorID("S0"), gen: 2, cpus: 1}
		r.h.Update(terminated("3"))
		equal(t, "events before generation 2's FAILURE", r.take(), nil)
		r.h.ExecutorLost(agentS0, execS0, sigKill)
		equal(t, "events", r.take(), []string{"update 3: " + died + "was killed by signal 9 (killed)" + verdict, "lost flint-fine-S0"})
	})
}

func TestExitWords(t *testing.T) {
	for ws, want := range map[int]string{0: "exited with status 0", 65 << 8: "exited with status 65", 15: "was killed by signal 15 (terminated)", 9 | 0x80: "was killed by signal 9 (killed)",
		-1: "ended with an unknown status (no process was reaped: the container never started, or the agent lost it)"} {
		if got := exitWords(ws); got != want {
			t.Errorf("exitWords(%#x) = %q, want %q", ws, got, want)
		}
	}
}
