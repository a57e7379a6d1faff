package driver

import (
	"time"

	"github.com/flint-mesos/flint/framework/scheduler"
)

// After every attempt: work that must wait until no task attempt launched
// so far can still act — the output commit protocol's last sweep
// (framework/dataset: an attempt of an ended job, killed or speculative,
// may still be staging a write until its end is seen). A task set that
// finished or aborted lives on as a zombie until its last attempt ends
// (Spark's zombie TaskSetManager); an attempt's end is its terminal update
// or its executor's loss. Task ids grow with every launch, so "every
// attempt launched so far" is every id up to the last one launched.

// afterWaiter is a callback waiting for the attempts up to upto to end.
type afterWaiter struct {
	upto scheduler.TaskID
	fn   func()
}

// AfterAttemptsEnd runs fn on a goroutine of its own once every task
// attempt launched before the call has ended. If the driver stops first,
// Drain runs it once the backend has stopped (its executors, and so every
// attempt, gone). fn must not wait on the driver.
func (d *Driver) AfterAttemptsEnd(fn func()) {
	if d.enqueue(afterInput{fn: fn}) {
		return
	}
	d.afterMu.Lock()
	defer d.afterMu.Unlock()
	if d.drained {
		d.runAfter(fn)
		return
	}
	d.leftover = append(d.leftover, fn)
}

// Drain runs every AfterAttemptsEnd callback still waiting and waits for
// all of them to return. Call it after Stop, once the backend has stopped.
func (d *Driver) Drain() {
	d.coreMu.Lock()
	waiting := d.core.afters
	d.core.afters = nil
	d.coreMu.Unlock()
	d.afterMu.Lock()
	left := d.leftover
	d.leftover, d.drained = nil, true
	d.afterMu.Unlock()
	for _, w := range waiting {
		d.runAfter(w.fn)
	}
	for _, fn := range left {
		d.runAfter(fn)
	}
	d.afterRuns.Wait()
}

// runAfter runs one callback on its own goroutine, counted for Drain.
func (d *Driver) runAfter(fn func()) {
	d.afterRuns.Add(1)
	go func() {
		defer d.afterRuns.Done()
		fn()
	}()
}

// afterInput is AfterAttemptsEnd's input: fn waits behind the attempts
// launched so far.
type afterInput struct{ fn func() }

func (in afterInput) apply(c *driverCore, _ time.Time) {
	c.afters = append(c.afters, afterWaiter{upto: c.lastLaunch, fn: in.fn})
}

// releaseAfters moves the callbacks whose attempts have all ended to the
// step's output (the loop runs them).
func (c *driverCore) releaseAfters() {
	if len(c.afters) == 0 || c.stopped {
		return
	}
	oldest := c.lastLaunch + 1 // above every launched id: none running
	for id := range c.running {
		oldest = min(oldest, id)
	}
	kept := c.afters[:0]
	for _, w := range c.afters {
		if w.upto < oldest {
			c.out.afters = append(c.out.afters, w.fn)
		} else {
			kept = append(kept, w)
		}
	}
	clear(c.afters[len(kept):])
	c.afters = kept
}
