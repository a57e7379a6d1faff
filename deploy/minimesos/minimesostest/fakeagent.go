package minimesostest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/uuid"
)

// FakeAgent is an in-process agent that records what the master sends,
// answers pings (unless paused) and sends status updates on demand. It
// tracks the tasks the master launched on it and their latest states
// (see Registration). Its Deliver never calls the master synchronously.
type FakeAgent struct {
	Info mesos.AgentInfo

	mu      sync.Mutex
	master  link.Master
	id      string
	msgs    []link.MasterMessage
	notify  chan struct{}
	noPong  bool
	pongs   int
	stopped bool
	// What it runs, for Registration: frameworks, executors and tasks by
	// framework id, then executor or task id.
	fws   map[string]mesos.FrameworkInfo
	execs map[string]map[string]mesos.ExecutorInfo
	tasks map[string]map[string]*mesos.Task
	wg    sync.WaitGroup
}

// NewFakeAgent returns an unregistered fake agent.
func NewFakeAgent(hostname string, res mesos.Resources) *FakeAgent {
	return &FakeAgent{Info: mesos.AgentInfo{Hostname: hostname, Resources: res}, notify: make(chan struct{}, 1)}
}

// Register registers (or re-registers, once it has an id) with m.
func (a *FakeAgent) Register(m link.Master) error {
	return a.RegisterWith(m, link.Registration{})
}

// RegisterWith registers with m reporting r's frameworks, executors and tasks.
func (a *FakeAgent) RegisterWith(m link.Master, r link.Registration) error {
	a.mu.Lock()
	r.AgentInfo = a.Info
	if a.id != "" {
		r.AgentInfo.ID = &mesos.AgentID{Value: a.id}
	}
	a.master = m
	a.mu.Unlock()
	reg, err := m.RegisterAgent(context.Background(), r, a)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.id = reg.AgentID.Value
	a.mu.Unlock()
	return nil
}

// ID is the agent id the master assigned.
func (a *FakeAgent) ID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.id
}

// SetPongs turns ping answers on or off.
func (a *FakeAgent) SetPongs(on bool) {
	a.mu.Lock()
	a.noPong = !on
	a.mu.Unlock()
}

// Pongs is how many pongs the master has taken so far (each counted
// once FromAgent returned), so that tests on a FakeClock can wait for the
// answer to one ping before the next falls due.
func (a *FakeAgent) Pongs() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pongs
}

// Deliver implements link.Agent.
func (a *FakeAgent) Deliver(msg link.MasterMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return link.ErrClosed
	}
	if msg.Ping != nil {
		if !a.noPong {
			m, id, seq := a.master, a.id, msg.Ping.Seq
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				if m.FromAgent(context.Background(), id, link.AgentMessage{Pong: &link.Pong{Seq: seq}}) == nil {
					a.mu.Lock()
					a.pongs++
					a.mu.Unlock()
				}
			}()
		}
		return nil
	}
	a.track(msg)
	a.msgs = append(a.msgs, msg)
	select {
	case a.notify <- struct{}{}:
	default:
	}
	return nil
}

// track records launched tasks and forgets shut down ones. Callers hold a.mu.
func (a *FakeAgent) track(msg link.MasterMessage) {
	if a.fws == nil {
		a.fws, a.execs, a.tasks = map[string]mesos.FrameworkInfo{}, map[string]map[string]mesos.ExecutorInfo{}, map[string]map[string]*mesos.Task{}
	}
	switch {
	case msg.RunTask != nil:
		rt := msg.RunTask
		fid := rt.Framework.GetID().GetValue()
		a.fws[fid] = rt.Framework
		var infos []mesos.TaskInfo
		exec := rt.Executor
		if rt.Task != nil {
			infos = append(infos, *rt.Task)
			if rt.Task.Executor != nil {
				exec = rt.Task.Executor
			}
		}
		if rt.Group != nil {
			infos = append(infos, rt.Group.Tasks...)
		}
		if exec != nil {
			if a.execs[fid] == nil {
				a.execs[fid] = map[string]mesos.ExecutorInfo{}
			}
			a.execs[fid][exec.ExecutorID.Value] = *exec
		}
		if a.tasks[fid] == nil {
			a.tasks[fid] = map[string]*mesos.Task{}
		}
		for _, ti := range infos {
			t := &mesos.Task{Name: ti.Name, TaskID: ti.TaskID, FrameworkID: mesos.FrameworkID{Value: fid},
				AgentID: mesos.AgentID{Value: a.id}, State: mesos.TASK_STAGING.Enum(), Resources: ti.Resources}
			if exec != nil {
				eid := exec.ExecutorID
				t.ExecutorID = &eid
			}
			a.tasks[fid][ti.TaskID.Value] = t
		}
	case msg.ShutdownFramework != nil:
		fid := msg.ShutdownFramework.FrameworkID.Value
		delete(a.fws, fid)
		delete(a.execs, fid)
		delete(a.tasks, fid)
	case msg.ShutdownExecutor != nil:
		fid, eid := msg.ShutdownExecutor.FrameworkID.Value, msg.ShutdownExecutor.ExecutorID.Value
		delete(a.execs[fid], eid)
		for id, t := range a.tasks[fid] {
			if t.GetExecutorID().GetValue() == eid {
				delete(a.tasks[fid], id)
			}
		}
	}
}

// Registration is what this agent reports when it re-registers (as after
// RestartMaster): the frameworks, executors and tasks the master
// launched on it and not shut down, each task in the latest state sent
// with SendStatus or Send. Register reports nothing; use
// RegisterWith(m, a.Registration()) to report them.
func (a *FakeAgent) Registration() link.Registration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var r link.Registration
	for _, fid := range sortedKeys(a.fws) {
		if len(a.tasks[fid]) == 0 && len(a.execs[fid]) == 0 {
			continue
		}
		r.Frameworks = append(r.Frameworks, a.fws[fid])
		for _, eid := range sortedKeys(a.execs[fid]) {
			r.Executors = append(r.Executors, link.Executor{FrameworkID: mesos.FrameworkID{Value: fid}, Info: a.execs[fid][eid]})
		}
		for _, tid := range sortedKeys(a.tasks[fid]) {
			t := *a.tasks[fid][tid]
			t.AgentID = mesos.AgentID{Value: a.id}
			r.Tasks = append(r.Tasks, t)
		}
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Messages returns what the master sent so far (pings excluded).
func (a *FakeAgent) Messages() []link.MasterMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]link.MasterMessage(nil), a.msgs...)
}

// WaitFor waits until a message satisfying pred arrives and returns it
// (messages already received count).
func (a *FakeAgent) WaitFor(timeout time.Duration, pred func(link.MasterMessage) bool) (link.MasterMessage, error) {
	deadline := time.After(timeout)
	seen := 0
	for {
		a.mu.Lock()
		msgs := a.msgs[seen:]
		seen = len(a.msgs)
		a.mu.Unlock()
		for _, m := range msgs {
			if pred(m) {
				return m, nil
			}
		}
		select {
		case <-a.notify:
		case <-deadline:
			return link.MasterMessage{}, fmt.Errorf("minimesostest: agent %s: no matching message in %v", a.ID(), timeout)
		}
	}
}

// NewUUID returns a random UUID (a status update uuid).
func NewUUID() []byte { return uuid.New() }

// SendStatus sends a status update for a task (with a fresh uuid, source
// SOURCE_EXECUTOR) and returns the uuid.
func (a *FakeAgent) SendStatus(frameworkID, taskID string, state mesos.TaskState) ([]byte, error) {
	u := NewUUID()
	ts := float64(time.Now().UnixNano()) / 1e9
	err := a.Send(link.AgentMessage{StatusUpdate: &link.StatusUpdate{
		FrameworkID: mesos.FrameworkID{Value: frameworkID},
		Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: taskID}, State: state.Enum(),
			Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: u, Timestamp: &ts},
	}})
	return u, err
}

// Send sends any message to the master (a status update also becomes
// the tracked task's latest state).
func (a *FakeAgent) Send(m link.AgentMessage) error {
	a.mu.Lock()
	ms, id := a.master, a.id
	if su := m.StatusUpdate; su != nil {
		if t := a.tasks[su.FrameworkID.Value][su.Status.TaskID.Value]; t != nil {
			t.State = su.Status.GetState().Enum()
			st := su.Status
			st.Data = nil
			t.Statuses = append(t.Statuses, st)
		}
	}
	a.mu.Unlock()
	return ms.FromAgent(context.Background(), id, m)
}

// Disconnect tells the master this agent's connection broke.
func (a *FakeAgent) Disconnect() {
	a.mu.Lock()
	ms, id := a.master, a.id
	a.mu.Unlock()
	ms.AgentDisconnected(id, a)
}

// Stop stops answering and waits for pending pongs.
func (a *FakeAgent) Stop() {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.wg.Wait()
}
