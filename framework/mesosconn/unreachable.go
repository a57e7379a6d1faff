package mesosconn

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

// StartTimeoutError is Start giving up on a master it never subscribed
// to within Config.StartTimeout (flint.mesos.connectTimeout). It wraps
// ErrStartTimeout and the last attempt's error.
type StartTimeoutError struct {
	Master string
	After  time.Duration
	Cause  error // the last attempt's error; nil if none ended
}

func (e *StartTimeoutError) Error() string { return "mesosconn: " + e.UserMessage() }

// UserMessage is the error on its own, complete without the errors that
// wrap it on its way to the user.
func (e *StartTimeoutError) UserMessage() string {
	return fmt.Sprintf("cannot reach the Mesos master %s within %s (%s); check the master's address, or raise flint.mesos.connectTimeout",
		e.Master, e.After, unreachableCause(e.Cause))
}

// Unwrap returns ErrStartTimeout and the cause.
func (e *StartTimeoutError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrStartTimeout}
	}
	return []error{ErrStartTimeout, e.Cause}
}

// logRetry reports a failed session before the next attempt. Before the
// first subscription there was nothing to lose: one warning says the
// master cannot be reached and for how long Start keeps trying; later
// attempts are at debug level. After a subscription, every loss is a
// warning (the failover path).
func (c *Conn) logRetry(l detector.Leader, err error, next time.Duration) {
	c.mu.Lock()
	ever := c.subscribedOnce
	warned := c.warnedUnreachable
	c.warnedUnreachable = true
	c.mu.Unlock()
	switch {
	case c.isStopping(): // Stop waits to tear the framework down; it reports the outcome
		c.log.WithError(err).Debugf("mesosconn: no subscription to %s to tear down the framework; retrying in %s", l.Addr, next.Round(time.Millisecond))
	case ever:
		c.log.WithError(err).Warnf("mesosconn: subscription to %s lost; re-subscribing in %s", l.Addr, next.Round(time.Millisecond))
	case !warned:
		c.log.Warnf("mesosconn: cannot reach the Mesos master at %s (%s); retrying for %s", l.Addr, unreachableCause(err), c.cfg.StartTimeout)
	default:
		c.log.WithError(err).Debugf("mesosconn: the Mesos master at %s is still unreachable; retrying in %s", l.Addr, next.Round(time.Millisecond))
	}
}

// unreachableCause is the short reason a master could not be reached:
// "connection refused", "no such host", "timed out", or the error itself.
func unreachableCause(err error) string {
	var dns *net.DNSError
	var errno syscall.Errno
	var ne net.Error
	switch {
	case err == nil:
		return "no answer"
	case errors.As(err, &dns):
		return "no such host " + dns.Name
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return err.Error()
}
