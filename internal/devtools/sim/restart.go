package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/coarse"
	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/mesosbackend"
)

// The driver restart fault (Faults.Restarts). The driver process dies
// without a Stop: its backend's Mesos connection and its executors'
// gateway streams break, and nothing it does reaches the cluster any more
// (every call of a dead incarnation, made or on its way, is dropped; its
// backend is stopped only to end its goroutine). The master keeps the
// framework for its failover timeout, with its tasks and executors
// running, as Mesos does for a disconnected framework: it rescinds the
// framework's offers and holds its status updates (the agents retry
// them). 1–20 s later a new driver — a new driver.Driver and backend with
// flint.mesos.driver.frameworkId set, its ids tagged (WithIDTag) —
// subscribes with the same framework id, which Mesos treats as a failover
// (Master::failoverFramework: the old connection closed, offers gone, the
// tasks kept); the held updates flow to it, and the master answers
// mesosconn's implicit reconciliation with the latest state of every task
// of the framework. Spark on Mesos does not recover a dead driver's jobs:
// the new driver runs every job again from the start, under new shuffle
// ids, so that an output or a value of the old driver's reaching it is
// told apart.
//
// What must hold: each incarnation's attempts end once (the new driver's
// own record: no update of an old task counts for it); no Mesos task id is
// launched by two incarnations (an old task's update would be taken for
// the new one's); the new driver's results are exact; and once its jobs
// ended and the run settled, no task or executor of an old incarnation is
// left (checkNoneLeft). Not modelled: a coarse executor's own exit after
// flint.network.timeout without its driver (ErrDriverUnreachable), so
// that the check proves the new driver's kills, not that timeout.

// incarnation is one driver process. dead is set by the sim's goroutine
// and read by the dead backend's owner goroutine (its calls are dropped).
type incarnation struct {
	n    int
	dead atomic.Bool
	stop func() // stops its backend (once)
}

func (inc *incarnation) alive() bool { return inc != nil && !inc.dead.Load() }

// dialer is incarnation inc's mesosbackend.Dialer: the master's events go
// to the handler of the driver that dialed last.
func (m *master) dialer(inc *incarnation) mesosbackend.Dialer {
	return func(_ context.Context, h mesosconn.Handler) (mesosbackend.Conn, string, error) {
		if m.inc == nil {
			m.alloc.AddFramework(allocator.FrameworkInfo{ID: frameworkID}, true, nil)
		}
		m.h, m.inc = h, inc
		return conn{m, inc}, "flint", nil
	}
}

// newStreams is incarnation inc's coarse.WithStreams: the executors it
// starts register with its gateway.
func (m *master) newStreams(inc *incarnation) func(gateway.Events) coarse.Streams {
	return func(ev gateway.Events) coarse.Streams {
		m.gw = &streams{m: m, ev: ev, broken: map[string]bool{}, inc: inc}
		return m.gw
	}
}

// killDriver is the fault: the live driver process dies, and a successor
// is started 1–20 s later. A driver whose connection is down already
// (failover, partition) or whose jobs all ended dies another time.
func (s *Sim) killDriver() {
	d := s.d
	if s.m.down || s.m.stopped || d.dead.Load() || d.done() {
		return
	}
	s.logf("FAULT driver %d dies (no Stop): the master keeps framework %s for its failover timeout", s.inc, frameworkID)
	d.dead.Store(true)
	d.inc.dead.Store(true)
	d.inc.stop() // ends its goroutine; every call it makes is dropped
	s.b = nil
	s.m.driverGone()
	s.at(time.Second+time.Duration(s.rng.Int64N(int64(19*time.Second))), s.restartDriver)
}

// restartDriver starts the successor: a new driver and backend
// subscribing with the same framework id, which then runs every job from
// the start.
func (s *Sim) restartDriver() {
	base := s.d.base + len(s.d.jobs)
	s.inc++
	cfg, err := s.config()
	if err == nil {
		err = s.startDriver(cfg)
	}
	if err != nil {
		s.fail("restart driver %d: %v", s.inc, err)
		return
	}
	s.d.base = base
	s.logf("driver %d starts and subscribes as framework %s", s.inc, frameworkID)
	s.m.successorSubscribed()
	s.d.start()
}

// driverGone is the master losing the framework's connection: the
// framework is inactive (no offers; its outstanding ones rescinded and
// their resources recovered) and its events are held; the dead
// connection's record of unended tasks is gone with it.
func (m *master) driverGone() {
	m.down = true
	m.voidOffers()
	m.unended = map[string]bool{}
	m.demand = true // a new connection starts with demand on (mesosconn)
}

// successorSubscribed is the SUBSCRIBE of a new driver with the existing
// framework id: a failover of the framework (the old connection closed,
// the framework active again, unsuppressed: the call names no suppressed
// role), a first subscription for the new connection. The held updates
// flow to it; mesosconn then reconciles implicitly, and the master
// answers with the latest state of every task it knows of the framework
// (Mesos' _reconcileTasks with no task named): the live tasks' RUNNING,
// and the terminal state of those whose update was not acknowledged —
// SOURCE_MASTER, REASON_RECONCILIATION.
func (m *master) successorSubscribed() {
	m.down = false
	m.alloc.SetSuppressed(frameworkID, nil)
	m.h.Subscribed(frameworkID, m.info, false)
	reason := mesos.REASON_RECONCILIATION
	msg := "Reconciliation: Latest task state"
	for _, id := range sortedKeys(m.tasks) {
		t := m.tasks[id]
		st := status(t, mesos.TASK_RUNNING, mesos.SOURCE_MASTER, &reason, nil)
		st.Message = &msg
		m.s.logf("reconcile %s (driver %d's): RUNNING", id, t.inc)
		m.deliver(st)
	}
	for _, id := range sortedKeys(m.forwarded) {
		if m.tasks[id] != nil {
			continue
		}
		st := m.forwarded[id]
		m.s.logf("reconcile %s: %s, its update not acknowledged", id, st.GetState())
		m.deliver(mesos.TaskStatus{TaskID: st.TaskID, State: st.State, Source: mesos.SOURCE_MASTER.Enum(), Reason: &reason,
			Message: &msg, AgentID: st.AgentID, ExecutorID: st.ExecutorID})
	}
}

// launchedOnce asserts that no Mesos task id is launched by two driver
// incarnations: the backends tell their tasks' updates apart by id, so an
// old task's update would be taken for the new task's.
func (m *master) launchedOnce(id string) bool {
	if m.s.cfg.Faults.Restarts == 0 {
		return true
	}
	if n, ok := m.launchedBy[id]; ok && n != m.inc.n {
		m.s.fail("driver %d launched task id %s, which driver %d's task had: an update of the old task would count as the new one's", m.inc.n, id, n)
		return false
	}
	m.launchedBy[id] = m.inc.n
	return true
}

// shutdown is a SHUTDOWN of a fine executor: it kills its tasks (each
// TASK_KILLED from the executor) and exits; Mesos reports its exit.
func (m *master) shutdown(execID, agentID string) {
	e := m.execIdx[execID]
	if e == nil || e.agent.id != agentID || e.coarse != nil {
		m.s.logf("shutdown %s on %s: no such executor", execID, agentID)
		return
	}
	a := e.agent
	m.s.logf("shutdown %s on %s (driver %d's)", execID, agentID, e.inc)
	for _, id := range sortedKeys(m.tasks) {
		if t := m.tasks[id]; t.agent == a.id && t.exec == e.id && m.end(t) {
			m.deliver(status(t, mesos.TASK_KILLED, mesos.SOURCE_EXECUTOR, nil, nil))
		}
	}
	delete(a.execs, e.id)
	delete(m.execIdx, e.id)
	a.usedC -= e.cpus
	a.usedM -= e.mem
	m.alloc.Recover(a.id, frameworkID, scalars(e.cpus, e.mem), nil, m.s.clk.Now())
	m.send(m.fromAgent(a.id), func() { m.h.ExecutorLost(mesos.AgentID{Value: a.id}, mesos.ExecutorID{Value: e.id}, 0) })
}

// checkNoneLeft asserts, once the live driver's jobs ended and the run
// settled, that no task or executor an earlier driver launched is left.
func (m *master) checkNoneLeft() {
	var left []string
	for _, id := range sortedKeys(m.tasks) {
		if t := m.tasks[id]; t.inc != m.inc.n {
			left = append(left, fmt.Sprintf("task %s (driver %d's) on %s", id, t.inc, t.agent))
		}
	}
	for _, id := range sortedKeys(m.execIdx) {
		if e := m.execIdx[id]; e.inc != m.inc.n {
			left = append(left, fmt.Sprintf("executor %s (driver %d's) on %s holding %d map outputs", id, e.inc, e.agent.id, len(e.outputs)))
		}
	}
	if len(left) > 0 {
		m.s.fail("driver %d's jobs ended, and a predecessor's work is left running: %s", m.inc.n, strings.Join(left, "; "))
	}
}

// errDriverGone is what an executor of a dead driver gets asking it for
// map statuses: the process is gone.
var errDriverGone = errors.New("sim: the driver that started this executor is gone")

// statusSource is where executor e loads map statuses from: the driver
// that started it, which answers no more once dead — its reducers then
// fail to fetch, as a real executor's that cannot reach its driver.
func (m *master) statusSource(e *executor) stagetask.StatusSource {
	d := m.s.drivers[e.inc]
	src := d.d.StatusSource()
	return func(ctx context.Context, ref stagetask.StatusRef) (*mapoutput.Snapshot, error) {
		if d.dead.Load() {
			return nil, errDriverGone
		}
		return src(ctx, ref)
	}
}
