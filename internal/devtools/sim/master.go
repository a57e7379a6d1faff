package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/mesosbackend"
)

const (
	frameworkID = "sim-fw"
	eps         = 1e-9
)

// masterRefuse is the master's default filter (a negative refuse: the
// allocator's 5 s), which an ACCEPT's unused part and an unfit DECLINE get.
var masterRefuse = -time.Second

// master is the simulated Mesos master, its agents and their executors.
type master struct {
	s     *Sim
	alloc *allocator.Allocator
	cfg   *config.Config
	h     mesosconn.Handler
	inc   *incarnation // the driver process that dialed last (restart.go)
	gw    *streams     // its coarse backend's executor gateway (nil with fine)
	// launchedBy is the driver incarnation that launched each Mesos task id
	// (kept only with restarts on: launchedOnce).
	launchedBy map[string]int
	info       mesos.MasterInfo

	agents    map[string]*agent
	offers    map[string]*offer    // outstanding
	tasks     map[string]*mtask    // live, by Mesos task id
	execIdx   map[string]*executor // live executors, by Mesos executor id
	agentLast map[string]time.Time // when the last event from each agent reaches the framework
	leader    int                  // master failovers so far (the leader id's suffix)
	down      bool                 // the framework is disconnected: a failover or a partition is under way
	cut       bool                 // a partition: the driver's calls are lost on the way
	// demand is the connection's demand as the backend last set it
	// (mesosconn's record, which outlives a lost SUPPRESS or REVIVE):
	// after a re-subscription the connection suppresses again only if
	// it is off.
	demand bool
	// unended is the tasks the framework launched (its connection's
	// record) with no terminal update delivered yet: what mesosconn's
	// explicit reconciliation asks about after a re-subscription.
	unended map[string]bool
	// forwarded is the terminal updates on their way to the framework
	// (Mesos' status_update_state until acknowledged): what the master
	// answers a reconciliation with while they are held.
	forwarded map[string]mesos.TaskStatus
	nextOffer int
	nextAgent int
	inflight  int // status updates and other events scheduled for delivery
	lost      int
	stopped   bool
	idle      time.Duration
	lastCall  time.Time // calls reach the master in the order made, each after the network's delay
}

// call hands a call the backend made to the master after the network's
// seeded delay, keeping the calls' order.
func (m *master) call(fn func()) {
	at := m.s.clk.Now().Add(m.jitter())
	if at.Before(m.lastCall) {
		at = m.lastCall
	}
	m.lastCall = at
	m.inflight++
	m.s.at(at.Sub(m.s.clk.Now()), func() {
		m.inflight--
		if m.cut {
			m.s.logf("a call of the driver is lost in the partition")
			return
		}
		fn()
	})
}

type agent struct {
	id, host     string
	cpus, mem    float64
	usedC, usedM float64
	execs        map[string]*executor
	gone         bool
	slow         float64 // run time factor of its tasks
}

type executor struct {
	id        string
	agent     *agent
	cpus, mem float64 // a fine executor's own (a coarse one's are its Mesos task's)
	tasks     int
	idleToken int
	outputs   map[outputKey]bool // map outputs it serves
	cores     int                // a coarse executor's cores
	coarse    map[uint64]*ctask  // a coarse executor's running tasks, by the driver's task id
	// statuses is its cache of the driver's map statuses, which its
	// reduce tasks cut their blocks from (as a real executor's
	// stagetask.Env; loaded from the driver in process)
	statuses *stagetask.MapStatuses
	inc      int      // the driver incarnation that launched it
	gw       *streams // a coarse executor's gateway: its driver's
}

type offer struct {
	id, agent string
	cpus, mem float64
	execs     []string // the executors it listed as running (what the framework was told)
}

type mtask struct {
	id, agent, exec string
	cpus, mem       float64
	flintID         uint64
	stage           *stagetask.Task
	coarse          bool // a coarse executor (a command task; exec is its own id)
	inc             int  // the driver incarnation that launched it
}

func newMaster(s *Sim, alloc *allocator.Allocator, cfg *config.Config) *master {
	// No address: the backends read no dead executor's sandbox over HTTP
	// (their reports are Mesos' status alone, written in their owner's
	// round) — nothing leaves the process.
	return &master{s: s, alloc: alloc, cfg: cfg, info: mesos.MasterInfo{ID: "sim-m1"}, demand: true,
		launchedBy: map[string]int{},
		unended:    map[string]bool{}, forwarded: map[string]mesos.TaskStatus{}, agents: map[string]*agent{}, offers: map[string]*offer{}, tasks: map[string]*mtask{}, execIdx: map[string]*executor{}, agentLast: map[string]time.Time{},
		idle: cfg.Duration("flint.mesos.fine.executorIdleTimeout")}
}

// start subscribes the framework, registers the agents and arms the
// allocation rounds and the faults.
func (m *master) start() {
	m.h.Subscribed(frameworkID, m.info, false)
	for range m.s.cfg.Agents {
		m.addAgent()
	}
	m.s.at(0, m.allocate)
	f := m.s.cfg.Faults
	for _, fault := range []struct {
		n  int
		fn func()
		at time.Duration // fixed, instead of while work runs
	}{{f.AgentLosses, m.loseAgent, 0}, {f.Crashes, m.crashExecutor, 0}, {f.Failovers, m.failover, m.s.cfg.FailoverAt}, {f.Partitions, m.partition, 0}, {f.Restarts, m.s.killDriver, 0}} {
		for range fault.n {
			at := fault.at
			if at == 0 {
				at = m.whileWorkRuns()
			}
			m.s.at(at, fault.fn)
		}
	}
}

func (m *master) addAgent() {
	id := "S" + strconv.Itoa(m.nextAgent)
	m.nextAgent++
	a := &agent{id: id, host: "h-" + id, cpus: m.s.cfg.AgentCPUs, mem: m.s.cfg.AgentMem, execs: map[string]*executor{}, slow: 1}
	if cs := m.s.cfg.CPUChoices; len(cs) > 0 {
		a.cpus = cs[m.s.rng.IntN(len(cs))]
	}
	if m.s.cfg.SlowAgents > 0 && m.s.rng.Float64() < m.s.cfg.SlowAgents {
		a.slow = m.s.cfg.SlowFactor
	}
	m.agents[id] = a
	m.alloc.AddAgent(id, a.host, scalars(a.cpus, a.mem), nil)
	m.s.logf("agent %s up (%g cpus, %g MiB, slow ×%g)", id, a.cpus, a.mem, a.slow)
}

func scalars(cpus, mem float64) mesos.Resources {
	var rs mesos.Resources
	if cpus > eps {
		rs = append(rs, mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: cpus}})
	}
	if mem > eps {
		rs = append(rs, mesos.Resource{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: mem}})
	}
	return rs
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// allocate is one allocation round; it re-arms itself.
func (m *master) allocate() {
	if m.stopped {
		return
	}
	defer m.s.at(m.s.cfg.AllocEvery, m.allocate)
	if m.down {
		return // no leader: no offers
	}
	got := m.alloc.Allocate(m.s.clk.Now())
	if len(got) == 0 {
		return
	}
	out := make([]mesos.Offer, 0, len(got))
	for _, g := range got {
		a := m.agents[g.AgentID]
		m.nextOffer++
		o := &offer{id: "o" + strconv.Itoa(m.nextOffer), agent: g.AgentID,
			cpus: mesosconn.Scalar(g.Resources, "cpus"), mem: mesosconn.Scalar(g.Resources, "mem")}
		m.offers[o.id] = o
		res := g.Resources
		if m.s.cfg.offerSkew != 0 { // a deliberately broken master (tests of the invariant)
			res = scalars(o.cpus+m.s.cfg.offerSkew, o.mem)
		}
		mo := mesos.Offer{ID: mesos.OfferID{Value: o.id}, FrameworkID: mesos.FrameworkID{Value: frameworkID},
			AgentID: mesos.AgentID{Value: g.AgentID}, Hostname: a.host, Resources: res}
		for _, e := range sortedKeys(a.execs) {
			if m.s.cfg.Coarse || m.s.cfg.hideExecutors {
				break // command tasks: Mesos lists no executor of the framework
			}
			mo.ExecutorIDs = append(mo.ExecutorIDs, mesos.ExecutorID{Value: e})
			o.execs = append(o.execs, e)
		}
		out = append(out, mo)
		m.s.logf("offer %s on %s: %.1f cpus %.0f MiB", o.id, o.agent, o.cpus, o.mem)
	}
	m.h.Offers(out)
	if p := m.s.cfg.Faults.Rescind; p > 0 && m.s.rng.Float64() < p {
		m.s.at(m.jitter(), m.rescindOne)
	}
}

// rescindOne rescinds a random outstanding offer, as a master does for
// maintenance or an inverse offer.
func (m *master) rescindOne() {
	ids := sortedKeys(m.offers)
	if len(ids) == 0 || m.down {
		return
	}
	o := m.offers[ids[m.s.rng.IntN(len(ids))]]
	delete(m.offers, o.id)
	m.alloc.OfferAnswered(frameworkID)
	m.alloc.Recover(o.agent, frameworkID, scalars(o.cpus, o.mem), nil, m.s.clk.Now())
	m.s.logf("FAULT offer %s on %s rescinded", o.id, o.agent)
	m.h.Rescinded(mesos.OfferID{Value: o.id})
}

// deliver sends a status update after the network's seeded delay,
// sometimes twice, sometimes followed by a stale RUNNING.
func (m *master) deliver(st mesos.TaskStatus) {
	f := m.s.cfg.Faults
	answer := st.GetReason() == mesos.REASON_RECONCILIATION
	if terminal(st.GetState()) && !answer {
		m.forwarded[st.TaskID.Value] = st
	}
	send := func(d time.Duration, st mesos.TaskStatus, what string) {
		m.send(d, func() {
			m.s.logf("update %s %s (%s)%s", st.TaskID.Value, st.GetState(), st.GetSource(), what)
			if terminal(st.GetState()) {
				delete(m.unended, st.TaskID.Value)
				if !answer {
					delete(m.forwarded, st.TaskID.Value)
				}
			}
			m.h.Update(st)
		})
	}
	d := m.fromAgent(st.GetAgentID().GetValue())
	send(d, st, "")
	if f.Duplicate > 0 && m.s.rng.Float64() < f.Duplicate {
		send(d+m.jitter(), st, " duplicate")
	}
	if f.Reorder > 0 && terminal(st.GetState()) && m.s.rng.Float64() < f.Reorder {
		stale := st
		stale.State = mesos.TASK_RUNNING.Enum()
		stale.Data = nil
		send(d+m.jitter(), stale, " stale, after its end")
	}
}

func (m *master) jitter() time.Duration {
	if j := m.s.cfg.Faults.Jitter; j > 0 {
		return time.Duration(m.s.rng.Int64N(int64(j)))
	}
	return 0
}

func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_KILLING:
		return false
	}
	return true
}

func status(t *mtask, st mesos.TaskState, src mesos.TaskStatus_Source, reason *mesos.TaskStatus_Reason, data []byte) mesos.TaskStatus {
	agent, exec := mesos.AgentID{Value: t.agent}, mesos.ExecutorID{Value: t.exec}
	return mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: st.Enum(), Source: src.Enum(), Reason: reason,
		AgentID: &agent, ExecutorID: &exec, Data: data}
}

// launch is an ACCEPT with LAUNCH: the over-commit invariant is checked
// here, against the offers as the master made them.
func (m *master) launch(offerIDs []mesos.OfferID, tasks []mesos.TaskInfo) {
	ids := make([]string, len(offerIDs))
	for i, o := range offerIDs {
		ids[i] = o.Value
	}
	m.s.logf("accept %v: %d task(s)", ids, len(tasks))
	var agentID string
	var offC, offM float64
	valid := true
	listed := map[string]bool{} // executors the offers said run
	for _, id := range ids {
		o := m.offers[id]
		if o == nil {
			valid = false
			continue
		}
		for _, e := range o.execs {
			listed[e] = true
		}
		if agentID != "" && o.agent != agentID {
			m.s.fail("ACCEPT of offers %v spans agents %s and %s", ids, agentID, o.agent)
			return
		}
		agentID = o.agent
		offC += o.cpus
		offM += o.mem
	}
	for _, id := range ids {
		if o := m.offers[id]; o != nil {
			delete(m.offers, id)
			m.alloc.OfferAnswered(frameworkID)
			if !valid { // the whole ACCEPT is refused; its valid offers go back
				m.alloc.Recover(o.agent, frameworkID, scalars(o.cpus, o.mem), nil, m.s.clk.Now())
			}
		}
	}
	if !valid {
		reason := mesos.REASON_INVALID_OFFERS
		for i := range tasks {
			t := &mtask{id: tasks[i].TaskID.Value, agent: tasks[i].AgentID.Value}
			if tasks[i].Executor != nil {
				t.exec = tasks[i].Executor.ExecutorID.Value
			}
			m.deliver(status(t, mesos.TASK_DROPPED, mesos.SOURCE_MASTER, &reason, nil))
		}
		return
	}
	a := m.agents[agentID]
	var needC, needM float64
	var goneC, goneM float64 // executors the offers listed that exited since
	newExecs := map[string]*executor{}
	for i := range tasks {
		ti := &tasks[i]
		if ti.AgentID.Value != agentID {
			m.s.fail("task %s names agent %s on an offer of agent %s", ti.TaskID.Value, ti.AgentID.Value, agentID)
			return
		}
		needC += mesosconn.Scalar(ti.Resources, "cpus")
		needM += mesosconn.Scalar(ti.Resources, "mem")
		if m.s.cfg.Coarse {
			if ti.Executor != nil || ti.Command == nil {
				m.s.fail("coarse executor task %s is not a command task", ti.TaskID.Value)
				return
			}
			continue
		}
		if ti.Executor == nil {
			m.s.fail("task %s names no executor", ti.TaskID.Value)
			return
		}
		eid := ti.Executor.ExecutorID.Value
		if a.execs[eid] == nil && newExecs[eid] == nil {
			e := &executor{id: eid, agent: a, cpus: mesosconn.Scalar(ti.Executor.Resources, "cpus"), mem: mesosconn.Scalar(ti.Executor.Resources, "mem"),
				outputs: map[outputKey]bool{}, inc: m.inc.n}
			newExecs[eid] = e
			needC += e.cpus
			needM += e.mem
			if listed[eid] {
				goneC += e.cpus
				goneM += e.mem
			}
		}
	}
	if m.s.cfg.Coarse {
		m.launchCoarse(ids, agentID, offC, offM, needC, needM, tasks)
		return
	}
	// Over-committed as the offers told the framework: its bug.
	if over := func(c, mem float64) bool { return c > offC+eps || mem > offM+eps }; over(needC-goneC, needM-goneM) {
		m.s.fail("offer over-committed: ACCEPT of %v on %s needs %.2f cpus %.0f MiB, the offers hold %.2f cpus %.0f MiB",
			ids, agentID, needC, needM, offC, offM)
		return
	} else if over(needC, needM) {
		// An executor the offers listed exited meanwhile: the task must
		// bring its resources too, which the offers lack — Mesos refuses
		// the tasks (TASK_ERROR, REASON_TASK_INVALID) and the offers go back.
		m.alloc.Recover(agentID, frameworkID, scalars(offC, offM), nil, m.s.clk.Now())
		reason := mesos.REASON_TASK_INVALID
		msg := fmt.Sprintf("Task uses more resources cpus:%g;mem:%g than available cpus:%g;mem:%g", needC, needM, offC, offM)
		m.s.logf("refuse %v: an executor the offers listed is gone", ids)
		for i := range tasks {
			t := &mtask{id: tasks[i].TaskID.Value, agent: agentID, exec: tasks[i].Executor.ExecutorID.Value}
			st := status(t, mesos.TASK_ERROR, mesos.SOURCE_MASTER, &reason, nil)
			st.Message = &msg
			m.deliver(st)
		}
		return
	}
	m.alloc.Recover(agentID, frameworkID, scalars(offC-needC, offM-needM), &masterRefuse, m.s.clk.Now())
	a.usedC += needC
	a.usedM += needM
	for _, id := range sortedKeys(newExecs) {
		a.execs[id] = newExecs[id]
		m.execIdx[id] = newExecs[id]
		m.s.logf("executor %s starts on %s", id, agentID)
	}
	for i := range tasks {
		ti := &tasks[i]
		td, st, err := decodeTask(ti.Data)
		if err != nil {
			m.s.fail("task %s: undecodable: %v", ti.TaskID.Value, err)
			return
		}
		t := &mtask{id: ti.TaskID.Value, agent: agentID, exec: ti.Executor.ExecutorID.Value,
			cpus: mesosconn.Scalar(ti.Resources, "cpus"), mem: mesosconn.Scalar(ti.Resources, "mem"),
			flintID: td.TaskId, stage: st, inc: m.inc.n}
		if !m.launchedOnce(t.id) {
			return
		}
		if m.tasks[t.id] != nil {
			m.s.fail("task id %s launched while a task of that id is live", t.id)
			return
		}
		m.tasks[t.id] = t
		a.execs[t.exec].tasks++
		m.deliver(status(t, mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil, nil))
		m.s.at(m.runTime(a), func() { m.finish(t) })
	}
}

// runTime is a task's seeded run time on agent a.
func (m *master) runTime(a *agent) time.Duration {
	return time.Duration(a.slow * float64(m.s.cfg.MeanTask/2+time.Duration(m.s.rng.ExpFloat64()*float64(m.s.cfg.MeanTask/2))))
}

// launchCoarse is an ACCEPT of coarse executors (command tasks) on agent
// agentID, its offers already answered: over-committed, it is the
// backend's bug; otherwise each executor starts.
func (m *master) launchCoarse(ids []string, agentID string, offC, offM, needC, needM float64, tasks []mesos.TaskInfo) {
	if needC > offC+eps || needM > offM+eps {
		m.s.fail("offer over-committed: ACCEPT of %v on %s needs %.2f cpus %.0f MiB, the offers hold %.2f cpus %.0f MiB",
			ids, agentID, needC, needM, offC, offM)
		return
	}
	a := m.agents[agentID]
	m.alloc.Recover(agentID, frameworkID, scalars(offC-needC, offM-needM), &masterRefuse, m.s.clk.Now())
	a.usedC += needC
	a.usedM += needM
	for i := range tasks {
		ti := &tasks[i]
		t := &mtask{id: ti.TaskID.Value, agent: agentID, exec: ti.TaskID.Value, coarse: true,
			cpus: mesosconn.Scalar(ti.Resources, "cpus"), mem: mesosconn.Scalar(ti.Resources, "mem"), inc: m.inc.n}
		if !m.launchedOnce(t.id) {
			return
		}
		if m.tasks[t.id] != nil || m.execIdx[t.id] != nil {
			m.s.fail("executor task id %s launched while one of that id is live", t.id)
			return
		}
		m.tasks[t.id] = t
		m.startCoarse(a, t)
	}
}

// end ends a live task: its resources go back to the agent and allocator.
func (m *master) end(t *mtask) bool {
	if m.tasks[t.id] != t {
		return false
	}
	delete(m.tasks, t.id)
	a := m.agents[t.agent]
	if a == nil || a.gone {
		return true
	}
	a.usedC -= t.cpus
	a.usedM -= t.mem
	m.alloc.Recover(a.id, frameworkID, scalars(t.cpus, t.mem), nil, m.s.clk.Now())
	if t.coarse {
		return true
	}
	if e := a.execs[t.exec]; e != nil {
		e.tasks--
		if e.tasks == 0 && m.idle > 0 {
			e.idleToken++
			tok := e.idleToken
			m.s.at(m.idle, func() { m.idleExit(a, e, tok) })
		}
	}
	return true
}

// finish ends a task that ran its time: FINISHED with its partition's
// result, or FAILED with the block it could not fetch.
func (m *master) finish(t *mtask) {
	if !m.end(t) {
		return
	}
	data, state, err := encodeOutput(t.flintID, m.execute(t.stage, m.agents[t.agent].execs[t.exec], t.flintID, "task "+t.id))
	if err != nil {
		m.s.fail("encode result: %v", err)
		return
	}
	m.deliver(status(t, state, mesos.SOURCE_EXECUTOR, nil, data))
}

func (m *master) idleExit(a *agent, e *executor, tok int) {
	if a.gone || a.execs[e.id] != e || e.tasks > 0 || e.idleToken != tok || len(e.outputs) > 0 {
		return // a fine executor serving map outputs stays until they are released
	}
	delete(a.execs, e.id)
	delete(m.execIdx, e.id)
	a.usedC -= e.cpus
	a.usedM -= e.mem
	m.alloc.Recover(a.id, frameworkID, scalars(e.cpus, e.mem), nil, m.s.clk.Now())
	m.s.logf("executor %s on %s exits idle", e.id, a.id)
	m.send(m.fromAgent(a.id), func() { m.h.ExecutorLost(mesos.AgentID{Value: a.id}, mesos.ExecutorID{Value: e.id}, 0) })
}

// kill is a KILL: a live task ends KILLED; an unknown one LOST, as Mesos
// answers.
func (m *master) kill(taskID string, agentID string) {
	t := m.tasks[taskID]
	if t == nil {
		m.s.logf("kill %s: unknown task", taskID)
		reason := mesos.REASON_RECONCILIATION
		m.deliver(status(&mtask{id: taskID, agent: agentID}, mesos.TASK_LOST, mesos.SOURCE_MASTER, &reason, nil))
		return
	}
	m.s.logf("kill %s", taskID)
	m.inflight++ // the kill's effect is on its way: the run is not quiet
	if t.coarse {
		m.s.at(time.Millisecond, func() {
			m.inflight--
			if e := m.execIdx[t.id]; e != nil {
				m.exitCoarse(e, mesos.TASK_KILLED, nil, "killed through Mesos")
			}
		})
		return
	}
	m.s.at(time.Millisecond, func() {
		m.inflight--
		if m.end(t) {
			m.deliver(status(t, mesos.TASK_KILLED, mesos.SOURCE_EXECUTOR, nil, nil))
		}
	})
}

// loseAgent removes a random live agent: its offers are rescinded, its
// tasks LOST, the framework told; a new agent joins 30 s later.
func (m *master) loseAgent() {
	// An agent running tasks when one does, so the loss costs work.
	var live, busy []string
	for _, id := range sortedKeys(m.agents) {
		if a := m.agents[id]; !a.gone {
			live = append(live, id)
			for _, e := range a.execs {
				if e.tasks > 0 {
					busy = append(busy, id)
					break
				}
			}
		}
	}
	if len(live) <= 1 || m.stopped {
		return
	}
	if len(busy) > 0 {
		live = busy
	}
	a := m.agents[live[m.s.rng.IntN(len(live))]]
	a.gone = true
	m.lost++
	for id := range a.execs {
		delete(m.execIdx, id)
	}
	m.s.logf("FAULT agent %s lost", a.id)
	for _, id := range sortedKeys(m.offers) {
		if m.offers[id].agent == a.id {
			delete(m.offers, id)
			m.alloc.OfferAnswered(frameworkID)
			m.h.Rescinded(mesos.OfferID{Value: id})
		}
	}
	m.alloc.RemoveAgent(a.id)
	reason := mesos.REASON_AGENT_REMOVED
	for _, id := range sortedKeys(m.tasks) {
		if t := m.tasks[id]; t.agent == a.id {
			m.end(t)
			m.deliver(status(t, mesos.TASK_LOST, mesos.SOURCE_MASTER, &reason, nil))
			if e := a.execs[t.id]; t.coarse && e != nil { // the process is gone with its agent: its stream breaks
				m.breakStream(e.gw, t.id, "its agent was lost")
			}
		}
	}
	m.send(m.jitter(), func() { m.h.AgentLost(mesos.AgentID{Value: a.id}) })
	m.s.at(30*time.Second, m.addAgent)
}

// quiet reports whether no task is live, nothing is on its way and no
// executor is left — or, with coarse executors (which live until the
// driver stops), none runs a task or holds a map output.
//
// Only the live driver's work counts: what an earlier driver left is
// checkNoneLeft's.
func (m *master) quiet() bool {
	if m.inflight > 0 {
		return false
	}
	for _, t := range m.tasks {
		if t.inc == m.inc.n && !t.coarse {
			return false
		}
	}
	for _, e := range m.execIdx {
		if e.inc == m.inc.n && (!m.s.cfg.Coarse || e.tasks > 0 || len(e.outputs) > 0) {
			return false
		}
	}
	return true
}

// executors is how many executors run.
func (m *master) executors() int { return len(m.execIdx) }

// check asserts that no agent runs more than it has and that the
// framework holds no more cpus than flint.cores.max, as the master
// accounts them (the live driver's tasks and executors: a dead
// predecessor's, which it kills as it learns of them, are not its).
func (m *master) check() {
	if c := m.s.cfg.CoresMax; c > 0 {
		var held float64
		for _, t := range m.tasks {
			if t.inc == m.inc.n {
				held += t.cpus
			}
		}
		for _, e := range m.execIdx {
			if e.inc == m.inc.n {
				held += e.cpus
			}
		}
		if held > float64(c)+eps {
			m.s.fail("the framework holds %.2f cpus, over flint.cores.max=%d", held, c)
		}
	}
	var bad []string // collected unsorted (cheap), reported in order (deterministic)
	for id, a := range m.agents {
		if !a.gone && (a.usedC > a.cpus+eps || a.usedM > a.mem+eps) {
			bad = append(bad, id)
		}
	}
	slices.Sort(bad)
	for _, id := range bad {
		a := m.agents[id]
		m.s.fail("agent %s runs %.2f cpus %.0f MiB of %.2f cpus %.0f MiB", id, a.usedC, a.usedM, a.cpus, a.mem)
	}
}

// conn is the backend's mesosbackend.Conn: each call is recorded on the
// backend's owner goroutine and handled by the sim after the backend's
// Flush, in the order made.
//
// A dead driver's conn drops every call, made or on its way (restart.go).
type conn struct {
	m   *master
	inc *incarnation
}

// record queues call fn for the master, after the network's delay; a
// call of a driver dead by then is dropped.
func (c conn) record(fn func()) {
	if !c.inc.alive() {
		return
	}
	c.m.s.record(func() {
		if c.inc.alive() {
			c.m.call(func() {
				if c.inc.alive() {
					fn()
				}
			})
		}
	})
}

var _ mesosbackend.Conn = conn{}

func (c conn) Launch(offerIDs []mesos.OfferID, tasks []mesos.TaskInfo) error {
	if c.m.down || !c.inc.alive() { // read during a Flush: the sim's goroutine waits in it
		return errDisconnected
	}
	offerIDs, tasks = slices.Clone(offerIDs), slices.Clone(tasks)
	c.m.s.record(func() {
		if !c.inc.alive() {
			return
		}
		for i := range tasks {
			c.m.unended[tasks[i].TaskID.Value] = true
		}
		c.m.call(func() {
			if c.inc.alive() {
				c.m.launch(offerIDs, tasks)
			}
		})
	})
	return nil
}

func (c conn) Decline(offerIDs []mesos.OfferID, why mesosconn.DeclineReason) error {
	offerIDs = slices.Clone(offerIDs)
	c.record(func() { c.m.decline(offerIDs, why) })
	return nil
}

func (m *master) decline(offerIDs []mesos.OfferID, why mesosconn.DeclineReason) {
	{
		refuse := declineRefuse(m.cfg, why)
		if refuse == nil {
			refuse = &masterRefuse
		}
		for _, id := range offerIDs {
			o := m.offers[id.Value]
			if o == nil {
				continue // rescinded meanwhile
			}
			delete(m.offers, id.Value)
			m.alloc.OfferAnswered(frameworkID)
			m.alloc.Recover(o.agent, frameworkID, scalars(o.cpus, o.mem), refuse, m.s.clk.Now())
			m.s.logf("decline %s (%s)", id.Value, why)
		}
	}
}

func (c conn) SetDemand(on bool) {
	if !c.inc.alive() {
		return
	}
	c.m.s.record(func() {
		if !c.inc.alive() {
			return
		}
		c.m.demand = on
		c.m.call(func() {
			if !c.inc.alive() {
				return
			}
			c.m.s.logf("demand %v", on)
			if on {
				c.m.alloc.Revive(frameworkID, nil)
			} else {
				c.m.alloc.Suppress(frameworkID, nil)
			}
		})
	})
}

func (c conn) Kill(taskID mesos.TaskID, agentID *mesos.AgentID) error {
	if c.m.down || !c.inc.alive() {
		return errDisconnected
	}
	agent := agentID.GetValue()
	c.record(func() { c.m.kill(taskID.Value, agent) })
	return nil
}

func (c conn) Shutdown(executorID mesos.ExecutorID, agentID mesos.AgentID) error {
	if c.m.down || !c.inc.alive() {
		return errDisconnected
	}
	c.record(func() { c.m.shutdown(executorID.Value, agentID.Value) })
	return nil
}

func (c conn) Message(agentID mesos.AgentID, executorID mesos.ExecutorID, data []byte) error {
	data = slices.Clone(data)
	c.record(func() { c.m.message(agentID.Value, executorID.Value, data) })
	return nil
}

// message is a framework message to an executor: a shuffle release drops
// its outputs of that shuffle (shuffleenv's release), after which an idle
// executor may exit.
func (m *master) message(agentID, execID string, data []byte) {
	ns, shuffle, all, ok := contract.ParseShuffleReleaseMessage(data)
	e := m.execIdx[execID]
	m.s.logf("message to %s on %s: release ns %q shuffle %d all %v (ok %v)", execID, agentID, ns, shuffle, all, ok)
	if !ok || e == nil {
		return
	}
	e.release(shuffle, all)
	if a := m.agents[agentID]; a != nil && e.tasks == 0 && len(e.outputs) == 0 && m.idle > 0 {
		e.idleToken++
		tok := e.idleToken
		m.s.at(m.idle, func() { m.idleExit(a, e, tok) })
	}
}

func (c conn) Master() mesos.MasterInfo { return c.m.info }

var errDisconnected = errors.New("sim: not subscribed: the master is failing over")

func (c conn) FrameworkID() string { return frameworkID }

func (c conn) Stop(_ context.Context, teardown bool) error {
	if !c.inc.alive() {
		return nil
	}
	c.m.s.record(func() {
		c.m.stopped = true
		c.m.s.logf("stop (teardown %v)", teardown)
	})
	return nil
}
