package framework

import (
	"fmt"
	"sort"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// process applies core events to driver state and queues their side effects.
// cur is the status update being handled, if any; now is the time the core
// was called with. Called with d.mu held.
func (d *driver) process(evs []scheduler.Event, cur *flintpb.StatusUpdate, now time.Time, o *outbox) {
	for _, e := range evs {
		switch e := e.(type) {
		case scheduler.TaskSucceeded:
			d.endAttempt(e.TaskID, "FINISHED", "", cur, now, o)
		case scheduler.TaskFailed:
			d.logFailure(e)
			d.endAttempt(e.TaskID, "FAILED", e.Failure.Message, cur, now, o)
			if js := d.jobs[e.TaskSetID]; js != nil {
				js.lastIndex, js.lastAttempt = e.Index, e.Attempt
			}
		case scheduler.TaskKilled:
			d.endAttempt(e.TaskID, "KILLED", e.Reason, cur, now, o)
		case scheduler.KillTask:
			o.kills = append(o.kills, e)
		case scheduler.TaskSetFinished:
			d.endJob(e.TaskSetID, nil, now, o)
		case scheduler.TaskSetAborted:
			d.endJob(e.TaskSetID, &e, now, o)
		case scheduler.ExecutorExcluded:
			d.log.WithField("executor", e.ExecutorID).Warnf("executor %s excluded %s after repeated task failures", e.ExecutorID, exclusionScope(e.Until, e.TaskSetID))
		case scheduler.NodeExcluded:
			d.log.WithField("host", e.Host).Warnf("host %s excluded %s after repeated task failures", e.Host, exclusionScope(e.Until, e.TaskSetID))
		}
	}
}

// exclusionScope says for what an exclusion holds: the application until a
// time, or one task set (Until zero).
func exclusionScope(until time.Time, taskSet string) string {
	if until.IsZero() {
		return "from task set " + taskSet
	}
	return "until " + until.Format(time.RFC3339)
}

func (d *driver) logFailure(e scheduler.TaskFailed) {
	a, ok := d.running[e.TaskID]
	fields := logrus.Fields{"task": e.TaskID, "taskSet": e.TaskSetID, "index": e.Index, "attempt": e.Attempt}
	if ok {
		fields["executor"] = a.executor
	}
	d.log.WithFields(fields).Warnf("lost task %d.%d in %s (TID %d): %s", e.Index, e.Attempt, e.TaskSetID, e.TaskID, e.Failure.Message)
}

// endAttempt forgets a finished attempt, updates the stage counters and
// posts TaskEnd.
func (d *driver) endAttempt(id scheduler.TaskID, state, reason string, cur *flintpb.StatusUpdate, now time.Time, o *outbox) {
	a, ok := d.running[id]
	if !ok {
		return
	}
	delete(d.running, id)
	if st := d.stages[a.job.stage]; st != nil {
		st.Active--
		switch state {
		case "FINISHED":
			st.Completed++
		case "FAILED":
			st.Failed++
		}
	}
	if !d.listening() {
		return
	}
	te := event.TaskEnd{Time: now, StageID: a.job.stage, TaskID: uint64(id), Index: a.index, Attempt: a.attempt,
		ExecutorID: a.executor, State: state, Reason: reason}
	if cur != nil && cur.TaskId == uint64(id) && cur.Metrics != nil {
		te.RunTime, te.ResultSize = time.Duration(cur.Metrics.RunTimeNanos), cur.Metrics.ResultSize
	}
	o.events = append(o.events, te)
}

// endJob completes or fails the job owning a task set.
func (d *driver) endJob(setID string, ab *scheduler.TaskSetAborted, now time.Time, o *outbox) {
	js := d.jobs[setID]
	if js == nil || js.ended {
		return
	}
	js.ended = true
	delete(d.jobs, setID)
	d.stageEnded(js.stage)
	reason := ""
	if ab != nil {
		js.err = jobError(js, ab)
		reason = ab.Reason
		js.results = nil
		d.log.WithFields(logrus.Fields{"job": js.id, "stage": js.stage}).Errorf("job %d (%s) aborted: %s", js.id, js.job.Name, ab.Reason)
	} else {
		d.log.WithFields(logrus.Fields{"job": js.id, "stage": js.stage}).Infof("job %d (%s) finished", js.id, js.job.Name)
	}
	close(js.done)
	if !d.listening() {
		return
	}
	var jerr error
	if js.err != nil {
		jerr = js.err
	}
	o.events = append(o.events,
		event.StageCompleted{Time: now, JobID: js.id, StageID: js.stage, FailureReason: reason},
		event.JobEnd{Time: now, JobID: js.id, Err: jerr})
}

func jobError(js *jobState, ab *scheduler.TaskSetAborted) *JobError {
	je := &JobError{JobID: js.id, Job: js.job.Name, StageID: js.stage, Reason: ab.Reason, TaskIndex: -1, Cause: js.cause}
	if f := ab.LastFailure; f != nil {
		je.FailureKind, je.Message, je.Stack = f.Kind.String(), f.Message, f.Stack
		je.TaskIndex, je.Attempt = js.lastIndex, js.lastAttempt
	}
	return je
}

// tick advances the core's timers: speculation, exclusion expiry,
// unschedulable task sets and locality waits (which need fresh offers).
func (d *driver) tick() {
	var o outbox
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	now := d.now()
	d.process(d.core.Tick(now), nil, now, &o)
	o.revive = d.core.WantsOffers()
	d.mu.Unlock()
	d.flush(&o)
}

// cancel kills a job's task set because its context ended or the driver stops.
func (d *driver) cancel(js *jobState, cause error) {
	var o outbox
	d.mu.Lock()
	d.cancelLocked(js, cause, &o)
	d.mu.Unlock()
	d.flush(&o)
}

func (d *driver) cancelLocked(js *jobState, cause error, o *outbox) {
	if js.ended {
		return
	}
	js.cause = cause // before the job ends: RunJob reads the error as soon as done closes
	d.process(d.core.KillTaskSet(js.setID, fmt.Sprintf("job cancelled: %v", cause)), nil, d.now(), o)
	if !js.ended { // the core already considered the set done; end the job anyway
		d.endJob(js.setID, &scheduler.TaskSetAborted{TaskSetID: js.setID, Reason: fmt.Sprintf("job cancelled: %v", cause)}, d.now(), o)
	}
}

// Abort implements Driver: every active job fails with reason.
func (d *driver) Abort(reason string) {
	var o outbox
	d.mu.Lock()
	cause := fmt.Errorf("%w: %s", ErrBackendAborted, reason)
	for _, js := range d.jobs {
		d.cancelLocked(js, cause, &o)
	}
	d.mu.Unlock()
	d.log.Errorf("backend aborted the active jobs: %s", reason)
	d.flush(&o)
}

// stop aborts every job, then waits for result fetches in flight.
func (d *driver) stop() {
	var o outbox
	d.mu.Lock()
	if !d.stopped {
		d.stopped = true
		for _, js := range d.jobs {
			d.cancelLocked(js, ErrStopped, &o)
		}
	}
	d.mu.Unlock()
	d.flush(&o)
	d.stopFetch()
	d.fetches.Wait()
}

// keepEndedStages is how many ended stages the status tracker still reports
// (Ended set), so the progress display learns their final counts.
const keepEndedStages = 8

// stageEnded marks a stage ended and forgets the oldest ended ones.
// Called with d.mu held.
func (d *driver) stageEnded(stage int) {
	if st := d.stages[stage]; st != nil {
		st.Ended = true
	}
	d.ended = append(d.ended, stage)
	if len(d.ended) > keepEndedStages {
		delete(d.stages, d.ended[0])
		d.ended = d.ended[1:]
	}
}

// activeStages is the status tracker behind the progress bar: running
// stages and the last few ended ones.
func (d *driver) activeStages() []progress.StageStatus {
	d.mu.Lock()
	out := make([]progress.StageStatus, 0, len(d.stages))
	for _, st := range d.stages {
		out = append(out, *st)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].StageID < out[j].StageID })
	return out
}

// explain says why a task of an active stage is not running.
func (d *driver) explain(stageID, index int) (scheduler.Explanation, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, js := range d.jobs {
		if js.stage == stageID {
			if index < 0 || index >= len(js.job.Tasks) {
				return scheduler.Explanation{}, fmt.Errorf("framework: stage %d has no task %d", stageID, index)
			}
			return d.core.Explain(js.setID, index, d.now()), nil
		}
	}
	return scheduler.Explanation{}, fmt.Errorf("framework: stage %d is not active", stageID)
}
