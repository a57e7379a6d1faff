package stagetask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/task"
)

// StatusRef is where a task finds the map statuses of shuffle ShuffleID
// (Spark's MapOutputTrackerWorker.getStatuses): the driver's snapshot of
// the shuffle at epoch Epoch or later — the map-output tracker's epoch
// when the driver launched the task, so every loss the driver knew of
// then is in it. File, when set, names the task's file (Task files,
// served by the driver's file server) holding the encoded snapshot; empty,
// the executor's in-process source answers (Env.SetStatusSource: the
// local backend's driver, the simulation's).
type StatusRef struct {
	ShuffleID int
	Epoch     int64
	File      string
}

// StatusSource loads the snapshot a ref names.
type StatusSource func(ctx context.Context, ref StatusRef) (*mapoutput.Snapshot, error)

// ErrNoStatusSource: a task's map statuses are neither in its files nor
// available in process.
var ErrNoStatusSource = errors.New("stagetask: no source of map statuses on this executor")

// MapStatuses is an executor's cache of the driver's map statuses, one
// snapshot per shuffle, shared by the tasks it runs for one application:
// the first task reading a shuffle at an epoch loads it, tasks asking
// meanwhile wait for that load, and later ones cut their blocks from it.
// A task naming a newer epoch than any seen drops every older snapshot
// (outputs were lost since: Spark's updateEpoch); a snapshot with a
// missing output is used once and not kept (the reducer reports the
// output missing; the next task loads again), and Forget drops a shuffle
// after a fetch failure or its release. It is safe for concurrent use.
type MapStatuses struct {
	src StatusSource

	mu      sync.Mutex
	epoch   int64 // the newest epoch a task named
	entries map[int]*statusEntry
	loads   int
}

type statusEntry struct {
	done chan struct{} // closed when snap or err is set
	snap *mapoutput.Snapshot
	err  error
}

// NewMapStatuses is an empty cache loading from src.
func NewMapStatuses(src StatusSource) *MapStatuses {
	return &MapStatuses{src: src, entries: map[int]*statusEntry{}}
}

// Loads counts the snapshots loaded from the source so far.
func (m *MapStatuses) Loads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads
}

// Snapshot returns the shuffle's statuses at ref.Epoch or later.
func (m *MapStatuses) Snapshot(ctx context.Context, ref StatusRef) (*mapoutput.Snapshot, error) {
	for {
		m.mu.Lock()
		m.advance(ref.Epoch)
		e := m.entries[ref.ShuffleID]
		if e == nil {
			e = &statusEntry{done: make(chan struct{})}
			m.entries[ref.ShuffleID] = e
			m.loads++
			m.mu.Unlock()
			return m.load(ctx, ref, e)
		}
		m.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		switch {
		case e.err != nil && ctx.Err() == nil && isContextErr(e.err):
			// the loading task was cancelled, this one was not: load again
		case e.err != nil:
			return nil, e.err
		case e.snap.Epoch >= ref.Epoch:
			return e.snap, nil
		}
		// older than this task's epoch (dropped by advance) or cancelled
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// advance records a task's epoch: snapshots older than the newest epoch
// a task named are stale. Loads in flight are checked when they end.
func (m *MapStatuses) advance(epoch int64) {
	if epoch <= m.epoch {
		return
	}
	m.epoch = epoch
	for id, e := range m.entries {
		select {
		case <-e.done:
			if e.err != nil || e.snap.Epoch < epoch {
				delete(m.entries, id)
			}
		default:
		}
	}
}

func (m *MapStatuses) load(ctx context.Context, ref StatusRef, e *statusEntry) (*mapoutput.Snapshot, error) {
	snap, err := m.src(ctx, ref)
	switch {
	case err != nil:
		err = fmt.Errorf("stagetask: map statuses of shuffle %d: %w", ref.ShuffleID, err)
	case snap.ShuffleID != ref.ShuffleID || snap.Epoch < ref.Epoch:
		err = fmt.Errorf("stagetask: map statuses of shuffle %d at epoch %d answered with shuffle %d at epoch %d",
			ref.ShuffleID, ref.Epoch, snap.ShuffleID, snap.Epoch)
		snap = nil
	}
	m.mu.Lock()
	e.snap, e.err = snap, err
	if err != nil || !complete(snap) || snap.Epoch < m.epoch {
		// not kept: the next task loads again
		if m.entries[ref.ShuffleID] == e {
			delete(m.entries, ref.ShuffleID)
		}
	}
	m.mu.Unlock()
	close(e.done)
	return snap, err
}

// complete reports whether every map output of the snapshot has a
// location.
func complete(s *mapoutput.Snapshot) bool {
	for i := range s.NumMaps() {
		if _, ok := s.Output(i); !ok {
			return false
		}
	}
	return true
}

// Forget drops the shuffle's snapshot (after a fetch failure reading it,
// or its release by the driver); a load in flight still answers the
// tasks waiting for it.
func (m *MapStatuses) Forget(shuffleID int) {
	m.mu.Lock()
	delete(m.entries, shuffleID)
	m.mu.Unlock()
}

// ForgetAll drops every snapshot.
func (m *MapStatuses) ForgetAll() {
	m.mu.Lock()
	clear(m.entries)
	m.mu.Unlock()
}

// Blocks is the blocks of reduce partitions [start, end) of the shuffle
// ref names, by location (mapoutput.Snapshot.Blocks): a missing map
// output is a *mapoutput.FetchFailure.
func (m *MapStatuses) Blocks(ctx context.Context, ref StatusRef, start, end int) ([]mapoutput.FetchGroup, error) {
	snap, err := m.Snapshot(ctx, ref)
	if err != nil {
		return nil, err
	}
	return snap.Blocks(start, end)
}

// Resolve fills in the blocks of every Read of t from the statuses its
// StatusRefs name: a missing map output, or statuses that cannot be had,
// become the Read's Missing failure (which fails the task only if its
// pipeline opens the Read).
func (m *MapStatuses) Resolve(ctx context.Context, t *Task) {
	for i := range t.Reads {
		r := &t.Reads[i]
		ref, ok := t.StatusRef(r.ShuffleID)
		var err error
		if !ok {
			err = fmt.Errorf("stagetask: task names no map statuses of shuffle %d", r.ShuffleID)
		} else {
			r.Groups, err = m.Blocks(ctx, ref, r.Reduce, r.Reduce+1)
		}
		var ff *mapoutput.FetchFailure
		switch {
		case errors.As(err, &ff):
			r.Missing = ff
		case err != nil:
			r.Missing = &mapoutput.FetchFailure{ShuffleID: r.ShuffleID, MapIndex: -1, ReduceIndex: r.Reduce, Message: err.Error()}
		}
	}
}

// FileStatuses loads the snapshot from the task's file ref.File (fetched
// from the driver's file server before the task started).
func FileStatuses(ctx context.Context, ref StatusRef) (*mapoutput.Snapshot, error) {
	files, ok := task.FilesFrom(ctx)
	if !ok {
		return nil, fmt.Errorf("%w: the task has no files (map statuses file %q)", ErrNoStatusSource, ref.File)
	}
	path, err := files.File(ref.File)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s mapoutput.Snapshot
	if err := s.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return &s, nil
}
