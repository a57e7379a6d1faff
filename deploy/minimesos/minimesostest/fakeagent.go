package minimesostest

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// FakeAgent is an in-process agent that records what the master sends,
// answers pings (unless paused) and sends status updates on demand. Its
// Deliver never calls the master synchronously.
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
	wg      sync.WaitGroup
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
	a.msgs = append(a.msgs, msg)
	select {
	case a.notify <- struct{}{}:
	default:
	}
	return nil
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

// NewUUID returns 16 random bytes (a status update uuid).
func NewUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}

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

// Send sends any message to the master.
func (a *FakeAgent) Send(m link.AgentMessage) error {
	a.mu.Lock()
	ms, id := a.master, a.id
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
