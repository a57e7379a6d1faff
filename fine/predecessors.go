package fine

import (
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
)

// predecessorRetry is how long a SHUTDOWN of a predecessor's executor is
// given before an offer that still lists the executor sends another (the
// call may have been lost with a broken connection).
const predecessorRetry = time.Minute

// shutdownPredecessors shuts down the executors a previous driver of the
// framework left on the offers' agents. A driver taking over a framework
// (flint.mesos.driver.frameworkId) learns of its predecessor's tasks from
// the master's reconciliation and kills them with their executors
// (endUnknown), but an executor that runs no task — idle, holding the map
// outputs of a job that died with its driver, so it never exits idle —
// has no task to be reported by: Mesos names it only in its agent's
// offers (Offer.executor_ids: the framework's executors on the agent).
// Without this such an executor stayed for the framework's life (found by
// the simulation, driver restart seeds). Only a successor (its ids
// tagged) has predecessors; an executor id that is not Flint's is left
// alone.
func (b *Backend) shutdownPredecessors(offers []mesos.Offer, now time.Time) {
	if b.idPrefix == "" || b.conn == nil {
		return
	}
	for i := range offers {
		o := &offers[i]
		own := b.executorID(o.AgentID.Value)
		for _, e := range o.ExecutorIDs {
			if e.Value == own || !strings.HasPrefix(e.Value, ExecutorIDPrefix) {
				continue
			}
			if last, ok := b.predecessors[e.Value]; ok && now.Sub(last) < predecessorRetry {
				continue
			}
			if b.predecessors == nil {
				b.predecessors = map[string]time.Time{}
			}
			b.predecessors[e.Value] = now
			b.log.WithFields(logrus.Fields{"executor": e.Value, "agent": o.AgentID.Value}).
				Infof("fine: shutting down executor %s on agent %s: a previous driver of framework %s started it", e.Value, o.AgentID.Value, b.frameworkID)
			if err := b.conn.Shutdown(e, o.AgentID); err != nil {
				b.log.Warnf("fine: shut down executor %s of a previous driver: %v", e.Value, err)
			}
		}
	}
}
