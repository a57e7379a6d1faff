package framework

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// StatusUpdate implements Driver.
func (d *driver) StatusUpdate(u *flintpb.StatusUpdate) {
	switch u.State {
	case flintpb.TaskState_TASK_RUNNING:
		return
	case flintpb.TaskState_TASK_FINISHED:
		if ind := u.GetResult().GetIndirect(); ind != nil {
			d.fetchIndirect(u, ind)
			return
		}
		d.finish(u, u.GetResult().GetInline())
	case flintpb.TaskState_TASK_FAILED, flintpb.TaskState_TASK_KILLED, flintpb.TaskState_TASK_LOST:
		d.fail(u, failureOf(u))
	default:
		d.log.Warnf("ignoring status update for task %d with state %s", u.TaskId, u.State)
	}
}

// startFetch registers a result fetch for a task the driver still waits on;
// false means the result is not wanted (duplicate, zombie or stopped).
func (d *driver) startFetch(id uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.running[scheduler.TaskID(id)]; d.stopped || !ok {
		return false
	}
	d.fetches.Add(1) // under the lock: stop() cannot be waiting yet
	return true
}

// fetchIndirect fetches a result the executor kept (Spark's IndirectTaskResult)
// off the caller's goroutine, then completes the task with it.
func (d *driver) fetchIndirect(u *flintpb.StatusUpdate, ind *flintpb.IndirectResult) {
	if !d.startFetch(u.TaskId) {
		d.backend.ReleaseResult(ind.ExecutorId, ind.BlockId)
		return
	}
	go func() {
		defer d.fetches.Done()
		data, err := d.backend.FetchResult(d.fetchCtx, ind.ExecutorId, ind.BlockId)
		if err == nil {
			err = checkFetched(ind, data)
		}
		d.backend.ReleaseResult(ind.ExecutorId, ind.BlockId)
		if err != nil {
			d.fail(u, scheduler.Failure{Kind: scheduler.ResultLost,
				Message: fmt.Sprintf("fetch result %s of task %d from executor %s: %v", ind.BlockId, u.TaskId, ind.ExecutorId, err)})
			return
		}
		d.finish(u, data)
	}()
}

func checkFetched(ind *flintpb.IndirectResult, data []byte) error {
	if int64(len(data)) != ind.Size_ {
		return fmt.Errorf("got %d bytes, executor announced %d", len(data), ind.Size_)
	}
	if ind.Sha256 == "" {
		return nil
	}
	sum := sha256.Sum256(data)
	want, err := hex.DecodeString(ind.Sha256)
	if err != nil || !bytes.Equal(sum[:], want) {
		return fmt.Errorf("checksum mismatch: got %x, executor announced %s", sum, ind.Sha256)
	}
	return nil
}

// finish reports a successful attempt with its result bytes to the core.
func (d *driver) finish(u *flintpb.StatusUpdate, data []byte) {
	var o outbox
	d.mu.Lock()
	id := scheduler.TaskID(u.TaskId)
	a, ok := d.running[id]
	if !ok {
		d.mu.Unlock()
		return
	}
	now := d.now()
	evs := d.core.StatusUpdate(id, scheduler.Update{State: scheduler.Finished, ResultSize: int64(len(data))}, now)
	for _, e := range evs {
		if s, ok := e.(scheduler.TaskSucceeded); ok && s.TaskID == id && !a.job.ended {
			a.job.results[a.index] = Result{Index: a.index, Attempt: a.attempt, ExecutorID: a.executor, Output: data, Metrics: metricsOf(u.Metrics)}
		}
	}
	d.process(evs, u, now, &o)
	d.mu.Unlock()
	d.flush(&o)
}

// fail reports a failed, killed or lost attempt to the core.
func (d *driver) fail(u *flintpb.StatusUpdate, f scheduler.Failure) {
	var o outbox
	d.mu.Lock()
	id := scheduler.TaskID(u.TaskId)
	if _, ok := d.running[id]; !ok {
		d.mu.Unlock()
		return
	}
	st := scheduler.Failed
	switch u.State {
	case flintpb.TaskState_TASK_KILLED:
		st = scheduler.KilledState
	case flintpb.TaskState_TASK_LOST:
		st = scheduler.Lost
	}
	now := d.now()
	evs := d.core.StatusUpdate(id, scheduler.Update{State: st, Failure: &f}, now)
	d.process(evs, u, now, &o)
	d.mu.Unlock()
	d.flush(&o)
}

func metricsOf(m *flintpb.TaskMetrics) TaskMetrics {
	if m == nil {
		return TaskMetrics{}
	}
	return TaskMetrics{RunTime: time.Duration(m.RunTimeNanos), DecodeTime: time.Duration(m.DecodeNanos),
		EncodeTime: time.Duration(m.EncodeNanos), InputSize: m.InputSize, ResultSize: m.ResultSize}
}

var failureKinds = map[flintpb.FailureKind]scheduler.FailureKind{
	flintpb.FailureKind_EXCEPTION:        scheduler.Exception,
	flintpb.FailureKind_PANIC:            scheduler.Panic,
	flintpb.FailureKind_RESULT_TOO_LARGE: scheduler.ResultTooLarge,
	flintpb.FailureKind_DECODE_ERROR:     scheduler.DecodeError,
	flintpb.FailureKind_UNKNOWN_FUNCTION: scheduler.UnknownFunction,
	flintpb.FailureKind_KILLED:           scheduler.Killed,
	flintpb.FailureKind_EXECUTOR_LOST:    scheduler.ExecutorLost,
	flintpb.FailureKind_RESULT_LOST:      scheduler.ResultLost,
	flintpb.FailureKind_LAUNCH_FAILED:    scheduler.LaunchFailed,
}

func failureOf(u *flintpb.StatusUpdate) scheduler.Failure {
	f := u.GetFailure()
	kind, ok := failureKinds[f.GetKind()]
	if !ok {
		kind = scheduler.Exception
		if u.State == flintpb.TaskState_TASK_KILLED {
			kind = scheduler.Killed
		} else if u.State == flintpb.TaskState_TASK_LOST {
			kind = scheduler.ExecutorLost
		}
	}
	msg := f.GetMessage()
	if msg == "" {
		msg = fmt.Sprintf("task %d reported %s without a reason", u.TaskId, u.State)
	}
	return scheduler.Failure{Kind: kind, Message: msg, Stack: f.GetStack()}
}

// ExecutorAdded implements Driver.
func (d *driver) ExecutorAdded(executorID, host string, cores int) {
	d.log.WithField("executor", executorID).Infof("executor %s added on %s with %d cores", executorID, host, cores)
	d.bus.Post(event.ExecutorAdded{Time: d.now(), ExecutorID: executorID, Host: host, Cores: cores})
}

// ExecutorLost implements Driver.
func (d *driver) ExecutorLost(executorID, reason string, causedByApp bool) {
	var o outbox
	d.mu.Lock()
	now := d.now()
	evs := d.core.ExecutorLost(executorID, scheduler.Failure{Kind: scheduler.ExecutorLost, ExitCausedByApp: causedByApp,
		Message: fmt.Sprintf("executor %s lost: %s", executorID, reason)}, now)
	d.process(evs, nil, now, &o)
	o.events = append(o.events, event.ExecutorRemoved{Time: now, ExecutorID: executorID, Reason: reason})
	o.revive = o.revive || d.core.WantsOffers()
	d.mu.Unlock()
	d.log.WithField("executor", executorID).Warnf("executor %s lost: %s", executorID, reason)
	d.flush(&o)
}

// WantsOffers implements Driver.
func (d *driver) WantsOffers() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.stopped && d.core.WantsOffers()
}

// PendingHostPreferences implements Driver.
func (d *driver) PendingHostPreferences() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return nil
	}
	return d.core.PendingHostPreferences()
}
