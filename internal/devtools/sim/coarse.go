package sim

import (
	"context"
	"errors"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/coarse"
	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// The coarse backend's executors. Each is a Mesos command task of the
// framework (its cpus and memory are the task's) that, once started,
// registers with the driver over its gateway stream; the driver's tasks
// reach it on that stream (coarse.Streams, which the sim implements in
// place of the gRPC gateway: coarse.WithStreams) and its task updates go
// back on it (gateway.Events), in order per executor after the network's
// seeded delay. When the executor dies (crash, agent loss, kill through
// Mesos) its stream breaks — no update of its running tasks follows — and
// Mesos reports its task's end; asked to stop, it closes its stream and its
// task ends FINISHED.

// errNoResultBlocks is what the simulated gateway answers a result fetch:
// simulated tasks return their (small) values inline.
var errNoResultBlocks = errors.New("sim: no result blocks: simulated results are inline")

// ctask is a driver's task running on a coarse executor.
type ctask struct {
	td    *flintpb.TaskDescription
	stage *stagetask.Task
	exec  *executor
}

// streams is the simulated executor gateway (coarse.Streams). Its calls
// come on the backend's owner goroutine during a Flush and are recorded
// for the sim's goroutine; broken is written by the sim's goroutine
// between Flushes (the Flush orders the two).
//
// Each driver incarnation has its own (restart.go): a dead driver's
// gateway is gone, so nothing more reaches it or comes from it.
type streams struct {
	m      *master
	ev     gateway.Events
	broken map[string]bool // executors whose stream the gateway saw end
	inc    *incarnation
}

var _ coarse.Streams = (*streams)(nil)

func (g *streams) LaunchTasks(id string, tds []*flintpb.TaskDescription) error {
	if g.broken[id] || !g.inc.alive() {
		return gateway.ErrExecutorLost
	}
	g.m.s.record(func() { g.m.toExec(id, func(e *executor) { g.m.runCoarse(e, tds) }) })
	return nil
}

func (g *streams) Kill(id string, taskID uint64, _ string) error {
	if g.broken[id] || !g.inc.alive() {
		return gateway.ErrExecutorLost
	}
	g.m.s.record(func() { g.m.toExec(id, func(e *executor) { g.m.killCoarse(e, taskID) }) })
	return nil
}

func (g *streams) ReleaseResult(string, string) {}

func (g *streams) ReleaseShuffle(id, _ string, shuffleID int, all bool) {
	if g.broken[id] || !g.inc.alive() {
		return
	}
	g.m.s.record(func() {
		g.m.toExec(id, func(e *executor) {
			g.m.s.logf("release shuffle %d on %s (all %v)", shuffleID, id, all)
			e.release(shuffleID, all)
		})
	})
}

func (g *streams) StopExecutor(id, reason string) error {
	if g.broken[id] || !g.inc.alive() {
		return gateway.ErrExecutorLost
	}
	g.m.s.record(func() {
		g.m.toExec(id, func(e *executor) {
			g.m.s.logf("executor %s asked to stop: %s", id, reason)
			g.m.exitCoarse(e, mesos.TASK_FINISHED, nil, "stopped")
		})
	})
	return nil
}

func (g *streams) FetchResult(context.Context, string, string) ([]byte, error) {
	return nil, errNoResultBlocks
}

// toExec delivers a message on an executor's stream after the network's
// delay, in the order sent; an executor gone by then never reads it.
func (m *master) toExec(id string, fn func(e *executor)) {
	m.inflight++
	m.s.at(m.streamDelay("to "+id), func() {
		m.inflight--
		if e := m.execIdx[id]; e != nil {
			fn(e)
		}
	})
}

// fromExec delivers an executor's message to its driver's gateway gw on
// its stream, after the network's delay, in the order sent (the stream's
// end last); a dead driver's gateway gets nothing.
func (m *master) fromExec(gw *streams, id string, fn func()) {
	m.inflight++
	m.s.at(m.streamDelay("from "+id), func() {
		m.inflight--
		if gw.inc.alive() {
			fn()
		}
	})
}

// streamDelay is the network's seeded delay on one direction of a stream,
// never before that direction's previous message.
func (m *master) streamDelay(key string) time.Duration {
	at := m.s.clk.Now().Add(m.jitter())
	if last := m.agentLast[key]; at.Before(last) {
		at = last
	}
	m.agentLast[key] = at
	return at.Sub(m.s.clk.Now())
}

// startCoarse starts executor t (a Mesos task of the framework): RUNNING,
// then it registers on its stream with the task's whole cpus as its cores.
func (m *master) startCoarse(a *agent, t *mtask) {
	e := &executor{id: t.id, agent: a, outputs: map[outputKey]bool{}, cores: int(t.cpus + eps), coarse: map[uint64]*ctask{},
		inc: t.inc, gw: m.gw}
	a.execs[e.id] = e
	m.execIdx[e.id] = e
	m.s.logf("executor %s starts on %s (%d cores)", e.id, a.id, e.cores)
	m.deliver(status(t, mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil, nil))
	m.fromExec(e.gw, e.id, func() {
		if m.execIdx[e.id] != e {
			return // died before it registered
		}
		m.s.logf("executor %s registers", e.id)
		e.gw.ev.ExecutorRegistered(gateway.ExecutorInfo{ID: e.id, Host: a.host, AgentID: a.id, Cores: e.cores})
	})
}

// runCoarse starts the driver's tasks on executor e, each for its seeded
// time; the executor's cores bound how many run at once (the driver's
// placement).
func (m *master) runCoarse(e *executor, tds []*flintpb.TaskDescription) {
	for _, td := range tds {
		st, err := stageOf(td)
		if err != nil {
			m.s.fail("task %d: undecodable: %v", td.TaskId, err)
			return
		}
		if e.coarse[td.TaskId] != nil {
			m.s.fail("task %d launched twice on %s", td.TaskId, e.id)
			return
		}
		ct := &ctask{td: td, stage: st, exec: e}
		e.coarse[td.TaskId] = ct
		e.tasks++
		m.s.logf("executor %s runs task %d", e.id, td.TaskId)
		if e.tasks > e.cores {
			m.s.fail("executor %s runs %d tasks on %d cores", e.id, e.tasks, e.cores)
			return
		}
		m.s.at(m.runTime(e.agent), func() { m.finishCoarse(ct) })
	}
}

// finishCoarse ends a task its time: FINISHED with its value, or FAILED
// naming the block it could not fetch.
func (m *master) finishCoarse(ct *ctask) {
	e := ct.exec
	if m.execIdx[e.id] != e || e.coarse[ct.td.TaskId] != ct {
		return // killed, or its executor died
	}
	delete(e.coarse, ct.td.TaskId)
	e.tasks--
	u, _, err := wireOutput(ct.td.TaskId, m.execute(ct.stage, e, ct.td.TaskId, "task "+strconv.FormatUint(ct.td.TaskId, 10)))
	if err != nil {
		m.s.fail("encode result: %v", err)
		return
	}
	u.Attempt, u.ExecutorId = ct.td.Attempt, e.id
	m.fromExec(e.gw, e.id, func() {
		m.s.logf("update %d %s from %s", u.TaskId, u.State, e.id)
		e.gw.ev.StatusUpdate(u)
	})
}

// killCoarse kills a running task: it ends KILLED; an unknown one (ended
// meanwhile) is ignored, as the executor runtime does.
func (m *master) killCoarse(e *executor, taskID uint64) {
	ct := e.coarse[taskID]
	if ct == nil {
		m.s.logf("kill %d on %s: not running", taskID, e.id)
		return
	}
	delete(e.coarse, taskID)
	e.tasks--
	m.s.logf("kill %d on %s", taskID, e.id)
	u := &flintpb.StatusUpdate{TaskId: taskID, Attempt: ct.td.Attempt, ExecutorId: e.id, State: flintpb.TaskState_TASK_KILLED}
	m.fromExec(e.gw, e.id, func() { e.gw.ev.StatusUpdate(u) })
}

// exitCoarse ends executor e's process: its running tasks and outputs go
// with it, its stream ends (the gateway reports it), and Mesos reports its
// task's end (state, reason) from the agent, whose resources come back.
func (m *master) exitCoarse(e *executor, state mesos.TaskState, reason *mesos.TaskStatus_Reason, why string) {
	a := e.agent
	delete(m.execIdx, e.id)
	delete(a.execs, e.id)
	e.coarse, e.tasks = nil, 0
	m.breakStream(e.gw, e.id, why)
	if t := m.tasks[e.id]; t != nil && m.end(t) && !a.gone {
		m.deliver(status(t, state, mesos.SOURCE_AGENT, reason, nil))
	}
}

// breakStream delivers the end of an executor's stream after its last
// message: the gateway then refuses calls on it.
func (m *master) breakStream(gw *streams, id, why string) {
	m.fromExec(gw, id, func() {
		m.s.logf("stream of %s ends: %s", id, why)
		gw.broken[id] = true
		gw.ev.ExecutorLost(id, why)
	})
}
