package statusupdate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// Errors.
var (
	// ErrInvalid: the update lacks a 16-byte uuid or a state.
	ErrInvalid = errors.New("statusupdate: invalid update")
	// ErrTerminated: the task's stream already holds a terminal update.
	ErrTerminated = errors.New("statusupdate: task already terminated")
	// ErrUnexpectedAck: the acknowledgement does not match the stream's head.
	ErrUnexpectedAck = errors.New("statusupdate: unexpected acknowledgement")
	// ErrClosed: the manager is closed.
	ErrClosed = errors.New("statusupdate: closed")
)

// Forward sends one update to the master. It is called without locks held,
// at most once at a time per task.
type Forward func(ctx context.Context, u link.StatusUpdate) error

// Config configures a Manager.
type Config struct {
	Forward Forward
	// RetryMin is the first retry interval (Mesos: 10s), doubling up to
	// RetryMax (Mesos: 10min). Defaults: 50ms and 1s, fast for tests.
	RetryMin, RetryMax time.Duration
	// Changed, if set, is called (without locks) after a stream changed, so
	// the agent can checkpoint Snapshot.
	Changed func()
	Logger  logrus.FieldLogger
}

type key struct{ fw, task string }

type stream struct {
	key       key
	pending   []link.StatusUpdate
	seen      [][]byte // uuids already received (pending and acknowledged)
	terminal  bool     // a terminal update has been received
	timer     *time.Timer
	interval  time.Duration
	inflight  bool
	sendAgain bool
}

// Manager is safe for concurrent use.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	agentID string
	paused  bool
	closed  bool
	streams map[key]*stream
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a running manager, paused until SetAgentID is called.
func New(cfg Config) *Manager {
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = 50 * time.Millisecond
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(time.Second, cfg.RetryMin)
	}
	if cfg.Logger == nil {
		cfg.Logger = logrus.StandardLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, streams: map[key]*stream{}, paused: true, ctx: ctx, cancel: cancel}
}

// IsTerminal reports whether s is a terminal task state.
func IsTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

// SetAgentID sets the agent id written into updates and resumes
// forwarding: every stream's head is sent again at once (after a
// (re-)registration).
func (m *Manager) SetAgentID(id string) {
	m.mu.Lock()
	m.agentID = id
	m.paused = false
	var heads []*stream
	for _, s := range m.streams {
		if len(s.pending) > 0 {
			s.pending[0].Status.AgentID = &mesos.AgentID{Value: id}
			s.interval = m.cfg.RetryMin
			heads = append(heads, s)
		}
	}
	m.mu.Unlock()
	for _, s := range heads {
		m.kick(s)
	}
}

// Pause stops forwarding (the agent lost its master); updates still queue.
func (m *Manager) Pause() {
	m.mu.Lock()
	m.paused = true
	m.mu.Unlock()
}

// Update queues one update. It returns duplicate=true, and no error, when
// the update's uuid was already received for the task; the caller should
// acknowledge it to the executor again.
func (m *Manager) Update(u link.StatusUpdate) (duplicate bool, err error) {
	st := u.Status
	if len(st.UUID) != 16 || st.State == nil || st.TaskID.Value == "" {
		return false, fmt.Errorf("%w: task %q needs a state and a 16-byte uuid", ErrInvalid, st.TaskID.Value)
	}
	k := key{u.FrameworkID.Value, st.TaskID.Value}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false, ErrClosed
	}
	s := m.streams[k]
	if s == nil {
		s = &stream{key: k, interval: m.cfg.RetryMin}
		m.streams[k] = s
	}
	for _, id := range s.seen {
		if bytes.Equal(id, st.UUID) {
			m.mu.Unlock()
			return true, nil
		}
	}
	if s.terminal {
		m.mu.Unlock()
		return false, fmt.Errorf("%w: %s", ErrTerminated, k.task)
	}
	if m.agentID != "" {
		u.Status.AgentID = &mesos.AgentID{Value: m.agentID}
	}
	s.seen = append(s.seen, append([]byte(nil), st.UUID...))
	s.terminal = IsTerminal(*st.State)
	s.pending = append(s.pending, u)
	head := len(s.pending) == 1
	if head {
		s.interval = m.cfg.RetryMin
	}
	m.mu.Unlock()
	m.changed()
	if head {
		m.kick(s)
	}
	return false, nil
}

func (m *Manager) changed() {
	if m.cfg.Changed != nil {
		m.cfg.Changed()
	}
}

// Acknowledge removes the head update of the task's stream if uuid matches,
// and forwards the next one.
func (m *Manager) Acknowledge(frameworkID, taskID string, uuid []byte) error {
	k := key{frameworkID, taskID}
	m.mu.Lock()
	s := m.streams[k]
	if s == nil || len(s.pending) == 0 || !bytes.Equal(s.pending[0].Status.UUID, uuid) {
		m.mu.Unlock()
		return fmt.Errorf("%w: task %s", ErrUnexpectedAck, taskID)
	}
	s.pending = s.pending[1:]
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.interval = m.cfg.RetryMin
	next := len(s.pending) > 0
	if !next && s.terminal {
		delete(m.streams, k)
	}
	m.mu.Unlock()
	m.changed()
	if next {
		m.kick(s)
	}
	return nil
}

// kick forwards the head of s now (or once the in-flight send returns).
func (m *Manager) kick(s *stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.inflight {
		s.sendAgain = true
		return
	}
	m.sendLocked(s)
}

func (m *Manager) sendLocked(s *stream) {
	if m.closed || m.paused || len(s.pending) == 0 || m.streams[s.key] != s {
		return
	}
	u := s.pending[0]
	s.inflight = true
	if s.timer != nil {
		s.timer.Stop()
	}
	interval := s.interval
	s.interval = min(2*s.interval, m.cfg.RetryMax)
	s.timer = time.AfterFunc(interval, func() { m.kick(s) })
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.cfg.Forward(m.ctx, u); err != nil {
			m.cfg.Logger.WithError(err).WithField("task", s.key.task).Debug("statusupdate: forward failed; will retry")
		}
		m.mu.Lock()
		s.inflight = false
		again := s.sendAgain
		s.sendAgain = false
		if again {
			m.sendLocked(s)
		}
		m.mu.Unlock()
	}()
}

// Pending returns the unacknowledged updates of one task, oldest first.
func (m *Manager) Pending(frameworkID, taskID string) []link.StatusUpdate {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.streams[key{frameworkID, taskID}]; s != nil {
		return append([]link.StatusUpdate(nil), s.pending...)
	}
	return nil
}

// Snapshot returns every unacknowledged update, per task in order, for
// checkpointing.
func (m *Manager) Snapshot() []link.StatusUpdate {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []link.StatusUpdate
	for _, s := range m.streams {
		out = append(out, s.pending...)
	}
	return out
}

// RemoveIdleFramework drops the streams of a framework with no
// unacknowledged update, and reports whether it did; a framework with one
// keeps everything (its updates must still reach the master).
func (m *Manager) RemoveIdleFramework(frameworkID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.streams {
		if k.fw == frameworkID && len(s.pending) > 0 {
			return false
		}
	}
	for k, s := range m.streams {
		if k.fw == frameworkID {
			if s.timer != nil {
				s.timer.Stop()
			}
			delete(m.streams, k)
		}
	}
	return true
}

// RemoveFramework drops the streams of a removed framework, with their
// unacknowledged updates.
func (m *Manager) RemoveFramework(frameworkID string) {
	m.mu.Lock()
	for k, s := range m.streams {
		if k.fw == frameworkID {
			if s.timer != nil {
				s.timer.Stop()
			}
			delete(m.streams, k)
		}
	}
	m.mu.Unlock()
	m.changed()
}

// Close stops retries and waits for in-flight forwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, s := range m.streams {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
}
