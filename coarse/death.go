package coarse

import (
	"context"
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/sandbox"
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
// its stderr): a broken stream waits for the Mesos status; the report is
// written off the caller's goroutine, since it reads the sandbox over HTTP.
type deaths struct {
	client  *http.Client
	mu      sync.Mutex
	pending map[string]*pendingDeath
	closed  bool
	wg      sync.WaitGroup
}

type pendingDeath struct {
	timer  *time.Timer
	report func(st *mesos.TaskStatus)
}

func newDeaths() *deaths {
	return &deaths{client: &http.Client{Timeout: describeTimeout}, pending: map[string]*pendingDeath{}}
}

// await holds the report of an executor whose stream broke until its Mesos
// status arrives (ended) or deathGrace passes (then timedOut runs first).
func (d *deaths) await(id string, timedOut func(), report func(st *mesos.TaskStatus)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	p := &pendingDeath{report: report}
	p.timer = time.AfterFunc(deathGrace, func() {
		if d.take(id) == p {
			d.run(func() {
				timedOut()
				report(nil)
			})
		}
	})
	d.pending[id] = p
}

func (d *deaths) take(id string) *pendingDeath {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pending[id]
	delete(d.pending, id)
	return p
}

// ended delivers an executor's terminal Mesos status to its held report;
// false when none was held.
func (d *deaths) ended(id string, st mesos.TaskStatus) bool {
	p := d.take(id)
	if p == nil {
		return false
	}
	p.timer.Stop()
	d.run(func() { p.report(&st) })
	return true
}

// run runs f on its own goroutine unless closed.
func (d *deaths) run(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// close drops held reports and waits for the ones being written.
func (d *deaths) close() {
	d.mu.Lock()
	d.closed = true
	for id, p := range d.pending {
		p.timer.Stop()
		delete(d.pending, id)
	}
	d.mu.Unlock()
	d.wg.Wait()
}

// describeDeath is the reason an executor is reported lost with.
func (b *Backend) describeDeath(e *executor, st *mesos.TaskStatus, lost string) string {
	b.mu.Lock()
	conn := b.conn
	b.mu.Unlock()
	master := ""
	if conn != nil {
		master = sandbox.MasterURL(conn.Master())
	}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	return sandbox.Describe(ctx, b.deaths.client, master, sandbox.Death{ExecutorID: e.id, Host: e.host, AgentID: e.agentID,
		FrameworkID: b.FrameworkID(), Status: st, Lost: lost})
}

// streamBroke reports an executor whose stream broke once its Mesos
// status says how it ended; after deathGrace without one, the executor
// (alive but not trusted again) is killed and reported without it.
func (b *Backend) streamBroke(e *executor, reason string) {
	b.deaths.await(e.id, func() { b.killMesosTask(e) }, func(st *mesos.TaskStatus) {
		b.d.ExecutorLost(e.id, b.describeDeath(e, st, reason), exitCausedByApp(st))
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
	b.deaths.run(func() { b.d.ExecutorLost(e.id, b.describeDeath(e, &st, ""), causedByApp) })
}
