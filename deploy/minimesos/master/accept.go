package master

import (
	"fmt"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesosres "github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// launchCtx is the state of one ACCEPT being applied.
type launchCtx struct {
	f         *framework
	ag        *agent
	role      string
	available mesos.Resources
	taskIDs   map[string]bool
	executors map[string]*mesos.ExecutorInfo // launched in this ACCEPT
}

// accept answers ACCEPT. Callers hold m.mu.
func (m *Master) accept(f *framework, a *scheduler.Call_Accept, now time.Time) {
	offs, err := m.validateOffers(f, a.OfferIDs)
	if err != "" {
		for _, o := range offs {
			m.removeOffer(o, false, nil)
		}
		m.failLaunches(f, a.Operations, err)
		return
	}
	lc := &launchCtx{f: f, ag: m.agents[offs[0].agent], role: offs[0].role,
		taskIDs: map[string]bool{}, executors: map[string]*mesos.ExecutorInfo{}}
	for _, o := range offs {
		lc.available = lc.available.Plus(o.res...)
		delete(m.offers, o.id)
		delete(f.offers, o.id)
		m.cancel(o.expire)
		m.alloc.OfferAnswered(f.id)
		if o.role != lc.role {
			lc.role = ""
		}
	}
	for i := range a.Operations {
		op := &a.Operations[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch == nil {
				continue
			}
			for j := range op.Launch.TaskInfos {
				m.launchTask(lc, &op.Launch.TaskInfos[j], now)
			}
		case mesos.Offer_Operation_LAUNCH_GROUP:
			if op.LaunchGroup != nil {
				m.launchGroup(lc, op.LaunchGroup, now)
			}
		default:
			// Reservations, volumes and disks are out of scope: Mesos drops
			// an operation it cannot apply and the resources stay unused.
			m.log.WithFields(logrus.Fields{"framework": f.id, "operation": op.GetType().String()}).
				Warn("dropping unsupported offer operation")
			m.inc("master/dropped_operations", 1)
		}
	}
	if len(lc.available) > 0 {
		m.alloc.Recover(lc.ag.id, f.id, lc.available, refuseDuration(a.Filters), now)
	}
}

// validateOffers applies Mesos' offer validation; on failure it returns
// the framework's valid offers (to be recovered) and the error.
func (m *Master) validateOffers(f *framework, ids []mesos.OfferID) ([]*offer, string) {
	var offs []*offer
	var errs []string
	seen := map[string]bool{}
	if len(ids) == 0 {
		errs = append(errs, "No offers specified")
	}
	agentID := ""
	for _, id := range ids {
		if seen[id.Value] {
			errs = append(errs, "Duplicate offer "+id.Value+" in offer list")
			continue
		}
		seen[id.Value] = true
		o := m.offers[id.Value]
		switch {
		case o == nil:
			errs = append(errs, "Offer "+id.Value+" is no longer valid")
		case o.fw != f.id:
			errs = append(errs, "Offer "+id.Value+" has invalid framework "+o.fw+" while framework "+f.id+" is expected")
		default:
			offs = append(offs, o)
			if agentID == "" {
				agentID = o.agent
			} else if o.agent != agentID {
				errs = append(errs, "Aggregated offers must belong to one single agent")
			}
		}
	}
	if len(errs) == 0 {
		if ag := m.agents[agentID]; ag == nil || !ag.active {
			errs = append(errs, "Agent "+agentID+" is not active")
		}
	}
	return offs, strings.Join(errs, "; ")
}

// failLaunches answers every task of an ACCEPT with invalid offers:
// TASK_LOST (TASK_DROPPED if partition-aware), REASON_INVALID_OFFERS.
func (m *Master) failLaunches(f *framework, ops []mesos.Offer_Operation, msg string) {
	state := mesos.TASK_LOST
	if f.caps.partitionAware {
		state = mesos.TASK_DROPPED
	}
	for i := range ops {
		var tasks []mesos.TaskInfo
		switch {
		case ops[i].Launch != nil:
			tasks = ops[i].Launch.TaskInfos
		case ops[i].LaunchGroup != nil:
			tasks = ops[i].LaunchGroup.TaskGroup.Tasks
		}
		for j := range tasks {
			st := m.infoStatus(&tasks[j], state, mesos.REASON_INVALID_OFFERS, msg)
			m.countTerminal(&st)
			m.sendUpdate(f, st)
		}
	}
	m.inc("master/invalid_offers", 1)
}

// infoStatus is a master-generated status for a task never launched.
func (m *Master) infoStatus(ti *mesos.TaskInfo, st mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	s := mesos.TaskStatus{
		TaskID: ti.TaskID, State: st.Enum(), Source: mesos.SOURCE_MASTER.Enum(), Reason: reason.Enum(),
		Message: &msg, Timestamp: m.timestamp(),
	}
	if ti.AgentID.Value != "" {
		aid := ti.AgentID
		s.AgentID = &aid
	}
	return s
}

func (m *Master) timestamp() *float64 {
	ts := float64(m.cfg.Clock.Now().UnixNano()) / 1e9
	return &ts
}

// normalize gives resources without allocation_info the ACCEPT's role.
func (lc *launchCtx) normalize(rs mesos.Resources) (mesos.Resources, error) {
	out := cloneResources(rs)
	for i := range out {
		if err := out[i].Validate(); err != nil {
			return nil, fmt.Errorf("Invalid resources: %v", err)
		}
		if out[i].AllocationInfo == nil {
			if lc.role == "" {
				return nil, fmt.Errorf("Resource %v lacks allocation_info", out[i])
			}
			r := lc.role
			out[i].AllocationInfo = &mesos.Resource_AllocationInfo{Role: &r}
		}
	}
	return out, nil
}

// validateTaskID is Mesos' common id validation.
func validateTaskID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("ID must not be empty")
	case id == "." || id == "..":
		return fmt.Errorf("'.' and '..' are not allowed")
	case strings.ContainsAny(id, "/\\\x00"):
		return fmt.Errorf("'/', '\\' and NUL are not allowed")
	}
	for _, c := range id {
		if c < 0x20 || c == 0x7f || c == ' ' {
			return fmt.Errorf("ID cannot contain whitespace or control characters")
		}
	}
	return nil
}

// checkTask validates one task (not its resources) for the ACCEPT.
func (m *Master) checkTask(lc *launchCtx, ti *mesos.TaskInfo) error {
	if err := validateTaskID(ti.TaskID.Value); err != nil {
		return fmt.Errorf("Task ID '%s' is invalid: %v", ti.TaskID.Value, err)
	}
	id := ti.TaskID.Value
	if lc.taskIDs[id] || lc.f.tasks[id] != nil || lc.f.unreachableTasks[id] != nil {
		return fmt.Errorf("Task has duplicate ID: %s", id)
	}
	if ti.AgentID.Value != lc.ag.id {
		return fmt.Errorf("Task uses invalid agent: %s", ti.AgentID.Value)
	}
	if err := validateContainerInfo(ti.Container); err != nil {
		return fmt.Errorf("Task's `ContainerInfo` is invalid: %v", err)
	}
	return nil
}

// checkExecutor validates an executor and returns whether it is new and
// the ExecutorInfo with framework_id and allocation_info filled in.
func (m *Master) checkExecutor(lc *launchCtx, ei *mesos.ExecutorInfo) (*mesos.ExecutorInfo, bool, error) {
	if err := validateTaskID(ei.ExecutorID.Value); err != nil {
		return nil, false, fmt.Errorf("Executor ID '%s' is invalid: %v", ei.ExecutorID.Value, err)
	}
	if ei.FrameworkID != nil && ei.FrameworkID.Value != lc.f.id {
		return nil, false, fmt.Errorf("ExecutorInfo has an invalid FrameworkID (Actual: %s vs Expected: %s)", ei.FrameworkID.Value, lc.f.id)
	}
	if ei.Type == mesos.ExecutorInfo_CUSTOM && ei.Command == nil {
		return nil, false, fmt.Errorf("Executor '%s' of type CUSTOM must have a command", ei.ExecutorID.Value)
	}
	if err := validateContainerInfo(ei.Container); err != nil {
		return nil, false, fmt.Errorf("Executor's `ContainerInfo` is invalid: %v", err)
	}
	res, err := lc.normalize(ei.Resources)
	if err != nil {
		return nil, false, err
	}
	e := *ei
	e.FrameworkID = &mesos.FrameworkID{Value: lc.f.id}
	e.Resources = res
	old := lc.executors[e.ExecutorID.Value]
	if old == nil {
		old = lc.f.executors[lc.ag.id][e.ExecutorID.Value]
	}
	if old != nil {
		if !sameExecutor(old, &e) {
			return nil, false, fmt.Errorf("ExecutorInfo is not compatible with ExecutorInfo of existing executor %s", e.ExecutorID.Value)
		}
		return old, false, nil
	}
	return &e, true, nil
}

func sameExecutor(a, b *mesos.ExecutorInfo) bool {
	x, y := *a, *b
	x.Resources, y.Resources = nil, nil
	ra, rb := cloneResources(a.Resources).Unallocate(), cloneResources(b.Resources).Unallocate()
	return x.Equal(&y) && mesosres.ContainsAll(ra, rb) && mesosres.ContainsAll(rb, ra)
}

// consume takes need out of the available resources, or explains why not.
func (lc *launchCtx) consume(need mesos.Resources) error {
	if !mesosres.ContainsAll(lc.available, need) {
		return fmt.Errorf("Task uses more resources %v than available %v", need, lc.available)
	}
	lc.available = lc.available.Minus(need...)
	return nil
}

// launchTask validates and launches one task of a LAUNCH.
func (m *Master) launchTask(lc *launchCtx, ti *mesos.TaskInfo, now time.Time) {
	fail := func(err error) {
		st := m.infoStatus(ti, mesos.TASK_ERROR, mesos.REASON_TASK_INVALID, err.Error())
		m.countTerminal(&st)
		m.sendUpdate(lc.f, st)
		m.inc("master/invalid_tasks", 1)
	}
	if err := m.checkTask(lc, ti); err != nil {
		fail(err)
		return
	}
	if user, ok := m.authorizedRunAs(lc.f, ti); !ok {
		// As Mesos' master: the authorizer refused the task's user.
		st := m.infoStatus(ti, mesos.TASK_ERROR, mesos.REASON_TASK_UNAUTHORIZED, fmt.Sprintf("Not authorized to launch as user '%s'", user))
		m.countTerminal(&st)
		m.sendUpdate(lc.f, st)
		m.inc("master/invalid_tasks", 1)
		return
	}
	if (ti.Command == nil) == (ti.Executor == nil) {
		fail(fmt.Errorf("Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"))
		return
	}
	need, err := lc.normalize(ti.Resources)
	if err != nil {
		fail(err)
		return
	}
	var exec *mesos.ExecutorInfo
	newExec := false
	if ti.Executor != nil && ti.Executor.Type == mesos.ExecutorInfo_DEFAULT {
		// As Mesos: the default executor runs task groups only.
		fail(fmt.Errorf("'ExecutorInfo.type' must be 'CUSTOM'"))
		return
	}
	if ti.Executor != nil {
		if exec, newExec, err = m.checkExecutor(lc, ti.Executor); err != nil {
			fail(err)
			return
		}
	}
	total := need
	if newExec {
		total = need.Plus(exec.Resources...)
	}
	if err := lc.consume(total); err != nil {
		fail(err)
		return
	}
	info := *ti
	info.Resources = need
	info.Executor = exec
	if newExec {
		lc.executors[exec.ExecutorID.Value] = exec
		m.addExecutor(lc.f, lc.ag.id, exec)
	}
	lc.taskIDs[ti.TaskID.Value] = true
	m.addTask(lc.f, lc.ag, &info, exec)
	m.deliver(lc.ag, link.MasterMessage{RunTask: &link.RunTask{Framework: lc.f.info, Task: &info, AllocationRole: lc.role}})
}

// launchGroup validates and launches a LAUNCH_GROUP atomically.
func (m *Master) launchGroup(lc *launchCtx, g *mesos.Offer_Operation_LaunchGroup, now time.Time) {
	tasks := g.TaskGroup.Tasks
	fail := func(err error) {
		for i := range tasks {
			st := m.infoStatus(&tasks[i], mesos.TASK_ERROR, mesos.REASON_TASK_GROUP_INVALID, err.Error())
			m.countTerminal(&st)
			m.sendUpdate(lc.f, st)
		}
		m.inc("master/invalid_tasks", float64(len(tasks)))
	}
	if len(tasks) == 0 {
		fail(fmt.Errorf("Task group must not be empty"))
		return
	}
	if g.Executor.Type != mesos.ExecutorInfo_DEFAULT {
		fail(fmt.Errorf("'ExecutorInfo.type' must be 'DEFAULT'"))
		return
	}
	if g.Executor.Command != nil {
		// Mesos' executor::internal::validateType: the agent provides the
		// default executor's program.
		fail(fmt.Errorf("'ExecutorInfo.command' must not be set for 'DEFAULT' executor"))
		return
	}
	exec, newExec, err := m.checkExecutor(lc, &g.Executor)
	if err != nil {
		fail(err)
		return
	}
	total := mesos.Resources{}
	if newExec {
		total = total.Plus(exec.Resources...)
	}
	infos := make([]mesos.TaskInfo, len(tasks))
	ids := map[string]bool{}
	for i := range tasks {
		ti := &tasks[i]
		if err := m.checkTask(lc, ti); err != nil {
			fail(err)
			return
		}
		if ids[ti.TaskID.Value] {
			fail(fmt.Errorf("Task has duplicate ID: %s", ti.TaskID.Value))
			return
		}
		ids[ti.TaskID.Value] = true
		if ti.Executor != nil {
			fail(fmt.Errorf("'TaskInfo.executor' must not be set"))
			return
		}
		need, err := lc.normalize(ti.Resources)
		if err != nil {
			fail(err)
			return
		}
		total = total.Plus(need...)
		infos[i] = *ti
		infos[i].Resources = need
	}
	if err := lc.consume(total); err != nil {
		fail(err)
		return
	}
	if newExec {
		lc.executors[exec.ExecutorID.Value] = exec
		m.addExecutor(lc.f, lc.ag.id, exec)
	}
	for i := range infos {
		lc.taskIDs[infos[i].TaskID.Value] = true
		m.addTask(lc.f, lc.ag, &infos[i], exec)
	}
	m.deliver(lc.ag, link.MasterMessage{RunTask: &link.RunTask{
		Framework: lc.f.info, Executor: exec, Group: &mesos.TaskGroupInfo{Tasks: infos}, AllocationRole: lc.role,
	}})
}

func (m *Master) addExecutor(f *framework, agentID string, e *mesos.ExecutorInfo) {
	if f.executors[agentID] == nil {
		f.executors[agentID] = map[string]*mesos.ExecutorInfo{}
	}
	f.executors[agentID][e.ExecutorID.Value] = e
}

// addTask records a launched task in TASK_STAGING.
func (m *Master) addTask(f *framework, ag *agent, ti *mesos.TaskInfo, exec *mesos.ExecutorInfo) *task {
	t := &task{t: mesos.Task{
		Name: ti.Name, TaskID: ti.TaskID, FrameworkID: mesos.FrameworkID{Value: f.id},
		AgentID: mesos.AgentID{Value: ag.id}, State: mesos.TASK_STAGING.Enum(),
		Resources: ti.Resources, Labels: ti.Labels, Discovery: ti.Discovery, Container: ti.Container,
		HealthCheck: ti.HealthCheck, KillPolicy: ti.KillPolicy, Statuses: []mesos.TaskStatus{},
	}, pending: map[string]mesos.TaskState{}}
	if u := f.info.User; u != "" {
		t.t.User = &u
	}
	if exec != nil {
		eid := exec.ExecutorID
		t.t.ExecutorID = &eid
	}
	aid := t.t.AgentID
	t.latest = mesos.TaskStatus{TaskID: ti.TaskID, State: mesos.TASK_STAGING.Enum(), AgentID: &aid, Timestamp: m.timestamp()}
	f.tasks[ti.TaskID.Value] = t
	m.inc("master/tasks_launched", 1)
	return t
}

// authorizedRunAs checks the users a task and its executor run as against
// the ACLs (run_tasks) for the framework's principal; it returns the first
// refused user.
func (m *Master) authorizedRunAs(f *framework, ti *mesos.TaskInfo) (string, bool) {
	acls := m.cfg.ACLs
	if acls == nil {
		return "", true
	}
	var users []string
	if ti.Command != nil {
		users = append(users, runAsUser(ti.Command, &f.info))
	}
	if ti.Executor != nil {
		users = append(users, runAsUser(ti.Executor.Command, &f.info))
	}
	for _, u := range users {
		if !acls.AllowsRunAs(f.info.GetPrincipal(), u) {
			return u, false
		}
	}
	return "", true
}
