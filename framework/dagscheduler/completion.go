package dagscheduler

import (
	"fmt"
	"time"
)

// TaskEnded applies the end of a task attempt. Duplicate and late reports
// are recognised (by stage attempt, epoch and partition state) and dropped
// with a TaskIgnored event.
func (s *Scheduler) TaskEnded(te TaskEnd, now time.Time) []Event {
	st := s.stages[te.Task.StageID]
	switch {
	case st == nil:
		s.ignore(te.Task, "its stage no longer exists (its jobs ended)")
	case st.kind != te.Task.Kind:
		s.ignore(te.Task, fmt.Sprintf("stage %d runs %v tasks", st.id, st.kind))
	case te.Reason == Succeeded && st.kind == MapTask:
		s.mapSucceeded(st, te, now)
	case te.Reason == Succeeded:
		s.resultSucceeded(st, te)
	case te.Reason == FetchFailed:
		s.fetchFailed(st, te, now)
	}
	// Other failures are the task core's: it retries the task or aborts the
	// set (reported through TaskSetFailed).
	return s.flush()
}

func (s *Scheduler) ignore(t Task, reason string) {
	s.emit(TaskIgnored{Task: t, Reason: reason})
}

func (s *Scheduler) mapSucceeded(st *stage, te TaskEnd, now time.Time) {
	t, ms := te.Task, te.MapStatus
	if st.indeterminate && (t.StageAttempt < st.latest || t.StageAttempt < st.validFrom) {
		s.ignore(t, fmt.Sprintf("attempt %d of indeterminate stage %d is superseded", t.StageAttempt, st.id))
		s.maybeFinishMapStage(st, now)
		return
	}
	if ms == nil || ms.ShuffleID != st.shuffleID || ms.MapIndex != t.Partition {
		// an executor bug: never guess where the output is
		got := "no map status"
		if ms != nil {
			got = fmt.Sprintf("a status for shuffle %d map %d", ms.ShuffleID, ms.MapIndex)
		}
		s.abortStage(st, fmt.Sprintf("map task %d.%d for partition %d of shuffle %d reported success with %s",
			st.id, t.StageAttempt, t.Partition, st.shuffleID, got))
		return
	}
	st.pending.remove(t.Partition)
	exec := ms.Location.ExecutorID
	if fe, ok := s.execFailureEpoch[exec]; ok && t.Epoch <= fe {
		s.ignore(t, fmt.Sprintf("possibly bogus: executor %s failed at epoch %d, the task has epoch %d", exec, fe, t.Epoch))
	} else if err := s.tracker.RegisterMapOutput(*ms); err != nil {
		s.abortStage(st, fmt.Sprintf("map task %d.%d: %v", st.id, t.StageAttempt, err))
		return
	} else {
		delete(st.lost, t.Partition)
	}
	s.maybeFinishMapStage(st, now)
}

// maybeFinishMapStage ends a running map stage whose pending partitions
// are done: resubmit what is missing, or release its waiting children.
func (s *Scheduler) maybeFinishMapStage(st *stage, now time.Time) {
	if st.state != stRunning || st.pending.n > 0 {
		return
	}
	s.finishStage(st, "", false)
	s.tracker.IncrementEpoch()
	if !s.tracker.IsAvailable(st.shuffleID) {
		// outputs were lost while it ran (Spark: "Resubmitting ... because
		// some of its tasks had failed")
		s.submitStage(st, now)
		return
	}
	s.submitWaitingChildren(st, now)
}

func (s *Scheduler) resultSucceeded(st *stage, te TaskEnd) {
	t, j := te.Task, st.job
	if st.indeterminate && t.StageAttempt < st.validFrom {
		s.ignore(t, fmt.Sprintf("attempt %d of stage %d was rolled back", t.StageAttempt, st.id))
		return
	}
	if t.OutputID < 0 || t.OutputID >= len(j.finished) || j.partitions[t.OutputID] != t.Partition {
		s.ignore(t, fmt.Sprintf("job %d has no output %d for partition %d", j.id, t.OutputID, t.Partition))
		return
	}
	st.pending.remove(t.Partition)
	if j.finished[t.OutputID] {
		s.ignore(t, fmt.Sprintf("result %d of job %d was already computed", t.OutputID, j.id))
		return
	}
	j.finished[t.OutputID] = true
	j.nFinished++
	s.emit(ResultAccepted{JobID: j.id, OutputID: t.OutputID, Task: t})
	if j.nFinished < len(j.finished) {
		return
	}
	s.finishStage(st, "", false)
	s.endJob(j, "", fmt.Sprintf("job %d finished", j.id))
	s.emit(JobSucceeded{JobID: j.id})
}

func (s *Scheduler) fetchFailed(st *stage, te TaskEnd, now time.Time) {
	t, ff := te.Task, te.FetchFailure
	if ff == nil {
		s.ignore(t, "fetch failure without details")
		return
	}
	if t.StageAttempt != st.latest {
		s.ignore(t, fmt.Sprintf("fetch failure from attempt %d, not the latest attempt %d of stage %d", t.StageAttempt, st.latest, st.id))
		return
	}
	mapStage := s.shuffles[ff.ShuffleID]
	st.failedAttempt[t.StageAttempt] = true
	abort := len(st.failedAttempt) >= s.cfg.MaxConsecutiveStageAttempts
	msg := fmt.Sprintf("fetch of shuffle %d map %d reduce %d from %s failed: %s", ff.ShuffleID, ff.MapIndex, ff.ReduceIndex, ff.ExecutorID, ff.Message)
	s.finishStage(st, msg, !abort)
	if mapStage != nil && ff.MapIndex >= 0 && s.tracker.UnregisterMapOutput(ff.ShuffleID, ff.MapIndex, ff.Location()) {
		reason := fmt.Sprintf("fetch from %s failed: %s", ff.ExecutorID, ff.Message)
		mapStage.lost[ff.MapIndex] = reason
		s.emit(OutputsLost{ShuffleID: ff.ShuffleID, MapIndex: []int{ff.MapIndex}, Reason: reason})
	}
	if abort {
		s.abortStage(st, fmt.Sprintf("stage %d (%s) has failed the maximum allowable number of times: %d; most recent failure: %s",
			st.id, st.name(), s.cfg.MaxConsecutiveStageAttempts, msg))
	} else {
		if mapStage != nil && mapStage.indeterminate {
			s.rollback(mapStage, "a fetch failure", msg, now)
		}
		if s.stages[st.id] != nil { // the rollback may have failed its jobs
			s.markFailed(st, now)
			if mapStage != nil && s.stages[mapStage.id] != nil {
				s.markFailed(mapStage, now)
			}
		}
	}
	if ff.ExecutorID != "" {
		s.removeFetchFailedOutputs(ff, t.Epoch)
	}
}

// markFailed parks st for the resubmit timer.
func (s *Scheduler) markFailed(st *stage, now time.Time) {
	if st.state == stWaiting {
		delete(s.waiting, st.id)
	}
	if st.state == stRunning {
		return // still running (a map stage that lost one output): it resubmits itself
	}
	st.state = stFailed
	s.failed[st.id] = st
	if s.resubmitAt.IsZero() {
		s.resubmitAt = now.Add(s.cfg.ResubmitDelay)
		s.emit(ResubmitScheduled{At: s.resubmitAt})
	}
}

// TaskSetFailed reports that the task core aborted a stage attempt's task
// set (a task failed flint.task.maxFailures times, or failed in a way
// retrying cannot fix): the stage's jobs fail.
func (s *Scheduler) TaskSetFailed(stageID, attempt int, reason string, now time.Time) []Event {
	st := s.stages[stageID]
	if st == nil || st.latest != attempt || st.state != stRunning {
		return nil
	}
	s.abortStage(st, reason)
	return s.flush()
}
