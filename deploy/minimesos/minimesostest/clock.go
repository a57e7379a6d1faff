package minimesostest

import (
	"sort"
	"sync"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

// FakeClock is a manual master.Clock for timer-driven tests: time moves
// only through Advance. Give it to the master with
// WithConfig(func(c *master.Config) { c.Clock = clk }); the allocation,
// heartbeat and ping loops, offer timeouts and failover timeouts then
// run only when the test advances the clock.
type FakeClock struct {
	adv sync.Mutex // serializes Advance

	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer // pending, unordered
}

var _ master.Clock = (*FakeClock)(nil)

type fakeTimer struct {
	c    *FakeClock
	at   time.Time
	seq  uint64
	f    func()
	done bool // fired or stopped
}

// NewFakeClock returns a clock reading start (a fixed date when zero).
func NewFakeClock(start time.Time) *FakeClock {
	if start.IsZero() {
		start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &FakeClock{now: start}
}

// Now returns the clock's reading.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms f to run once the clock has been advanced by d (a
// non-positive d falls due at the next Advance, even Advance(0)).
func (c *FakeClock) AfterFunc(d time.Duration, f func()) master.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d < 0 {
		d = 0
	}
	c.seq++
	t := &fakeTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop disarms the timer; it reports whether the call was prevented.
func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	c.remove(t)
	return true
}

func (c *FakeClock) remove(t *fakeTimer) {
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// Advance moves the clock forward by d. Every callback falling due
// within the span runs in deadline order (ties in arming order), with
// the clock reading its deadline, in the caller's goroutine; callbacks
// armed meanwhile run too if they fall due within the span. Advance
// returns once they have all returned, so what they did (events queued,
// offers made, frameworks or agents removed) is visible at once. Don't
// call it while holding a lock the callbacks take.
func (c *FakeClock) Advance(d time.Duration) {
	c.adv.Lock()
	defer c.adv.Unlock()
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		t := c.nextDue(end)
		if t == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		t.done = true
		c.remove(t)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// nextDue is the earliest pending timer due at or before end. Callers hold c.mu.
func (c *FakeClock) nextDue(end time.Time) *fakeTimer {
	var best *fakeTimer
	for _, t := range c.timers {
		if t.at.After(end) {
			continue
		}
		if best == nil || t.at.Before(best.at) || (t.at.Equal(best.at) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

// Pending returns the deadlines of the armed timers, earliest first.
func (c *FakeClock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
