package mesosconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// TeardownError is Stop giving up on tearing the framework down: no master
// accepted TEARDOWN within Config.TeardownTimeout (flint.mesos.teardownTimeout)
// or before Stop's context ended. It wraps ErrTeardownTimeout and the last
// attempt's error.
type TeardownError struct {
	FrameworkID string
	Master      string // the leading master's URL (scheme://host:port) last known
	After       time.Duration
	Cause       error // the last attempt's error
}

func (e *TeardownError) Error() string { return "mesosconn: " + e.UserMessage() }

// UserMessage says what happened, what it leaves behind and how to remove it.
func (e *TeardownError) UserMessage() string {
	return fmt.Sprintf("framework %s was not torn down: no Mesos master accepted TEARDOWN within %s (flint.mesos.teardownTimeout; last attempt: %v). "+
		"The framework may linger on the master, inactive, with its executors' records: Mesos does not carry the failover timeout across a master failover (MESOS-4659). "+
		"Remove it with: curl -X POST %s -d frameworkId=%s",
		e.FrameworkID, e.After, e.Cause, e.endpoint(), e.FrameworkID)
}

func (e *TeardownError) endpoint() string { return e.Master + "/master/teardown" }

// Unwrap returns ErrTeardownTimeout and the cause.
func (e *TeardownError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrTeardownTimeout}
	}
	return []error{ErrTeardownTimeout, e.Cause}
}

// StopReported reports whether Stop's error needs no more reporting: nil,
// nothing to tear down (ErrNotSubscribed: never registered, or refused),
// or a TeardownError, whose warning Stop has logged.
func StopReported(err error) bool {
	return err == nil || errors.Is(err, ErrNotSubscribed) || errors.Is(err, ErrTeardownTimeout)
}

func (c *Conn) isTearingDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tearingDown
}

// mayResubscribe reports whether run may start another subscription: not
// once Stop has begun, unless Stop waits for a master to take TEARDOWN. It
// first waits for a TEARDOWN in flight, whose success ends the waiting:
// the master ends the stream as it removes the framework, and a
// subscription started then would be refused ("Framework has been removed").
func (c *Conn) mayResubscribe() bool {
	c.tdMu.Lock()
	c.tdMu.Unlock() //nolint:staticcheck // a barrier: wait for the TEARDOWN in flight
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctx.Err() == nil && (!c.stopping || c.tearingDown)
}

// teardown sends TEARDOWN on the live subscription, or on the next one run
// makes, until the master accepts it or the bound passes.
func (c *Conn) teardown(ctx context.Context) error {
	c.mu.Lock()
	id, gaveUp := c.frameworkID, c.err
	c.mu.Unlock()
	if id == "" || gaveUp != nil {
		return fmt.Errorf("%w: no framework to tear down", ErrNotSubscribed)
	}
	start := c.clock.Now()
	bound := c.clock.After(c.cfg.TeardownTimeout)
	var last error
	for {
		err := c.sendTeardown()
		if err == nil {
			c.log.Debugf("mesosconn: the Mesos master accepted TEARDOWN of framework %s", id)
			return nil
		}
		last = err
		// A call on a live subscription that failed (a timeout, a closed
		// connection) is tried again shortly; otherwise the next
		// subscription is the chance.
		var again <-chan time.Time
		if !errors.Is(err, ErrNotSubscribed) {
			c.log.WithError(err).Debug("mesosconn: TEARDOWN failed; trying again")
			again = c.clock.After(c.cfg.MinBackoff)
		}
		select {
		case <-c.subCh:
		case <-again:
		case <-bound:
			return c.lingering(id, c.cfg.TeardownTimeout, last)
		case <-ctx.Done():
			return c.lingering(id, c.clock.Now().Sub(start), errors.Join(last, ctx.Err()))
		case <-c.done: // the master refused the framework meanwhile: it is gone
			return fmt.Errorf("%w: %w", ErrNotSubscribed, c.Err())
		}
	}
}

// sendTeardown sends TEARDOWN and, on success, ends Stop's subscribing
// before run can start another subscription.
func (c *Conn) sendTeardown() error {
	c.tdMu.Lock()
	defer c.tdMu.Unlock()
	err := c.send(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	if err == nil {
		c.mu.Lock()
		c.tearingDown = false
		c.mu.Unlock()
	}
	return err
}

// lingering logs the one warning about a framework left on the master and
// returns it as an error.
func (c *Conn) lingering(id string, after time.Duration, cause error) error {
	c.mu.Lock()
	addr := c.lastLeader.Addr // the leader now, else the last one known
	c.mu.Unlock()
	if addr == "" {
		addr = MasterAddr(c.Master()) // the last master subscribed to
	}
	e := &TeardownError{FrameworkID: id, Master: c.scheme + "://" + addr, After: after, Cause: cause}
	c.log.Warn("mesosconn: " + e.UserMessage())
	return e
}
