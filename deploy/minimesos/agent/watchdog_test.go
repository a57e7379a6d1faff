package agent

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// pingFor delivers a Ping every interval for d and returns when the last
// one was sent.
func pingFor(t *testing.T, m *fakeMaster, seq *uint64, interval, d time.Duration) time.Time {
	t.Helper()
	var last time.Time
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(interval) {
		*seq++
		last = time.Now() // the agent hears it no earlier
		m.deliver(t, link.MasterMessage{Ping: &link.Ping{Seq: *seq}})
	}
	return last
}

// An agent that hears pings stays registered; one that hears none for
// five ping intervals (Mesos' default max missed pings) re-registers under
// its id, reporting what runs, and settles once pings resume.
func TestMissedPingsReregister(t *testing.T) {
	const every = 50 * time.Millisecond
	m := newFakeMaster()
	m.pingInterval = every
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	runTask(t, ta, fwInfo("fw", false), cmdTask("sleeper", "sleep 100"))
	m.waitState(t, "sleeper", mesos.TASK_RUNNING)

	var seq uint64
	lastPing := pingFor(t, m, &seq, every/2, 12*every)
	if n := len(m.registrations()); n != 1 {
		t.Fatalf("%d registrations while pings arrived", n)
	}
	m.mu.Lock()
	pongs := len(m.pongs)
	m.mu.Unlock()
	if pongs == 0 {
		t.Fatal("the agent answered no ping")
	}

	// Silence: the watchdog fires after five intervals, not before.
	deadline := time.Now().Add(10 * time.Second)
	for len(m.registrations()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("agent did not re-register after missed pings")
		}
		time.Sleep(5 * time.Millisecond)
	}
	m.mu.Lock()
	after := m.regAt[1].Sub(lastPing)
	m.mu.Unlock()
	if after < 5*every {
		t.Fatalf("re-registered %v after the last ping, before five intervals (%v)", after, 5*every)
	}
	reg := m.registrations()[1]
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 1 || len(reg.Tasks) != 1 || reg.Tasks[0].GetState() != mesos.TASK_RUNNING {
		t.Fatalf("re-registration %+v", reg)
	}

	// Pings resume: no further re-registration.
	pingFor(t, m, &seq, every/2, 12*every)
	if n := len(m.registrations()); n != 2 {
		t.Fatalf("%d registrations once pings resumed", n)
	}
}
