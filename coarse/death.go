package coarse

import (
	"context"
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/sandbox"
	"github.com/flint-mesos/flint/internal/clock"
)

// deathGrace is how long an executor whose stream broke waits for its
// Mesos task's terminal status (which says how the process ended) before
// it is killed through Mesos and reported lost without it. It is not
// killed at once: Mesos reports a task it was asked to kill as
// TASK_KILLED even when the process had exited on its own, hiding the
// exit status.
const deathGrace = 2 * time.Second

// describeTimeout bounds reading a dead executor's stderr from its agent.
const describeTimeout = 3 * time.Second

// deaths turns executor losses into reports a user can debug (which
// executor, on which agent, its exit status from Mesos, the last lines of
// its stderr): a broken stream waits for the Mesos status (a timer on the
// backend's clock whose end is an input of the owner); the report is
// written off the owner, since it reads the sandbox over HTTP, and handed
// to the driver by the owner. Its state is the owner's.
type deaths struct {
	b       *Backend
	client  *http.Client
	pending map[string]*pendingDeath
	closed  bool
	wg      sync.WaitGroup // reports being written
}

type pendingDeath struct {
	timer  clock.Timer
	report func(st *mesos.TaskStatus)
}

func newDeaths(b *Backend) *deaths {
	return &deaths{b: b, client: &http.Client{Timeout: describeTimeout}, pending: map[string]*pendingDeath{}}
}

// await holds the report of an executor whose stream broke until its Mesos
// status arrives (ended) or deathGrace passes (then timedOut runs first).
func (d *deaths) await(id string, timedOut func(), report func(st *mesos.TaskStatus)) {
	if d.closed {
		return
	}
	p := &pendingDeath{report: report}
	p.timer = d.b.clock.AfterFunc(deathGrace, func() {
		d.b.post(func() {
			if d.closed || d.pending[id] != p {
				return
			}
			delete(d.pending, id)
			timedOut()
			report(nil)
		})
	})
	d.pending[id] = p
}

// ended delivers an executor's terminal Mesos status to its held report;
// false when none was held.
func (d *deaths) ended(id string, st mesos.TaskStatus) bool {
	p := d.pending[id]
	if p == nil {
		return false
	}
	delete(d.pending, id)
	p.timer.Stop()
	p.report(&st)
	return true
}

// close drops held reports and the ones being written (the driver stops).
func (d *deaths) close() {
	d.closed = true
	for id, p := range d.pending {
		p.timer.Stop()
		delete(d.pending, id)
	}
}

// wait waits for the reports being written (once the owner has ended).
func (d *deaths) wait() { d.wg.Wait() }

// reportLost reports executor e lost to the driver with a description of
// its death: written on its own goroutine (it reads the sandbox), handed
// to the driver by the owner — or, when the master has no address to read
// the sandbox through, at once.
func (b *Backend) reportLost(e *executor, st *mesos.TaskStatus, lost string, causedByApp bool) {
	if b.deaths.closed {
		return
	}
	master := ""
	if b.conn != nil {
		master = sandbox.MasterURL(b.conn.Master())
	}
	death := sandbox.Death{ExecutorID: e.id, Host: e.host, AgentID: e.agentID, FrameworkID: b.frameworkID, Status: st, Lost: lost}
	if master == "" {
		// No master address to find the sandbox through: the report is
		// Mesos' status alone, written and handed over here, in the order
		// of the owner's other calls on the driver (no goroutine — what
		// lets a simulation drive the backend deterministically).
		b.d.ExecutorLost(e.id, sandbox.Describe(context.Background(), b.deaths.client, "", death), causedByApp)
		return
	}
	b.deaths.wg.Add(1)
	go func() {
		defer b.deaths.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
		reason := sandbox.Describe(ctx, b.deaths.client, master, death)
		cancel()
		b.post(func() {
			if !b.deaths.closed {
				b.d.ExecutorLost(e.id, reason, causedByApp)
			}
		})
	}()
}

// streamBroke reports an executor whose stream broke once its Mesos
// status says how it ended; after deathGrace without one, the executor
// (alive but not trusted again) is killed and reported without it.
func (b *Backend) streamBroke(e *executor, reason string) {
	b.deaths.await(e.id, func() { b.killMesosTask(e) }, func(st *mesos.TaskStatus) {
		b.reportLost(e, st, reason, exitCausedByApp(st))
	})
}

// exitCausedByApp reports whether an executor's end may be the
// application's fault, as its Mesos status says (nil: none came in time).
// One lost with its agent (TASK_LOST, or an agent or master losing track
// of it) never is: its tasks count toward neither exclusion nor
// flint.task.maxFailures, since several agents may share a host.
func exitCausedByApp(st *mesos.TaskStatus) bool {
	return st == nil || (st.GetState() != mesos.TASK_LOST && !launchbackoff.InfrastructureLoss(*st))
}

// mesosEnded reports an executor whose Mesos task ended, with its stderr;
// it completes a report held by streamBroke, if any.
func (b *Backend) mesosEnded(e *executor, st mesos.TaskStatus, report bool, causedByApp bool) {
	if b.deaths.ended(e.id, st) || !report {
		return
	}
	b.reportLost(e, &st, "", causedByApp)
}
