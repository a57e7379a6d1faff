package statusupdate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

type recorder struct {
	mu   sync.Mutex
	got  []link.StatusUpdate
	fail bool
}

func (r *recorder) forward(_ context.Context, u link.StatusUpdate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, u)
	if r.fail {
		return errors.New("master away")
	}
	return nil
}

func (r *recorder) snapshot() []link.StatusUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]link.StatusUpdate(nil), r.got...)
}

// waitFor lets the bubble's goroutines run until they all block, then
// expects at least n forwards. Tests run in testing/synctest bubbles:
// the manager's retry timers run on the bubble's fake clock.
func (r *recorder) waitFor(t *testing.T, n int) []link.StatusUpdate {
	t.Helper()
	synctest.Wait()
	got := r.snapshot()
	if len(got) < n {
		t.Fatalf("got %d forwards, want %d", len(got), n)
	}
	return got
}

// advance moves the bubble's fake clock on by d (no real wait) and lets
// every goroutine run until all are blocked again.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

func upd(task string, state mesos.TaskState, id byte) link.StatusUpdate {
	uuid := make([]byte, 16)
	uuid[0] = id
	return link.StatusUpdate{FrameworkID: mesos.FrameworkID{Value: "fw"},
		Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: state.Enum(), UUID: uuid}}
}

func newManager(t *testing.T, r *recorder, retry time.Duration) *Manager {
	m := New(Config{Forward: r.forward, RetryMin: retry, RetryMax: 4 * retry})
	t.Cleanup(m.Close)
	return m
}

func TestOrderedPerTaskAndAgentID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		m := newManager(t, r, time.Hour)
		m.SetAgentID("S1")
		for i, st := range []mesos.TaskState{mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_FINISHED} {
			if dup, err := m.Update(upd("t1", st, byte(i))); dup || err != nil {
				t.Fatal(dup, err)
			}
		}
		got := r.waitFor(t, 1)
		if len(r.snapshot()) != 1 || *got[0].Status.State != mesos.TASK_STARTING || got[0].Status.AgentID.GetValue() != "S1" {
			t.Fatalf("only the head with agent id should be in flight: %+v", r.snapshot())
		}
		if err := m.Acknowledge("fw", "t1", upd("t1", 0, 1).Status.UUID); !errors.Is(err, ErrUnexpectedAck) {
			t.Fatalf("ack of a non-head: %v", err)
		}
		for i, want := range []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_FINISHED} {
			if err := m.Acknowledge("fw", "t1", upd("t1", 0, byte(i)).Status.UUID); err != nil {
				t.Fatal(err)
			}
			got = r.waitFor(t, i+2)
			if s := *got[i+1].Status.State; s != want {
				t.Fatalf("forward %d: %v, want %v", i+1, s, want)
			}
		}
		if err := m.Acknowledge("fw", "t1", upd("t1", 0, 2).Status.UUID); err != nil {
			t.Fatal(err)
		}
		if len(m.Snapshot()) != 0 {
			t.Fatal("stream not empty after terminal ack")
		}
	})
}

func TestRetryUntilAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{fail: true}
		m := newManager(t, r, 5*time.Millisecond)
		m.SetAgentID("S1")
		if _, err := m.Update(upd("t", mesos.TASK_RUNNING, 1)); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if len(r.snapshot()) >= 4 {
				break
			}
			advance(5 * time.Millisecond)
		}
		r.waitFor(t, 4)
		if err := m.Acknowledge("fw", "t", upd("t", 0, 1).Status.UUID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		n := len(r.snapshot())
		advance(time.Hour) // hundreds of retry intervals (RetryMax 20ms)
		if len(r.snapshot()) != n {
			t.Fatal("retried after the acknowledgement")
		}
	})
}

func TestDuplicatesAndTerminated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		m := newManager(t, r, time.Hour)
		m.SetAgentID("S1")
		if dup, err := m.Update(upd("t", mesos.TASK_FAILED, 1)); dup || err != nil {
			t.Fatal(dup, err)
		}
		if dup, err := m.Update(upd("t", mesos.TASK_FAILED, 1)); !dup || err != nil {
			t.Fatalf("duplicate: %v %v", dup, err)
		}
		if _, err := m.Update(upd("t", mesos.TASK_RUNNING, 2)); !errors.Is(err, ErrTerminated) {
			t.Fatalf("update after terminal: %v", err)
		}
		bad := upd("t2", mesos.TASK_RUNNING, 1)
		bad.Status.UUID = []byte("short")
		if _, err := m.Update(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("short uuid: %v", err)
		}
		if len(m.Pending("fw", "t")) != 1 {
			t.Fatal("duplicate was queued")
		}
	})
}

func TestPausedUntilRegistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		m := newManager(t, r, time.Millisecond)
		if _, err := m.Update(upd("t", mesos.TASK_RUNNING, 1)); err != nil {
			t.Fatal(err)
		}
		advance(time.Hour) // thousands of retry intervals
		if len(r.snapshot()) != 0 {
			t.Fatal("forwarded before registration")
		}
		m.SetAgentID("S9")
		got := r.waitFor(t, 1)
		if got[0].Status.AgentID.GetValue() != "S9" {
			t.Fatalf("agent id %v", got[0].Status.AgentID)
		}
		m.RemoveFramework("fw")
		if len(m.Snapshot()) != 0 {
			t.Fatal("framework streams kept")
		}
	})
}

// RemoveIdleFramework keeps a framework with an unacknowledged update,
// and drops every stream of one without (other frameworks untouched).
func TestRemoveIdleFramework(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		m := newManager(t, r, time.Hour)
		m.SetAgentID("S1")
		run, fin := upd("t", mesos.TASK_RUNNING, 1), upd("t", mesos.TASK_FINISHED, 2)
		other := upd("o", mesos.TASK_RUNNING, 3)
		other.FrameworkID.Value = "other"
		for _, u := range []link.StatusUpdate{run, other} {
			if _, err := m.Update(u); err != nil {
				t.Fatal(err)
			}
		}
		if m.RemoveIdleFramework("fw") {
			t.Fatal("removed a framework with an unacknowledged update")
		}
		if len(m.Pending("fw", "t")) != 1 {
			t.Fatal("the unacknowledged update was dropped")
		}
		if err := m.Acknowledge("fw", "t", run.Status.UUID); err != nil {
			t.Fatal(err)
		}
		// The RUNNING stream is idle now (acknowledged, not terminal).
		if !m.RemoveIdleFramework("fw") {
			t.Fatal("idle framework kept")
		}
		// Its stream is gone: the same uuid is new again, and a FINISHED queues.
		if dup, err := m.Update(run); dup || err != nil {
			t.Fatalf("after removal: dup=%v err=%v", dup, err)
		}
		if _, err := m.Update(fin); err != nil {
			t.Fatal(err)
		}
		if got := m.Pending("fw", "t"); len(got) != 2 {
			t.Fatalf("pending after removal: %v", got)
		}
		if got := m.Pending("other", "o"); len(got) != 1 {
			t.Fatalf("other framework's updates: %v", got)
		}
		if !m.RemoveIdleFramework("unknown") {
			t.Fatal("a framework without streams is idle")
		}
	})
}
