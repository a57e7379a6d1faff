package sim

import (
	"errors"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// whileWorkRuns is a fault's time: within the jobs' expected span, so the
// fault costs work.
func (m *master) whileWorkRuns() time.Duration {
	span := time.Duration(m.s.cfg.Tasks) * m.s.cfg.MeanTask / time.Duration(max(1, m.s.cfg.Agents)*int(max(m.s.cfg.AgentCPUs, 1)))
	return time.Second + time.Duration(m.s.rng.Int64N(int64(max(span*time.Duration(m.s.cfg.Jobs), time.Second))))
}

// fromAgent is the delay of the next event from an agent: the network's
// seeded jitter, but never before the agent's previous event — an agent's
// messages reach the framework in order, through one connection to the
// master and the master's one stream (only the Duplicate and Reorder
// faults break that order, as an agent's retries do).
func (m *master) fromAgent(agentID string) time.Duration {
	at := m.s.clk.Now().Add(m.jitter())
	if last := m.agentLast[agentID]; at.Before(last) {
		at = last
	}
	m.agentLast[agentID] = at
	return at.Sub(m.s.clk.Now())
}

// send hands the framework an event after d; while the master fails over
// it is held (agents retry their updates until a master acknowledges
// them) and delivered after the framework re-subscribed.
func (m *master) send(d time.Duration, fn func()) {
	m.inflight++
	var try func()
	try = func() {
		if m.down {
			m.s.at(500*time.Millisecond, try)
			return
		}
		m.inflight--
		fn()
	}
	m.s.at(d, try)
}

// crashExecutor kills a random executor running tasks, as an OOM kill or
// a crash would: its tasks end FAILED (EXECUTOR_TERMINATED, from the
// agent), its map outputs are gone with it, and Mesos reports its exit
// (signal 9).
func (m *master) crashExecutor() {
	var busy []string
	for _, id := range sortedKeys(m.execIdx) {
		if m.execIdx[id].tasks > 0 {
			busy = append(busy, id)
		}
	}
	if len(busy) == 0 || m.stopped {
		return
	}
	e := m.execIdx[busy[m.s.rng.IntN(len(busy))]]
	var a *agent
	for _, id := range sortedKeys(m.agents) {
		if ag := m.agents[id]; !ag.gone && ag.execs[e.id] == e {
			a = ag
		}
	}
	if a == nil {
		return
	}
	m.s.logf("FAULT executor %s on %s crashes", e.id, a.id)
	if m.s.cfg.Coarse {
		msg := mesos.REASON_COMMAND_EXECUTOR_FAILED
		m.exitCoarse(e, mesos.TASK_FAILED, &msg, "executor crashed")
		return
	}
	reason := mesos.REASON_EXECUTOR_TERMINATED
	for _, id := range sortedKeys(m.tasks) {
		if t := m.tasks[id]; t.agent == a.id && t.exec == e.id {
			m.end(t)
			m.deliver(status(t, mesos.TASK_FAILED, mesos.SOURCE_AGENT, &reason, nil))
		}
	}
	delete(a.execs, e.id)
	delete(m.execIdx, e.id)
	a.usedC -= e.cpus
	a.usedM -= e.mem
	m.alloc.Recover(a.id, frameworkID, scalars(e.cpus, e.mem), nil, m.s.clk.Now())
	m.send(m.fromAgent(a.id), func() { m.h.ExecutorLost(mesos.AgentID{Value: a.id}, mesos.ExecutorID{Value: e.id}, 9) })
}

// partition cuts the network between the driver and the master: the
// driver's calls are lost on the way (those that wait for an answer fail,
// as a timed-out HTTP call does), the master's events are held (agents
// retry their updates; the master keeps the framework's tasks for its
// failover timeout and rescinds its offers, which the driver does not
// hear of), and the driver's connection notices the silence after 2–5 s
// (missed heartbeats: Disconnected). The partition heals 5–20 s after it
// began: the connection subscribes again, to the same leader.
func (m *master) partition() {
	if m.down || m.stopped {
		return
	}
	m.down, m.cut = true, true
	m.s.logf("FAULT partition between the driver and master %s", m.info.ID)
	m.voidOffers()
	noticed := 2*time.Second + time.Duration(m.s.rng.Int64N(int64(3*time.Second)))
	m.s.at(noticed, func() { m.h.Disconnected(errPartitioned) })
	m.s.at(noticed+3*time.Second+time.Duration(m.s.rng.Int64N(int64(12*time.Second))), func() {
		m.down, m.cut = false, false
		m.s.logf("the partition heals; the framework re-subscribes to %s", m.info.ID)
		m.resubscribed()
	})
}

// resubscribed is the framework's SUBSCRIBE after a failover or a
// partition, as Mesos and mesosconn do it: the call names no suppressed
// roles (mesosconn's), so the master unsuppresses the framework and keeps
// its filters (Mesos' updateFramework; minimesos' SetSuppressed); the
// connection then sends SUPPRESS if its demand is off (a SUPPRESS or
// REVIVE lost in a partition does not outlive the subscription either
// way) and reconciles explicitly.
func (m *master) resubscribed() {
	m.alloc.SetSuppressed(frameworkID, nil)
	m.h.Subscribed(frameworkID, m.info, true)
	if !m.demand {
		m.call(func() {
			m.s.logf("demand false (after the re-subscription)")
			m.alloc.Suppress(frameworkID, nil)
		})
	}
	m.reconcile()
}

// reconcile answers the explicit reconciliation mesosconn makes after a
// re-subscription, for every task it launched and saw no end of, as
// Mesos' master does (_reconcileTasks): a task whose terminal update the
// master forwarded but the framework has not acknowledged (it was held
// by the failover or the partition; the agent resends it) is known, and
// its latest state is answered — SOURCE_MASTER, REASON_RECONCILIATION and
// no data, so a FINISHED carries no result; a task the master does not
// know (its launch was lost, or refused while the framework was away) is
// TASK_LOST; a live one's RUNNING changes nothing and is not sent.
func (m *master) reconcile() {
	reason := mesos.REASON_RECONCILIATION
	for _, id := range sortedKeys(m.unended) {
		if m.tasks[id] != nil {
			continue
		}
		if st, ok := m.forwarded[id]; ok {
			m.s.logf("reconcile %s: %s, its update not acknowledged", id, st.GetState())
			msg := "Reconciliation: Latest task state"
			latest := mesos.TaskStatus{TaskID: st.TaskID, State: st.State, Source: mesos.SOURCE_MASTER.Enum(), Reason: &reason,
				Message: &msg, AgentID: st.AgentID, ExecutorID: st.ExecutorID}
			m.deliver(latest)
			continue
		}
		m.s.logf("reconcile %s: unknown to the master", id)
		m.deliver(status(&mtask{id: id}, mesos.TASK_LOST, mesos.SOURCE_MASTER, &reason, nil))
	}
}

var errPartitioned = errors.New("sim: no heartbeat from the master: the network is partitioned")

// voidOffers takes back every outstanding offer, unanswered.
func (m *master) voidOffers() {
	for _, id := range sortedKeys(m.offers) {
		o := m.offers[id]
		delete(m.offers, id)
		m.alloc.OfferAnswered(frameworkID)
		m.alloc.Recover(o.agent, frameworkID, scalars(o.cpus, o.mem), nil, m.s.clk.Now())
	}
}

// failover is a master failover: the framework's stream breaks
// (Disconnected), outstanding offers are void, calls fail until the
// framework re-subscribes 1–3 s later to a new leader (a new master id);
// tasks keep running and their updates wait for the new leader.
func (m *master) failover() {
	if m.down || m.stopped {
		return
	}
	m.down = true
	m.leader++
	m.s.logf("FAULT master failover: leader sim-m%d steps down", m.leader)
	m.voidOffers()
	m.h.Disconnected(errDisconnected)
	m.s.at(time.Second+time.Duration(m.s.rng.Int64N(int64(2*time.Second))), func() {
		m.down = false
		m.info.ID = "sim-m" + strconv.Itoa(m.leader+1)
		m.s.logf("master %s leads; the framework re-subscribes", m.info.ID)
		m.resubscribed()
	})
}
