package master

import (
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

// forFramework maps partition-aware states to TASK_LOST for frameworks
// without PARTITION_AWARE.
func forFramework(f *framework, s mesos.TaskState) mesos.TaskState {
	if f.caps.partitionAware {
		return s
	}
	switch s {
	case mesos.TASK_DROPPED, mesos.TASK_UNREACHABLE, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN:
		return mesos.TASK_LOST
	}
	return s
}

// sendUpdate sends an UPDATE (status.agent_id is expected set).
func (m *Master) sendUpdate(f *framework, st mesos.TaskStatus) {
	st.State = forFramework(f, st.GetState()).Enum()
	f.send(&scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
}

// masterStatus is a master-generated status for a known task (no uuid).
func (m *Master) masterStatus(t *task, st mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	aid := t.t.AgentID
	s := mesos.TaskStatus{
		TaskID: t.t.TaskID, State: st.Enum(), Source: mesos.SOURCE_MASTER.Enum(), Reason: reason.Enum(),
		Message: &msg, AgentID: &aid, ExecutorID: t.t.ExecutorID, Timestamp: m.timestamp(),
	}
	return s
}

// setLatest records a status as the task's latest (and recovers its
// resources the first time it is terminal, reporting true then: the
// caller sends the update, then calls released, so that the framework
// hears of the end before any offer of what it freed, as Mesos' master
// forwards an update before updateTask recovers its resources).
// Callers hold m.mu.
func (m *Master) setLatest(t *task, st mesos.TaskStatus) (freed bool) {
	t.latest = st
	t.t.State = st.GetState().Enum()
	keep := st
	keep.Data = nil
	t.t.Statuses = append(t.t.Statuses, keep)
	if n := len(t.t.Statuses); n > 10 {
		t.t.Statuses = append([]mesos.TaskStatus(nil), t.t.Statuses[n-10:]...)
	}
	if isTerminal(st.GetState()) && !t.counted {
		t.counted = true
		m.countTerminal(&st)
	}
	if isTerminal(st.GetState()) && !t.recovered {
		t.recovered = true
		m.alloc.Recover(t.t.AgentID.Value, t.t.FrameworkID.Value, t.t.Resources, nil, m.cfg.Clock.Now())
		return true
	}
	return false
}

// completeTask moves a task to the framework's completed tasks.
func (m *Master) completeTask(f *framework, t *task) {
	if !t.recovered {
		t.recovered = true
		m.alloc.Recover(t.t.AgentID.Value, f.id, t.t.Resources, nil, m.cfg.Clock.Now())
	}
	delete(f.tasks, t.t.TaskID.Value)
	delete(f.unreachableTasks, t.t.TaskID.Value)
	f.completedTasks = append(f.completedTasks, t)
	if over := len(f.completedTasks) - m.cfg.MaxCompletedTasks; over > 0 {
		f.completedTasks = append([]*task(nil), f.completedTasks[over:]...)
	}
}

// countTerminal counts a terminal state as Mesos does: the counter
// master/tasks_<state> and, when the status has a reason,
// master/task_<state>/source_<source>/reason_<reason>. Callers hold m.mu.
func (m *Master) countTerminal(st *mesos.TaskStatus) {
	s := st.GetState()
	if !isTerminal(s) {
		return
	}
	name := lower(s.String()) // task_finished
	m.inc("master/tasks_"+strings.TrimPrefix(name, "task_"), 1)
	if st.Reason != nil {
		m.inc("master/"+name+"/"+lower(st.GetSource().String())+"/"+lower(st.GetReason().String()), 1)
	}
}

// statusUpdate handles an agent's status update. Callers hold m.mu.
func (m *Master) statusUpdate(ag *agent, su *link.StatusUpdate) {
	st := su.Status
	aid := mesos.AgentID{Value: ag.id}
	st.AgentID = &aid
	if st.ExecutorID == nil && su.ExecutorID != nil {
		e := *su.ExecutorID
		st.ExecutorID = &e
	}
	f := m.fws[su.FrameworkID.Value]
	if f == nil {
		entry := m.log.WithFields(logrus.Fields{"framework": su.FrameworkID.Value, "task": st.TaskID.Value})
		if m.removedFw.has(su.FrameworkID.Value) {
			// An update racing the framework's teardown: expected.
			entry.Debug("dropping status update of a removed framework")
		} else {
			entry.Warn("dropping status update of an unknown framework")
		}
		m.inc("master/invalid_status_updates", 1)
		if m.removedFw.has(su.FrameworkID.Value) {
			// The agent missed the framework's removal (it was disconnected)
			// and would retry the update forever: tell it.
			m.deliver(ag, linkShutdownFramework(su.FrameworkID.Value))
		}
		return
	}
	t := f.tasks[st.TaskID.Value]
	if t == nil {
		if t = f.unreachableTasks[st.TaskID.Value]; t != nil {
			delete(f.unreachableTasks, st.TaskID.Value)
			f.tasks[st.TaskID.Value] = t
		}
	}
	freed := false
	if t != nil {
		freed = m.setLatest(t, st)
		t.t.StatusUpdateState = st.GetState().Enum()
		t.t.StatusUpdateUUID = st.UUID
		if len(st.UUID) > 0 {
			t.pending[string(st.UUID)] = st.GetState()
		} else if isTerminal(st.GetState()) {
			m.completeTask(f, t)
		}
	}
	m.inc("master/valid_status_updates", 1)
	m.sendUpdate(f, st)
	if freed {
		m.released(ag.id)
	}
}

// acknowledge forwards an ACKNOWLEDGE and removes a task whose terminal
// update it acknowledges. Callers hold m.mu.
func (m *Master) acknowledge(f *framework, a *scheduler.Call_Acknowledge) {
	if t := f.tasks[a.TaskID.Value]; t != nil {
		if s, ok := t.pending[string(a.UUID)]; ok {
			delete(t.pending, string(a.UUID))
			if isTerminal(s) {
				m.completeTask(f, t)
			}
		}
	}
	ag := m.agents[a.AgentID.Value]
	if ag == nil || !ag.connected {
		m.log.WithFields(logrus.Fields{"framework": f.id, "agent": a.AgentID.Value}).Warn("dropping acknowledgement for an unknown or disconnected agent")
		m.inc("master/invalid_status_update_acknowledgements", 1)
		return
	}
	m.inc("master/valid_status_update_acknowledgements", 1)
	m.deliver(ag, link.MasterMessage{Acknowledge: &link.Acknowledge{
		FrameworkID: mesos.FrameworkID{Value: f.id}, TaskID: a.TaskID, UUID: append([]byte(nil), a.UUID...),
	}})
}

// kill routes a KILL; unknown tasks get a reconciliation answer.
func (m *Master) kill(f *framework, k *scheduler.Call_Kill) {
	t := f.tasks[k.TaskID.Value]
	if t == nil {
		m.reconcile(f, []scheduler.Call_Reconcile_Task{{TaskID: k.TaskID, AgentID: k.AgentID}})
		return
	}
	ag := m.agents[t.t.AgentID.Value]
	if ag == nil || !ag.connected {
		m.log.WithFields(logrus.Fields{"framework": f.id, "task": k.TaskID.Value}).Warn("cannot kill a task on a disconnected agent")
		return
	}
	m.inc("master/task_kills", 1)
	m.deliver(ag, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: mesos.FrameworkID{Value: f.id}, TaskID: k.TaskID, KillPolicy: k.KillPolicy}})
}

func (m *Master) shutdownExecutor(f *framework, s *scheduler.Call_Shutdown) {
	if ag := m.agents[s.AgentID.Value]; ag != nil && ag.connected {
		m.deliver(ag, link.MasterMessage{ShutdownExecutor: &link.ShutdownExecutor{FrameworkID: mesos.FrameworkID{Value: f.id}, ExecutorID: s.ExecutorID}})
	}
}

func (m *Master) message(f *framework, msg *scheduler.Call_Message) {
	ag := m.agents[msg.AgentID.Value]
	if ag == nil || !ag.connected {
		m.inc("master/invalid_framework_to_executor_messages", 1)
		return
	}
	m.inc("master/valid_framework_to_executor_messages", 1)
	m.deliver(ag, link.MasterMessage{FrameworkMessage: &link.FrameworkMessage{
		FrameworkID: mesos.FrameworkID{Value: f.id}, ExecutorID: msg.ExecutorID, Data: msg.Data,
	}})
}

// reconcile answers RECONCILE: implicit (no tasks) or explicit.
func (m *Master) reconcile(f *framework, tasks []scheduler.Call_Reconcile_Task) {
	reason := mesos.REASON_RECONCILIATION
	send := func(st mesos.TaskStatus) {
		st.Source = mesos.SOURCE_MASTER.Enum()
		st.Reason = reason.Enum()
		st.UUID = nil
		st.Timestamp = m.timestamp()
		m.sendUpdate(f, st)
	}
	if len(tasks) == 0 {
		for _, id := range sortedKeys(f.tasks) {
			send(latestCopy(f.tasks[id]))
		}
		return
	}
	for _, rt := range tasks {
		if t := f.tasks[rt.TaskID.Value]; t != nil {
			send(latestCopy(t))
			continue
		}
		if t := f.unreachableTasks[rt.TaskID.Value]; t != nil {
			send(latestCopy(t))
			continue
		}
		st := mesos.TaskStatus{TaskID: rt.TaskID}
		agentID := rt.GetAgentID().GetValue()
		if agentID != "" {
			aid := mesos.AgentID{Value: agentID}
			st.AgentID = &aid
		}
		switch ag := m.agents[agentID]; {
		case agentID != "" && ag != nil && !ag.connected && !ag.active:
			continue // agent re-registering: no reply, as in Mesos
		case agentID != "" && ag == nil && !m.gone[agentID] && m.unreachable[agentID].IsZero() &&
			m.cfg.Clock.Now().Sub(m.elected) < m.cfg.AgentReregisterTimeout:
			continue // unknown agent soon after a (re)start: it may still re-register
		case agentID != "" && ag != nil:
			st.State = mesos.TASK_GONE.Enum()
		case agentID != "" && m.gone[agentID]:
			st.State = mesos.TASK_GONE_BY_OPERATOR.Enum()
		case agentID != "" && !m.unreachable[agentID].IsZero():
			st.State = mesos.TASK_UNREACHABLE.Enum()
			st.UnreachableTime = &mesos.TimeInfo{Nanoseconds: m.unreachable[agentID].UnixNano()}
		default:
			st.State = mesos.TASK_UNKNOWN.Enum()
		}
		send(st)
	}
}

// latestCopy is the master's answer for a task it knows, as Mesos'
// _reconcileTasks builds it (createStatusUpdate, "Reconciliation: Latest
// task state"): the task's latest state, agent, executor, health and
// container status — none of the update's data, labels or message (a
// fine executor's result rides in a FINISHED update's data: the
// reconciliation answer does not carry it).
func latestCopy(t *task) mesos.TaskStatus {
	l := t.latest
	msg := "Reconciliation: Latest task state"
	aid := t.t.AgentID
	st := mesos.TaskStatus{TaskID: t.t.TaskID, State: l.State, AgentID: &aid, ExecutorID: l.ExecutorID,
		Healthy: l.Healthy, ContainerStatus: l.ContainerStatus, Message: &msg}
	if st.ExecutorID == nil {
		st.ExecutorID = t.t.ExecutorID
	}
	if st.State == nil {
		st.State = t.t.State
	}
	return st
}

// reconcileOperations: no operations with feedback exist here, so every
// explicitly named operation is OPERATION_UNKNOWN and the implicit form
// has nothing to report.
func (m *Master) reconcileOperations(f *framework, r *scheduler.Call_ReconcileOperations) {
	for _, op := range r.Operations {
		id := op.OperationID
		f.send(&scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS, UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{
			Status: mesos.OperationStatus{OperationID: &id, State: mesos.OPERATION_UNKNOWN, AgentID: op.AgentID, ResourceProviderID: op.ResourceProviderID},
		}})
	}
}
