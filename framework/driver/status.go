package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// statusUpdate handles a task's state (RUNNING updates change nothing).
func (c *driverCore) statusUpdate(u *backend.StatusUpdate, now time.Time) {
	switch u.State {
	case scheduler.Running:
		return
	case scheduler.Finished:
		c.freeSlot(scheduler.TaskID(u.TaskID), now)
		if u.Indirect != nil {
			c.fetchIndirect(u, u.Indirect)
			return
		}
		c.finish(u, u.Result, now)
	case scheduler.Failed, scheduler.KilledState, scheduler.Lost:
		c.freeSlot(scheduler.TaskID(u.TaskID), now)
		f, ff := failureOf(u)
		c.fail(u, f, ff, now)
	default:
		c.log.Warnf("ignoring status update for task %d with state %s", u.TaskID, u.State)
	}
}

// fetchIndirect asks the loop to fetch a result the executor kept (Spark's
// IndirectTaskResult) when the driver still waits on the task; otherwise
// the block is released at once.
func (c *driverCore) fetchIndirect(u *backend.StatusUpdate, ind *backend.IndirectResult) {
	if _, ok := c.running[scheduler.TaskID(u.TaskID)]; c.stopped || !ok {
		c.out.Releases = append(c.out.Releases, backend.Release{ExecutorID: ind.ExecutorID, BlockID: ind.BlockID})
		return
	}
	c.out.fetches = append(c.out.fetches, fetch{u: u, ind: ind})
}

// fetched completes a task whose kept result was fetched (or not), and
// releases the block.
func (c *driverCore) fetched(u *backend.StatusUpdate, ind *backend.IndirectResult, data []byte, err error, now time.Time) {
	c.out.Releases = append(c.out.Releases, backend.Release{ExecutorID: ind.ExecutorID, BlockID: ind.BlockID})
	if err != nil {
		c.fail(u, scheduler.Failure{Kind: scheduler.ResultLost,
			Message: fmt.Sprintf("fetch result %s of task %d from executor %s: %v", ind.BlockID, u.TaskID, ind.ExecutorID, err)}, nil, now)
		return
	}
	c.finish(u, data, now)
}

func checkFetched(ind *backend.IndirectResult, data []byte) error {
	if int64(len(data)) != ind.Size {
		return fmt.Errorf("got %d bytes, executor announced %d", len(data), ind.Size)
	}
	if ind.SHA256 == "" {
		return nil
	}
	sum := sha256.Sum256(data)
	want, err := hex.DecodeString(ind.SHA256)
	if err != nil || !bytes.Equal(sum[:], want) {
		return fmt.Errorf("checksum mismatch: got %x, executor announced %s", sum, ind.SHA256)
	}
	return nil
}

// finish reports an attempt that returned data to the core: a success
// with its output. (A task that could not read a shuffle block ends
// Failed with the FetchFailed end reason on the wire, not here.)
func (c *driverCore) finish(u *backend.StatusUpdate, data []byte, now time.Time) {
	id := scheduler.TaskID(u.TaskID)
	a, ok := c.running[id]
	if !ok {
		return
	}
	out, err := a.job.run.output(a.job.dagSet, data)
	if err != nil {
		c.fail(u, scheduler.Failure{Kind: scheduler.DecodeError, Message: fmt.Sprintf("stage task output: %v", err)}, nil, now)
		return
	}
	evs := c.sched.StatusUpdate(id, scheduler.Update{State: scheduler.Finished, ResultSize: int64(len(out.Value))}, now)
	c.process(evs, &taskEnd{u: u, out: out}, now)
	c.changed = true
}

// fail reports a failed, killed or lost attempt to the core; ff is the
// block a FetchFailed attempt could not read.
func (c *driverCore) fail(u *backend.StatusUpdate, f scheduler.Failure, ff *mapoutput.FetchFailure, now time.Time) {
	id := scheduler.TaskID(u.TaskID)
	if _, ok := c.running[id]; !ok {
		return
	}
	st := u.State
	if st != scheduler.KilledState && st != scheduler.Lost {
		st = scheduler.Failed
	}
	c.process(c.sched.StatusUpdate(id, scheduler.Update{State: st, Failure: &f}, now), &taskEnd{u: u, fetchFailure: ff}, now)
	c.dirty, c.changed = true, true
}

func metricsOf(m *backend.TaskMetrics) TaskMetrics {
	return TaskMetrics{RunTime: m.RunTime, DecodeTime: m.DecodeTime, EncodeTime: m.EncodeTime, InputSize: m.InputSize, ResultSize: m.ResultSize}
}

// failureOf is the failure an update reports, and for a FetchFailed one
// the block it could not read; one without a failure gets its state's
// kind, one without a message a message naming the state. A FetchFailed
// failure that names no block (or is not a Failed state's) is an
// Exception: the DAG core could not know which map output to recompute.
func failureOf(u *backend.StatusUpdate) (scheduler.Failure, *mapoutput.FetchFailure) {
	f := scheduler.Failure{Kind: backend.FailureKindOf(u.State)}
	if u.Failure != nil {
		f = scheduler.Failure{Kind: u.Failure.Kind, Message: u.Failure.Message, Stack: u.Failure.Stack}
	}
	if f.Message == "" {
		f.Message = fmt.Sprintf("task %d reported %s without a reason", u.TaskID, u.State)
	}
	if f.Kind != scheduler.FetchFailed {
		return f, nil
	}
	if u.FetchFailed == nil || u.State != scheduler.Failed {
		f.Kind, f.Message = scheduler.Exception, f.Message+" (a fetch failure naming no shuffle block)"
		return f, nil
	}
	return f, u.FetchFailed
}
