package master

import (
	"context"
	"fmt"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

func linkShutdownFramework(id string) link.MasterMessage {
	return link.MasterMessage{ShutdownFramework: &link.ShutdownFramework{FrameworkID: mesos.FrameworkID{Value: id}}}
}

func linkUpdateFramework(fi mesos.FrameworkInfo) link.MasterMessage {
	return link.MasterMessage{UpdateFramework: &link.UpdateFramework{Framework: fi}}
}

// deliver sends a message to an agent; failures are logged (the agent
// resends what matters and the health check notices dead agents).
func (m *Master) deliver(a *agent, msg link.MasterMessage) {
	if a.to == nil {
		return
	}
	if err := a.to.Deliver(msg); err != nil {
		m.log.WithFields(logrus.Fields{"agent": a.id, "error": err}).Warn("delivery to agent failed")
	}
}

// RegisterAgent implements link.Master: new agents get an id
// <masterID>-S<n>; re-registering ones (known, or unknown after a master
// restart) keep theirs and their frameworks, executors and tasks are
// rebuilt from the Registration.
func (m *Master) RegisterAgent(_ context.Context, r link.Registration, to link.Agent) (link.Registered, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return link.Registered{}, link.ErrClosed
	}
	if r.AgentInfo.Hostname == "" {
		return link.Registered{}, fmt.Errorf("master: agent registration without hostname")
	}
	now := m.cfg.Clock.Now()
	id := r.AgentInfo.GetID().GetValue()
	if id != "" && m.gone[id] {
		return link.Registered{}, link.ErrUnknownAgent
	}
	if id == "" {
		id = fmt.Sprintf("%s-S%d", m.cfg.ID, m.nextAgent)
		m.nextAgent++
	}
	old := m.agents[id]
	if old != nil {
		m.rescindAgentOffers(id)
		m.alloc.RemoveAgent(id)
	}
	delete(m.unreachable, id)
	info := r.AgentInfo
	info.ID = &mesos.AgentID{Value: id}
	ag := &agent{id: id, info: info, endpoint: r.Endpoint, to: to, connected: true, active: true,
		registered: now, total: cloneResources(info.Resources)}
	m.agents[id] = ag
	if old != nil {
		m.reconcileKnownAgent(ag, &r)
	}
	m.adoptRegistration(ag, &r, now)
	m.shutdownRemovedFrameworks(ag, &r)
	m.alloc.AddAgent(id, info.Hostname, ag.total, m.usedOnAgent(id))
	if r.AgentInfo.ID != nil {
		m.inc("master/slave_reregistrations", 1)
	} else {
		m.inc("master/slave_registrations", 1)
	}
	m.log.WithFields(logrus.Fields{"agent": id, "hostname": info.Hostname, "tasks": len(r.Tasks)}).Info("agent registered")
	m.generateOffersLocked(id)
	return link.Registered{AgentID: mesos.AgentID{Value: id}, MasterInfo: m.info, PingInterval: m.cfg.AgentPingInterval,
		PingTimeout: m.cfg.AgentPingInterval * time.Duration(max(m.cfg.AgentMaxMissedPings, 1))}, nil
}

// reconcileKnownAgent handles a known agent re-registering without some
// of the tasks and executors the master has for it, as Mesos'
// reconcileKnownSlave does: a missing non-terminal task may be one whose
// RunTask the agent had not handled yet when it built its registration
// (or one whose RunTask was lost), so it is kept, its resources still
// counted, and the agent is asked about it with ReconcileTasks, which
// follows every earlier message on the agent's connection: the agent
// answers TASK_LOST (TASK_DROPPED if partition-aware) for the tasks it
// never got, and reports the kept executors it does not run as exited.
// Deciding here, from a registration built before the RunTask arrived,
// reported a task the agent then started as lost, and then as running.
// Missing terminal tasks are removed silently; missing executors no
// such task uses are forgotten. Callers hold m.mu, and the allocator has
// already forgotten the agent.
func (m *Master) reconcileKnownAgent(ag *agent, r *link.Registration) {
	key := func(fw, id string) string { return fw + "\x00" + id }
	tasks, execs := map[string]bool{}, map[string]bool{}
	for i := range r.Tasks {
		tasks[key(r.Tasks[i].FrameworkID.Value, r.Tasks[i].TaskID.Value)] = true
	}
	for i := range r.Executors {
		execs[key(r.Executors[i].FrameworkID.Value, r.Executors[i].Info.ExecutorID.Value)] = true
	}
	for _, fid := range sortedKeys(m.fws) {
		f := m.fws[fid]
		rec := link.ReconcileTasks{Framework: f.info}
		asked := map[string]bool{}
		for _, tid := range sortedKeys(f.tasks) {
			t := f.tasks[tid]
			if t.t.AgentID.Value != ag.id || tasks[key(f.id, tid)] {
				continue
			}
			if isTerminal(t.state()) {
				t.recovered = true // the agent's resources are recounted from r
				m.completeTask(f, t)
				continue
			}
			rec.Tasks = append(rec.Tasks, link.ReconcileTask{TaskID: t.t.TaskID, ExecutorID: t.t.ExecutorID})
			if t.t.ExecutorID != nil {
				asked[t.t.ExecutorID.Value] = true
			}
			m.log.WithFields(logrus.Fields{"agent": ag.id, "framework": f.id, "task": tid}).
				Warn("task unknown to the re-registering agent: reconciling with the agent")
		}
		for _, eid := range sortedKeys(f.executors[ag.id]) {
			switch {
			case execs[key(f.id, eid)]:
			case asked[eid]:
				rec.Executors = append(rec.Executors, mesos.ExecutorID{Value: eid})
			default:
				delete(f.executors[ag.id], eid)
			}
		}
		if len(f.executors[ag.id]) == 0 {
			delete(f.executors, ag.id)
		}
		if len(rec.Tasks) > 0 {
			m.deliver(ag, link.MasterMessage{ReconcileTasks: &rec})
		}
	}
}

// shutdownRemovedFrameworks tells a (re-)registering agent to shut down
// the frameworks it reports that were removed meanwhile (it was
// disconnected when they were), as Mesos does for completed frameworks
// on re-registration. The message follows the registration's answer.
// Callers hold m.mu.
func (m *Master) shutdownRemovedFrameworks(ag *agent, r *link.Registration) {
	removed := map[string]bool{}
	for i := range r.Frameworks {
		if id := r.Frameworks[i].GetID().GetValue(); m.removedFw.has(id) {
			removed[id] = true
		}
	}
	for i := range r.Executors {
		if id := r.Executors[i].FrameworkID.Value; m.removedFw.has(id) {
			removed[id] = true
		}
	}
	for _, id := range sortedKeys(removed) {
		m.log.WithFields(logrus.Fields{"agent": ag.id, "framework": id}).Info("agent runs a removed framework; shutting it down")
		m.deliver(ag, linkShutdownFramework(id))
	}
}

// adoptRegistration rebuilds frameworks, executors and tasks an agent
// reports. Callers hold m.mu.
func (m *Master) adoptRegistration(ag *agent, r *link.Registration, now time.Time) {
	for i := range r.Frameworks {
		fi := r.Frameworks[i]
		if fi.ID == nil || m.fws[fi.ID.Value] != nil || m.removedFw.has(fi.ID.Value) {
			continue
		}
		f := m.newFramework(fi, now)
		f.recoveredOnly = true
		m.alloc.AddFramework(allocInfo(f), false, nil)
	}
	for i := range r.Executors {
		e := r.Executors[i]
		if f := m.fws[e.FrameworkID.Value]; f != nil {
			info := e.Info
			info.FrameworkID = &mesos.FrameworkID{Value: f.id}
			m.addExecutor(f, ag.id, &info)
		}
	}
	for i := range r.Tasks {
		rt := r.Tasks[i]
		f := m.fws[rt.FrameworkID.Value]
		if f == nil {
			continue
		}
		rt.AgentID = mesos.AgentID{Value: ag.id}
		t := &task{t: rt, pending: map[string]mesos.TaskState{}}
		if rt.State == nil {
			t.t.State = mesos.TASK_STAGING.Enum()
		}
		aid := rt.AgentID
		t.latest = mesos.TaskStatus{TaskID: rt.TaskID, State: t.t.State, AgentID: &aid, ExecutorID: rt.ExecutorID}
		if n := len(rt.Statuses); n > 0 {
			t.latest = rt.Statuses[n-1]
			t.latest.AgentID = &aid
		}
		delete(f.unreachableTasks, rt.TaskID.Value)
		t.recovered = isTerminal(t.state())
		t.counted = t.recovered
		f.tasks[rt.TaskID.Value] = t
	}
}

// usedOnAgent sums, by framework, resources of live tasks and executors.
func (m *Master) usedOnAgent(agentID string) map[string]mesos.Resources {
	used := map[string]mesos.Resources{}
	for id, f := range m.fws {
		var rs mesos.Resources
		for _, t := range f.tasks {
			if t.t.AgentID.Value == agentID && !t.recovered {
				rs = rs.Plus(t.t.Resources...)
			}
		}
		for _, e := range f.executors[agentID] {
			rs = rs.Plus(e.Resources...)
		}
		if len(rs) > 0 {
			used[id] = rs
		}
	}
	return used
}

// FromAgent implements link.Master.
func (m *Master) FromAgent(_ context.Context, agentID string, msg link.AgentMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return link.ErrClosed
	}
	ag := m.agents[agentID]
	if ag == nil {
		return link.ErrUnknownAgent
	}
	switch {
	case msg.StatusUpdate != nil:
		m.statusUpdate(ag, msg.StatusUpdate)
	case msg.ExecutorExited != nil:
		m.executorExited(ag, msg.ExecutorExited)
	case msg.ExecutorMessage != nil:
		em := msg.ExecutorMessage
		if f := m.fws[em.FrameworkID.Value]; f != nil {
			m.inc("master/valid_executor_to_framework_messages", 1)
			f.send(&scheduler.Event{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{
				AgentID: mesos.AgentID{Value: ag.id}, ExecutorID: em.ExecutorID, Data: em.Data,
			}})
		} else {
			m.inc("master/invalid_executor_to_framework_messages", 1)
		}
	case msg.Pong != nil:
		if !ag.pingPaused {
			ag.missed = 0
			ag.lastPong = msg.Pong.Seq
		}
	default:
		return fmt.Errorf("master: empty agent message")
	}
	return nil
}

// executorExited frees an executor and sends FAILURE. Callers hold m.mu.
func (m *Master) executorExited(ag *agent, ee *link.ExecutorExited) {
	f := m.fws[ee.FrameworkID.Value]
	if f == nil {
		return
	}
	if e := f.executors[ag.id][ee.ExecutorID.Value]; e != nil {
		delete(f.executors[ag.id], ee.ExecutorID.Value)
		if len(f.executors[ag.id]) == 0 {
			delete(f.executors, ag.id)
		}
		m.alloc.Recover(ag.id, f.id, e.Resources, nil, m.cfg.Clock.Now())
		m.released(ag.id)
	}
	aid, eid, status := mesos.AgentID{Value: ag.id}, ee.ExecutorID, ee.Status
	f.send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{
		AgentID: &aid, ExecutorID: &eid, Status: &status,
	}})
}

// AgentDisconnected implements link.Master: the agent is deactivated, its
// offers rescinded, and tasks of non-checkpointing frameworks lost at once.
func (m *Master) AgentDisconnected(agentID string, to link.Agent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ag := m.agents[agentID]
	if m.closed || ag == nil || ag.to != to || !ag.connected {
		return
	}
	ag.connected, ag.active = false, false
	m.alloc.DeactivateAgent(agentID)
	m.rescindAgentOffers(agentID)
	for _, fid := range sortedKeys(m.fws) {
		f := m.fws[fid]
		if f.info.GetCheckpoint() {
			continue
		}
		for _, tid := range sortedKeys(f.tasks) {
			t := f.tasks[tid]
			if t.t.AgentID.Value != agentID {
				continue
			}
			if !isTerminal(t.state()) {
				st := m.masterStatus(t, mesos.TASK_LOST, mesos.REASON_AGENT_DISCONNECTED, "Agent "+agentID+" disconnected")
				m.setLatest(t, st)
				m.sendUpdate(f, st)
			}
			m.completeTask(f, t)
		}
		for _, e := range f.executors[agentID] {
			m.alloc.Recover(agentID, f.id, e.Resources, nil, m.cfg.Clock.Now())
		}
		delete(f.executors, agentID)
	}
	m.log.WithField("agent", agentID).Warn("agent disconnected")
}

// pingLocked pings connected agents and removes those that missed too
// many pings. Callers hold m.mu.
func (m *Master) pingLocked(now time.Time) {
	m.pingSeq++
	for _, id := range sortedKeys(m.agents) {
		ag := m.agents[id]
		if ag.missed >= m.cfg.AgentMaxMissedPings {
			m.log.WithFields(logrus.Fields{"agent": id, "missed": ag.missed}).Warn("agent failed health checks")
			m.removeAgent(ag, false, now)
			continue
		}
		ag.missed++
		if ag.connected {
			m.deliver(ag, link.MasterMessage{Ping: &link.Ping{Seq: m.pingSeq}})
		}
	}
}

// removeAgent removes an agent: offers rescinded, its tasks TASK_LOST (or
// TASK_UNREACHABLE / TASK_GONE_BY_OPERATOR for partition-aware
// frameworks), executors forgotten, FAILURE{agent_id} to every framework.
// Callers hold m.mu.
func (m *Master) removeAgent(ag *agent, byOperator bool, now time.Time) {
	m.rescindAgentOffers(ag.id)
	state, reason, msg := mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED, "Agent "+ag.id+" is unreachable"
	if byOperator {
		state, reason, msg = mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, "Agent "+ag.id+" removed by operator"
	}
	for _, fid := range sortedKeys(m.fws) {
		f := m.fws[fid]
		for _, tid := range sortedKeys(f.tasks) {
			t := f.tasks[tid]
			if t.t.AgentID.Value != ag.id {
				continue
			}
			t.recovered = true // the allocator forgets the agent below
			if isTerminal(t.state()) {
				m.completeTask(f, t)
				continue
			}
			st := m.masterStatus(t, state, reason, msg)
			if !byOperator {
				st.UnreachableTime = &mesos.TimeInfo{Nanoseconds: now.UnixNano()}
			}
			m.setLatest(t, st)
			m.sendUpdate(f, st)
			if byOperator {
				m.completeTask(f, t)
			} else {
				delete(f.tasks, tid)
				f.unreachableTasks[tid] = t
			}
		}
		delete(f.executors, ag.id)
	}
	m.alloc.RemoveAgent(ag.id)
	delete(m.agents, ag.id)
	if byOperator {
		m.gone[ag.id] = true
	} else {
		m.unreachable[ag.id] = now
	}
	aid := mesos.AgentID{Value: ag.id}
	for _, fid := range sortedKeys(m.fws) {
		m.fws[fid].send(&scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &aid}})
	}
	m.inc("master/slave_removals", 1)
	m.log.WithFields(logrus.Fields{"agent": ag.id, "by_operator": byOperator}).Warn("agent removed")
}
