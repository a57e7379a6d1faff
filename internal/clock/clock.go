package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is a source of time and timers.
type Clock interface {
	Now() time.Time
	// After delivers the time once d has passed; the channel has capacity 1.
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f once d has passed (Real: in its own goroutine; Fake:
	// in Advance's).
	AfterFunc(d time.Duration, f func()) Timer
	// NewTicker ticks every d, dropping ticks a slow receiver misses, as
	// time.Ticker does.
	NewTicker(d time.Duration) Ticker
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it did.
	Stop() bool
}

// Ticker is a stoppable source of ticks.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the wall clock (package time).
type Real struct{}

var _ Clock = Real{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// Fake is a manual Clock: its time moves only through Advance.
type Fake struct {
	adv sync.Mutex // serializes Advance

	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer // pending, unordered
}

var _ Clock = (*Fake)(nil)

type fakeTimer struct {
	c      *Fake
	at     time.Time
	seq    uint64
	f      func()         // AfterFunc
	ch     chan time.Time // After and tickers: a non-blocking send
	period time.Duration  // tickers: re-armed at at+period
	done   bool           // fired (not a ticker) or stopped
}

// NewFake returns a clock reading start (a fixed date when zero).
func NewFake(start time.Time) *Fake {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Fake{now: start}
}

// Now returns the clock's reading.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Fake) arm(d time.Duration, t *fakeTimer) *fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t.c, t.at, t.seq = c, c.now.Add(max(d, 0)), c.seq
	c.timers = append(c.timers, t)
	return t
}

// AfterFunc arms f to run once the clock has been advanced by d (a
// non-positive d falls due at the next Advance, even Advance(0)).
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	return c.arm(d, &fakeTimer{f: f})
}

// After returns a channel that receives the clock's reading once it has
// been advanced by d; a non-positive d delivers at once.
func (c *Fake) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.Now()
		return ch
	}
	c.arm(d, &fakeTimer{ch: ch})
	return ch
}

// NewTicker returns a ticker that ticks each time the clock passes a
// multiple of d from now (d must be positive).
func (c *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{c.arm(d, &fakeTimer{ch: make(chan time.Time, 1), period: d})}
}

type fakeTicker struct{ t *fakeTimer }

func (t fakeTicker) C() <-chan time.Time { return t.t.ch }
func (t fakeTicker) Stop()               { t.t.Stop() }

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

func (c *Fake) remove(t *fakeTimer) {
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// Advance moves the clock forward by d. AfterFunc callbacks falling due
// within the span run first, in deadline order (ties in arming order), with
// the clock reading their deadline, in the caller's goroutine; callbacks
// armed meanwhile run too if they fall due within the span. Then the clock
// reads the end of the span and the After channels and tickers that fell
// due receive (a ticker once, however many periods passed, then re-armed
// for its next period after the span; one whose last tick was not taken
// drops the new one, as time.Ticker does). A goroutine woken by a channel
// thus always sees the clock at the end of the span, as if it woke late,
// which keeps tests deterministic. Advance returns once all of it is done,
// so what the callbacks did is visible at once. Don't call it while
// holding a lock the callbacks take.
func (c *Fake) Advance(d time.Duration) {
	c.adv.Lock()
	defer c.adv.Unlock()
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		t := c.nextDue(end, true)
		if t == nil {
			break
		}
		t.done = true
		c.remove(t)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
	// c.mu is held.
	c.now = end
	var due []*fakeTimer
	for {
		t := c.nextDue(end, false)
		if t == nil {
			break
		}
		due = append(due, t)
		if t.period > 0 {
			for !t.at.After(end) {
				t.at = t.at.Add(t.period)
			}
			c.seq++
			t.seq = c.seq
		} else {
			t.done = true
			c.remove(t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		select {
		case t.ch <- end:
		default:
		}
	}
}

// nextDue is the earliest pending callback (funcs) or channel timer
// (!funcs) due at or before end. Callers hold c.mu.
func (c *Fake) nextDue(end time.Time, funcs bool) *fakeTimer {
	var best *fakeTimer
	for _, t := range c.timers {
		if t.at.After(end) || (t.f != nil) != funcs {
			continue
		}
		if best == nil || t.at.Before(best.at) || (t.at.Equal(best.at) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

// Pending returns the deadlines of the armed timers, tickers and After
// channels, earliest first.
func (c *Fake) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// HasPending reports whether something is armed to fall due exactly d from
// now: a test waits for it to know a goroutine reached its wait before
// advancing past it.
func (c *Fake) HasPending(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.at.Sub(c.now) == d {
			return true
		}
	}
	return false
}
