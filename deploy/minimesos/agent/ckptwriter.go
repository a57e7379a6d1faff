package agent

import (
	"os"
	"sync"

	"github.com/sirupsen/logrus"
)

// ckptOp is one checkpoint change: a file written (data set), a
// directory removed (data nil, remove set), or updates.json rewritten
// from the status update manager's state at the time it runs (updates).
type ckptOp struct {
	seq     uint64
	path    string
	data    []byte
	remove  bool
	updates bool
}

// checkpointWriter applies the agent's checkpoint changes in the order
// they were made, on its own goroutine. Every change is decided under
// a.mu, but its write (a file synced, renamed, its directories synced:
// milliseconds, far more on a busy disk) happens without it: written under
// a.mu, each status update of a checkpointing framework cost two synced
// writes during which the agent answered no ping, no executor call and no
// launch, and every update waited for the one before. Code that must not
// go on before a change is on disk (acknowledging an executor's update, as
// Mesos acknowledges only checkpointed updates) waits for it with wait,
// without a.mu.
type checkpointWriter struct {
	log           logrus.FieldLogger
	writeUpdates  func() // rewrites updates.json; must not take a.mu
	mu            sync.Mutex
	cond          *sync.Cond
	ops           []ckptOp
	queued, wrote uint64 // seq of the last op queued, and of the last op done
	closed        bool   // no more changes expected: run ends once ops is empty
	stopped       bool   // run ended: changes are applied by their caller
	done          chan struct{}
}

func newCheckpointWriter(log logrus.FieldLogger, writeUpdates func()) *checkpointWriter {
	w := &checkpointWriter{log: log, writeUpdates: writeUpdates, done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// write queues path's new content. A write of the same path still queued
// (with no removal queued after it) takes the new content instead.
func (w *checkpointWriter) write(path string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.ops) - 1; i >= 0 && !w.ops[i].remove; i-- {
		if op := &w.ops[i]; op.path == path && !op.updates {
			op.data = data
			return
		}
	}
	w.pushLocked(ckptOp{path: path, data: data})
}

// removeAll queues the removal of dir and everything under it.
func (w *checkpointWriter) removeAll(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushLocked(ckptOp{path: dir, remove: true})
}

// updatesChanged queues a rewrite of updates.json, unless one is queued
// and not started yet (it will read the current state when it runs).
func (w *checkpointWriter) updatesChanged() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.ops {
		if w.ops[i].updates {
			return
		}
	}
	w.pushLocked(ckptOp{updates: true})
}

func (w *checkpointWriter) pushLocked(op ckptOp) {
	w.queued++
	op.seq = w.queued
	if w.stopped { // after the agent stopped (a launch finishing late): at once
		w.mu.Unlock()
		w.apply(op)
		w.mu.Lock()
		w.wrote = max(w.wrote, op.seq)
		w.cond.Broadcast()
		return
	}
	w.ops = append(w.ops, op)
	w.cond.Broadcast()
}

// mark is the sequence number of the last change queued so far.
func (w *checkpointWriter) mark() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queued
}

// wait blocks until every change up to seq (a mark) is on disk.
func (w *checkpointWriter) wait(seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.wrote < seq {
		w.cond.Wait()
	}
}

// sync waits for every change queued so far.
func (w *checkpointWriter) sync() { w.wait(w.mark()) }

func (w *checkpointWriter) run() {
	defer close(w.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.ops) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.ops) == 0 {
			w.stopped = true
			return
		}
		op := w.ops[0]
		w.ops = w.ops[1:]
		w.mu.Unlock()
		w.apply(op)
		w.mu.Lock()
		w.wrote = max(w.wrote, op.seq)
		w.cond.Broadcast()
	}
}

func (w *checkpointWriter) apply(op ckptOp) {
	var err error
	switch {
	case op.updates:
		w.writeUpdates()
	case op.remove:
		err = os.RemoveAll(op.path)
	default:
		err = writeJSONBytes(op.path, op.data)
	}
	if err != nil {
		w.log.WithError(err).WithField("path", op.path).Warn("agent: checkpointing")
	}
}

// close writes what is queued and stops; later changes are applied at once.
func (w *checkpointWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	<-w.done
}
