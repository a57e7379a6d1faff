package dagscheduler

import (
	"fmt"
	"slices"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
)

// ExecutorLost applies the loss of an executor. Without an external
// shuffle service its map outputs are gone: they are unregistered at once
// (all outputs on its host too when hostLost), so running map stages
// recompute them when their attempt ends and readers do not have to
// discover the loss through fetch failures. With one (Config.ShuffleService)
// the agent's service still serves them: only its cached partitions are
// forgotten, unless its host is lost too. Its running attempts are the
// task core's to retry.
func (s *Scheduler) ExecutorLost(executorID, host string, hostLost bool, now time.Time) []Event {
	reason := fmt.Sprintf("executor %s lost", executorID)
	if hostLost {
		reason = fmt.Sprintf("host %s lost with executor %s", host, executorID)
	}
	if s.cfg.ShuffleService && !hostLost {
		s.forgetExecutor(executorID, s.tracker.Epoch())
		return s.flush()
	}
	s.removeExecutorOutputs(executorID, host, hostLost, s.tracker.Epoch(), reason)
	return s.flush()
}

// forgetExecutor drops an executor's cached partitions, once per epoch.
func (s *Scheduler) forgetExecutor(exec string, epoch int64) {
	if fe, ok := s.execFailureEpoch[exec]; !ok || fe < epoch {
		s.execFailureEpoch[exec] = epoch
		s.dropCacheOn(exec)
	}
}

// removeExecutorOutputs is Spark's removeExecutorAndUnregisterOutputs:
// once per epoch, forget the executor's cached partitions and unregister
// its map outputs (or its host's), then advance the epoch so later tasks
// are told to refresh their view.
func (s *Scheduler) removeExecutorOutputs(exec, host string, byHost bool, epoch int64, reason string) {
	s.removeOutputs(exec, epoch, reason, func() []mapoutput.Lost {
		lost := s.tracker.RemoveOutputsOnExecutor(exec)
		if byHost && host != "" {
			lost = append(lost, s.tracker.RemoveOutputsOnHost(host)...)
		}
		return lost
	})
}

// removeFetchFailedOutputs is removeExecutorOutputs for a fetch failure
// (the task's epoch): the failed executor's outputs — with
// UnregisterOutputOnHost its host's — that the failed location's server
// held (Config.ServerOf). Without a shuffle service a host-wide drop takes
// every executor's server on the host, as Spark's does: the host is
// presumed gone.
func (s *Scheduler) removeFetchFailedOutputs(ff *mapoutput.FetchFailure, epoch int64) {
	onServer := func(*mapoutput.Location) bool { return true }
	if of := s.cfg.ServerOf; of != nil {
		server := of(ff.Location().Address)
		onServer = func(l *mapoutput.Location) bool { return of(l.Address) == server }
	}
	byHost := s.cfg.UnregisterOutputOnHost && ff.Host != ""
	s.removeOutputs(ff.ExecutorID, epoch, fmt.Sprintf("fetch from executor %s failed", ff.ExecutorID), func() []mapoutput.Lost {
		return s.tracker.RemoveOutputsWhere(func(l *mapoutput.Location) bool {
			switch {
			case l.ExecutorID == ff.ExecutorID:
				return onServer(l)
			case byHost && l.Host == ff.Host:
				return !s.cfg.ShuffleService || onServer(l)
			}
			return false
		})
	})
}

// removeOutputs forgets exec's cached partitions and, once per epoch,
// unregisters the outputs drop returns, then advances the epoch.
func (s *Scheduler) removeOutputs(exec string, epoch int64, reason string, drop func() []mapoutput.Lost) {
	s.forgetExecutor(exec, epoch)
	if fl, ok := s.fileLostEpoch[exec]; ok && fl >= epoch {
		return
	}
	s.fileLostEpoch[exec] = epoch
	lost := drop()
	if len(lost) == 0 {
		s.tracker.IncrementEpoch()
	}
	for i := 0; i < len(lost); {
		j := i
		var idx []int
		for ; j < len(lost) && lost[j].ShuffleID == lost[i].ShuffleID; j++ {
			idx = append(idx, lost[j].MapIndex)
		}
		sh := lost[i].ShuffleID
		if ms := s.shuffles[sh]; ms != nil {
			for _, m := range idx {
				ms.lost[m] = reason
			}
		}
		s.emit(OutputsLost{ShuffleID: sh, MapIndex: idx, Reason: reason})
		i = j
	}
}

// rollback handles a fetch failure from an indeterminate map stage: it and
// every stage downstream of it (towards active jobs) must recompute from
// one consistent run. Map stages drop all their outputs; a result stage
// that already produced results cannot be rolled back, so its job fails
// (Spark: "eliminate the indeterminacy by checkpointing") unless its
// results are held until the job ends (JobSpec.ResultsHeld): then they are
// revoked and the result stage reruns whole too.
// what names the event (a fetch failure, a lost output) in the reasons.
func (s *Scheduler) rollback(ms *stage, what, cause string, now time.Time) {
	roll := map[*stage]bool{ms: true}
	var collect func(st *stage, chain []*stage)
	collect = func(st *stage, chain []*stage) {
		if roll[st] {
			for _, c := range chain {
				roll[c] = true
			}
			return
		}
		for _, p := range st.parents {
			collect(p, append(chain, st))
		}
	}
	for _, id := range s.ActiveJobs() {
		collect(s.jobs[id].final, nil)
	}
	sts := make([]*stage, 0, len(roll))
	for st := range roll {
		sts = append(sts, st)
	}
	slices.SortFunc(sts, byJobThenID)
	for _, st := range sts {
		if s.stages[st.id] == nil {
			continue
		}
		if st.kind == ResultTask && st.job.nFinished > 0 && st.job.held {
			s.emit(ResultsRevoked{JobID: st.job.id, Count: st.job.nFinished,
				Reason: fmt.Sprintf("stage %d (%s) reads the output of indeterminate stage %d, which is recomputed after: %s", st.id, st.name(), ms.id, cause)})
			clear(st.job.finished)
			st.job.nFinished = 0
		} else if st.kind == ResultTask && st.job.nFinished > 0 {
			s.failJob(st.job, "", fmt.Sprintf("stage %d (%s) reads the output of indeterminate stage %d, which must be recomputed after: %s; "+
				"%d of its results were already returned and cannot be rolled back; make the input deterministic (e.g. sort it) before the shuffle",
				st.id, st.name(), ms.id, cause, st.job.nFinished), false)
			continue
		}
		st.validFrom = st.nextAttempt
		if st.state == stRunning {
			s.emit(CancelTaskSet{TaskSetID: st.latestSet.ID, Reason: "rolled back: indeterminate input is recomputed"})
			s.finishStage(st, "rolled back: indeterminate input is recomputed", true)
			if st.kind == ResultTask {
				// nothing below it resubmits a job's final stage
				s.markFailed(st, now)
			}
		}
		if st.kind == MapTask && s.tracker.NumAvailable(st.shuffleID) > 0 {
			s.unregisterAll(st, fmt.Sprintf("rolled back after %s in indeterminate stage %d", what, ms.id))
		}
	}
}

// unregisterAll drops every output of map stage st.
func (s *Scheduler) unregisterAll(st *stage, reason string) {
	var idx []int
	for m := range st.node.Partitions {
		if loc, _, ok := s.tracker.Output(st.shuffleID, m); ok && s.tracker.UnregisterMapOutput(st.shuffleID, m, loc) {
			idx = append(idx, m)
			st.lost[m] = reason
		}
	}
	if len(idx) > 0 {
		s.emit(OutputsLost{ShuffleID: st.shuffleID, MapIndex: idx, Reason: reason})
	}
}

// abortStage fails every job that needs st.
func (s *Scheduler) abortStage(st *stage, reason string) {
	ids := make([]int64, 0, len(st.jobs))
	for id := range st.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if st.state == stRunning {
		s.finishStage(st, reason, false)
	}
	for _, id := range ids {
		if j := s.jobs[id]; j != nil {
			s.failJob(j, "", "job aborted due to stage failure: "+reason, false)
		}
	}
}

// failJob ends j with reason; cause, when set, is what the job's
// cancelled task sets are killed for (CancelTaskSet.Cause).
func (s *Scheduler) failJob(j *job, cause, reason string, cancelled bool) {
	s.endJob(j, cause, reason)
	s.emit(JobFailed{JobID: j.id, Reason: reason, Cancelled: cancelled})
}

// endJob forgets j; stages no other job needs are cancelled (if running)
// and removed. Their map outputs stay registered: a later job over the
// same lineage reuses them.
func (s *Scheduler) endJob(j *job, cause, reason string) {
	delete(s.jobs, j.id)
	for _, st := range s.sortedStages(func(st *stage) bool { return st.jobs[j.id] }) {
		delete(st.jobs, j.id)
		if len(st.jobs) > 0 {
			continue
		}
		if st.state == stRunning {
			s.emit(CancelTaskSet{TaskSetID: st.latestSet.ID, Reason: reason, Cause: cause})
			s.finishStage(st, reason, false)
		}
		delete(s.stages, st.id)
		for _, p := range st.parents {
			p.children = slices.DeleteFunc(p.children, func(c *stage) bool { return c == st })
		}
		delete(s.waiting, st.id)
		delete(s.failed, st.id)
		if st.kind == MapTask && s.shuffles[st.shuffleID] == st {
			delete(s.shuffles, st.shuffleID)
		}
	}
	if len(s.failed) == 0 {
		s.resubmitAt = time.Time{}
	}
}

// CancelJob ends a job without its results; its stages that no other job
// needs are cancelled.
func (s *Scheduler) CancelJob(jobID int64, reason string, now time.Time) []Event {
	if j := s.jobs[jobID]; j != nil {
		s.failJob(j, reason, fmt.Sprintf("job %d cancelled: %s", jobID, reason), true)
	}
	return s.flush()
}

// CancelStage cancels every job that needs the stage.
func (s *Scheduler) CancelStage(stageID int, reason string, now time.Time) []Event {
	st := s.stages[stageID]
	if st == nil {
		return nil
	}
	ids := make([]int64, 0, len(st.jobs))
	for id := range st.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if j := s.jobs[id]; j != nil {
			s.failJob(j, reason, fmt.Sprintf("job %d cancelled because stage %d was cancelled: %s", id, stageID, reason), true)
		}
	}
	return s.flush()
}

// Tick runs the resubmit timer: failed stages are resubmitted once
// ResubmitDelay has passed since the first failure of the batch.
func (s *Scheduler) Tick(now time.Time) []Event {
	if s.resubmitAt.IsZero() || now.Before(s.resubmitAt) {
		return nil
	}
	s.resubmitAt = time.Time{}
	failed := make([]*stage, 0, len(s.failed))
	for _, st := range s.failed {
		failed = append(failed, st)
	}
	clear(s.failed)
	slices.SortFunc(failed, byJobThenID)
	for _, st := range failed {
		st.state = stIdle
	}
	for _, st := range failed {
		s.submitStage(st, now)
	}
	// waiting stages whose parents became available meanwhile
	waiting := make([]*stage, 0, len(s.waiting))
	for _, st := range s.waiting {
		waiting = append(waiting, st)
	}
	slices.SortFunc(waiting, byJobThenID)
	for _, st := range waiting {
		if len(s.missingParents(st)) == 0 && st.state == stWaiting {
			delete(s.waiting, st.id)
			st.state = stIdle
			s.submitStage(st, now)
		}
	}
	return s.flush()
}

// ReleaseShuffle forgets a shuffle's outputs once no job needs them (the
// dataset layer releases shuffles it no longer references). It reports
// whether the shuffle was released.
func (s *Scheduler) ReleaseShuffle(shuffleID int) bool {
	if st := s.shuffles[shuffleID]; st != nil && len(st.jobs) > 0 {
		return false
	}
	if _, _, ok := s.tracker.Shape(shuffleID); !ok {
		return false
	}
	s.tracker.UnregisterShuffle(shuffleID)
	return true
}
