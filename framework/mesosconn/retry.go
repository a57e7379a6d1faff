package mesosconn

import (
	"errors"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

// recoveringText is how a Mesos master that has won the election but not
// yet recovered its registry answers every scheduler call: 503 with this
// body (src/master/http.cpp, Master::Http::scheduler). Recovery ends once
// the registry is read back (the replicated log's recovery, bounded by
// --registry_fetch_timeout), usually within seconds; the master serves
// frameworks from then on.
const recoveringText = "Master has not finished recovery"

// isRecovering reports whether err is a master's "not finished recovery"
// answer.
func isRecovering(err error) bool {
	var ae *apierrors.Error
	return errors.As(err, &ae) && apierrors.CodeMesosUnavailable.Matches(ae) &&
		strings.Contains(ae.Error(), recoveringText)
}

// retryDelay is how long run waits before subscribing again after err,
// and logs the retry. A leading master that is still recovering is asked
// again after RecoveryRetry less jitter (so drivers do not arrive in
// lockstep), without growing the backoff: the subscription then follows
// the end of its recovery within RecoveryRetry instead of a backoff grown
// by the failures of the election before it. Any other failure waits the
// exponential backoff.
func (c *Conn) retryDelay(l detector.Leader, err error) time.Duration {
	if !isRecovering(err) {
		d := c.backoff.Next()
		c.logRetry(l, err, d)
		return d
	}
	d := c.backoff.Jittered(c.cfg.RecoveryRetry)
	c.mu.Lock()
	first := !c.saidRecovering
	c.saidRecovering = true
	c.mu.Unlock()
	if first {
		c.log.Infof("mesosconn: the Mesos master at %s has not finished recovery; subscribing again every %s until it has", l.Addr, c.cfg.RecoveryRetry)
	} else {
		c.log.Debugf("mesosconn: the Mesos master at %s is still recovering; retrying in %s", l.Addr, d.Round(time.Millisecond))
	}
	return d
}
