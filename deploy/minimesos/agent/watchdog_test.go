package agent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// pingFor delivers a Ping every interval of m.clk's time for d: each one
// once the agent answered the one before (so it was heard when the clock
// read what it reads), advancing the clock between them. It returns the
// clock's reading when the agent heard the last one.
func pingFor(t *testing.T, m *fakeMaster, seq *uint64, interval, d time.Duration) time.Time {
	t.Helper()
	for end := m.clk.Now().Add(d); ; m.clk.Advance(interval) {
		*seq++
		s := *seq
		last := m.clk.Now()
		m.deliver(t, link.MasterMessage{Ping: &link.Ping{Seq: s}})
		waitfor.True(t, 30*time.Second, fmt.Sprintf("the agent to answer ping %d", s), func() bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			return slices.Contains(m.pongs, s)
		})
		if !last.Before(end) {
			return last
		}
	}
}

// silence advances m.clk by step at a time, without pings, until the agent
// re-registered (the watchdog only looks at the clock when its ticker,
// also on m.clk, ticks).
func silence(t *testing.T, m *fakeMaster, step time.Duration) {
	t.Helper()
	waitfor.True(t, 30*time.Second, "the agent to re-register once the master is silent", func() bool {
		if len(m.registrations()) >= 2 {
			return true
		}
		m.clk.Advance(step)
		return false
	})
}

// watchdogAgent is an agent whose registration loop runs on a fake clock
// shared with its fake master, which pings every `every`.
func watchdogAgent(t *testing.T, every time.Duration) (*fakeMaster, *testAgent) {
	m := newFakeMaster()
	m.pingInterval = every
	m.clk = clock.NewFake(time.Time{})
	cfg := fastConfig(t, t.TempDir())
	cfg.Clock = m.clk
	return m, startAgent(t, m, cfg)
}

// An agent that hears pings stays registered; one that hears none for
// five ping intervals (Mesos' default max missed pings) re-registers under
// its id, reporting what runs, and settles once pings resume.
func TestMissedPingsReregister(t *testing.T) {
	const every = 50 * time.Millisecond
	m, ta := watchdogAgent(t, every)
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

	// Silence: the watchdog fires after five intervals of the agent's
	// clock, not before.
	silence(t, m, every/5)
	m.mu.Lock()
	after := m.regAt[1].Sub(lastPing)
	m.mu.Unlock()
	if after <= 5*every {
		t.Fatalf("re-registered %v after the last ping, before five intervals (%v)", after, 5*every)
	}
	reg := m.registrations()[1]
	// The command task is reported, its generated command executor is not
	// (Mesos' agent leaves those out: the master does not store them).
	if reg.AgentInfo.ID.GetValue() != "S1" || len(reg.Executors) != 0 || len(reg.Tasks) != 1 || reg.Tasks[0].GetState() != mesos.TASK_RUNNING {
		t.Fatalf("re-registration %+v", reg)
	}

	// Pings resume: no further re-registration.
	pingFor(t, m, &seq, every/2, 12*every)
	if n := len(m.registrations()); n != 2 {
		t.Fatalf("%d registrations once pings resumed", n)
	}
}

// The silence an agent tolerates is the ping timeout its master announced
// (Mesos' total_ping_timeout_seconds: interval × max missed pings), not a
// fixed count of intervals: with a 20-interval timeout, five silent
// intervals (the default) do not make it re-register; twenty do.
func TestAnnouncedPingTimeoutBoundsTheSilence(t *testing.T) {
	const every = 50 * time.Millisecond
	m := newFakeMaster()
	m.pingInterval, m.pingTimeout = every, 20*every
	m.clk = clock.NewFake(time.Time{})
	cfg := fastConfig(t, t.TempDir())
	cfg.Clock = m.clk
	startAgent(t, m, cfg)
	var seq uint64
	lastPing := pingFor(t, m, &seq, every/2, 4*every)
	silence(t, m, every/5)
	m.mu.Lock()
	after := m.regAt[1].Sub(lastPing)
	m.mu.Unlock()
	if after <= 20*every {
		t.Fatalf("re-registered %v after the last ping, within the announced timeout %v", after, 20*every)
	}
}
