package backendharness

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// ErrNoResult is what Streams.FetchResult returns: the fake keeps no
// result blocks.
var ErrNoResult = errors.New("backendharness: no result blocks on fake streams")

// Streams is a fake of the coarse backend's executor gateway
// (coarse.Streams): it records every call on an executor's stream and
// holds the events sink the backend gave it, through which a test plays
// the executors (registrations, status updates, broken streams).
type Streams struct {
	mu     sync.Mutex
	calls  []string
	events gateway.Events
	gone   map[string]bool // executors whose stream is gone: calls on them fail
}

// NewStreams is the constructor coarse.WithStreams takes: it keeps the
// backend's events sink in s and returns s.
func (s *Streams) NewStreams(ev gateway.Events) *Streams {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = ev
	return s
}

// Events is where the test's executor events go (nil before the backend
// started).
func (s *Streams) Events() gateway.Events {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}

// Break makes later calls on executor id's stream fail, as when it broke.
func (s *Streams) Break(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == nil {
		s.gone = map[string]bool{}
	}
	s.gone[id] = true
}

func (s *Streams) record(id, call string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
	if s.gone[id] {
		return gateway.ErrExecutorLost
	}
	return nil
}

// Script returns the calls recorded since the last Script, oldest first:
// "launch E [1 2]", "kill E 3", "release-result E b", "release-shuffle E
// ns/2", "stop E".
func (s *Streams) Script() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// LaunchTasks records a launch of tasks on an executor's stream.
func (s *Streams) LaunchTasks(id string, tds []*flintpb.TaskDescription) error {
	ids := make([]uint64, len(tds))
	for i, td := range tds {
		ids[i] = td.TaskId
	}
	return s.record(id, fmt.Sprintf("launch %s %v", id, ids))
}

// Kill records a kill of a task.
func (s *Streams) Kill(id string, taskID uint64, _ string) error {
	return s.record(id, fmt.Sprintf("kill %s %d", id, taskID))
}

// ReleaseResult records a released result block.
func (s *Streams) ReleaseResult(id, block string) { _ = s.record(id, "release-result "+id+" "+block) }

// ReleaseShuffle records a released shuffle.
func (s *Streams) ReleaseShuffle(id, ns string, shuffleID int, all bool) {
	_ = s.record(id, fmt.Sprintf("release-shuffle %s %s/%d", id, ns, shuffleID))
}

// StopExecutor records a stop request.
func (s *Streams) StopExecutor(id, _ string) error { return s.record(id, "stop "+id) }

// FetchResult fails: the fake keeps no results.
func (s *Streams) FetchResult(context.Context, string, string) ([]byte, error) {
	return nil, ErrNoResult
}
