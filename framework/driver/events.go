package driver

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/progress"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/task"
)

// taskEnd is how the attempt a status update ends ended, as the update's
// handling passes it down (never parked in the core): the update, and
// either the task's decoded output (a success) or the shuffle block it
// could not read (Spark's FetchFailed end reason).
type taskEnd struct {
	u            *backend.StatusUpdate
	out          stagetask.Output
	fetchFailure *mapoutput.FetchFailure
}

// of is the end when it is attempt id's, else nil.
func (te *taskEnd) of(id scheduler.TaskID) *taskEnd {
	if te == nil || te.u.TaskID != uint64(id) {
		return nil
	}
	return te
}

// process applies the scheduling core's events to the driver's state and
// adds their effects to the step. cur is the end of the attempt whose
// status update is being handled, if any; now is the time the core was
// called with.
func (c *driverCore) process(evs []scheduler.Event, cur *taskEnd, now time.Time) {
	for _, e := range evs {
		switch e := e.(type) {
		case scheduler.TaskSucceeded:
			a, ok := c.running[e.TaskID]
			c.endAttempt(e.TaskID, "FINISHED", "", cur, now)
			if te := cur.of(e.TaskID); ok && te != nil {
				c.taskSucceeded(e.TaskID, a, te, now)
			}
		case scheduler.TaskFailed:
			c.logFailure(e)
			a, ok := c.running[e.TaskID]
			c.endAttempt(e.TaskID, "FAILED", e.Failure.Message, cur, now, e.Failure.Stack)
			if te := cur.of(e.TaskID); ok && te != nil && te.fetchFailure != nil && e.Failure.Kind == scheduler.FetchFailed {
				c.endRunSet(a.job, "fetch failure: "+e.Failure.Message, now)
				c.taskFetchFailed(a, te.fetchFailure, e.Failure.Message, now)
			}
			if js := c.jobs[e.TaskSetID]; js != nil {
				js.lastIndex, js.lastAttempt = e.Index, e.Attempt
			}
		case scheduler.TaskKilled:
			c.endAttempt(e.TaskID, "KILLED", e.Reason, cur, now)
		case scheduler.KillTask:
			c.out.Kills = append(c.out.Kills, backend.Kill{TaskID: uint64(e.TaskID), ExecutorID: e.ExecutorID, Reason: e.Reason})
		case scheduler.TaskSetFinished:
			// the DAG core heard the set's last result; the stage ends
			if js := c.jobs[e.TaskSetID]; js != nil {
				c.endRunSet(js, "", now)
			}
		case scheduler.TaskSetAborted:
			c.taskSetAborted(e, now)
		case scheduler.ExecutorExcluded:
			c.log.WithField("executor", e.ExecutorID).Warnf("executor %s excluded %s after repeated task failures", e.ExecutorID, exclusionScope(e.Until, e.TaskSetID))
		case scheduler.NodeExcluded:
			c.log.WithField("host", e.Host).Warnf("host %s excluded %s after repeated task failures", e.Host, exclusionScope(e.Until, e.TaskSetID))
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

func (c *driverCore) logFailure(e scheduler.TaskFailed) {
	a, ok := c.running[e.TaskID]
	fields := logrus.Fields{"task": e.TaskID, "taskSet": e.TaskSetID, "index": e.Index, "attempt": e.Attempt}
	if ok {
		fields["executor"] = a.executor
	}
	if !e.WillRetry { // the job's error reports it: print each failure once
		c.log.WithFields(fields).Debugf("lost task %d.%d in %s (TID %d): %s", e.Index, e.Attempt, e.TaskSetID, e.TaskID, e.Failure.Message)
		return
	}
	c.log.WithFields(fields).Warnf("lost task %d.%d in %s (TID %d): %s; retrying", e.Index, e.Attempt, e.TaskSetID, e.TaskID, firstLine(e.Failure.Message))
}

// endAttempt forgets a finished attempt, updates the stage counters and
// posts TaskEnd.
func (c *driverCore) endAttempt(id scheduler.TaskID, state, reason string, cur *taskEnd, now time.Time, stack ...string) {
	a, ok := c.running[id]
	if !ok {
		return
	}
	delete(c.running, id)
	if st := c.stages[a.job.stage]; st != nil {
		st.Active--
		switch state {
		case "FINISHED":
			st.Completed++
		case "FAILED":
			st.Failed++
		}
	}
	if !c.listening() {
		return
	}
	te := event.TaskEnd{Time: now, StageID: a.job.stage, StageAttempt: a.job.stageAttempt(), TaskID: uint64(id), Index: a.index, Attempt: a.attempt,
		ExecutorID: a.executor, State: state, Reason: reason}
	if len(stack) > 0 {
		te.Stack = stack[0]
	}
	if end := cur.of(id); end != nil {
		m := &end.u.Metrics
		te.RunTime, te.ResultSize = m.RunTime, m.ResultSize
		te.DecodeTime, te.EncodeTime, te.InputSize, te.InputRecords = m.DecodeTime, m.EncodeTime, m.InputSize, m.InputRecords
		shuffleMetricsOf(&te, &m.Shuffle)
	}
	c.out.events = append(c.out.events, te)
}

// keepEndedStages bounds the ended stages the status tracker keeps until
// it reports them (when nothing polls it).
const keepEndedStages = 1000

// stageEnded marks a stage ended (succeeded: every partition's output is
// in) and forgets the oldest ended ones beyond keepEndedStages.
func (c *driverCore) stageEnded(stage int, succeeded bool) {
	if st := c.stages[stage]; st != nil {
		st.Ended, st.Succeeded = true, succeeded
	}
	c.ended = append(c.ended, stage)
	if len(c.ended) > keepEndedStages {
		delete(c.stages, c.ended[0])
		c.ended = c.ended[1:]
	}
}

// activeStages is the status tracker behind the progress bar: running
// stages, and each ended stage once, with its final counts (however many
// end between two polls: a stage that vanished unreported would be
// printed with stale counts).
func (c *driverCore) activeStages() []progress.StageStatus {
	out := make([]progress.StageStatus, 0, len(c.stages))
	for _, st := range c.stages {
		out = append(out, *st)
	}
	for _, id := range c.ended {
		delete(c.stages, id)
	}
	c.ended = c.ended[:0]
	sort.Slice(out, func(i, j int) bool { return out[i].StageID < out[j].StageID })
	return out
}

// explain says why a task of an active stage is not running.
func (c *driverCore) explain(stageID, index int, now time.Time) (scheduler.Explanation, error) {
	for _, js := range c.jobs {
		if js.stage == stageID {
			if index < 0 || index >= len(js.job.Tasks) {
				return scheduler.Explanation{}, fmt.Errorf("framework: stage %d has no task %d", stageID, index)
			}
			return c.sched.Explain(js.setID, index, now), nil
		}
	}
	return scheduler.Explanation{}, fmt.Errorf("framework: stage %d is not active", stageID)
}

// slotsBusy reports whether every executor's free cores are too few for a
// task (a pending task then merely waits for a running one to end) and
// how many tasks the executors run at once.
func (c *driverCore) slotsBusy() (busy bool, slots int) {
	cpus := max(c.taskCPUs, 1)
	busy = len(c.execs) > 0
	for _, e := range c.execs {
		slots += e.cores / cpus
		if e.cores-e.busy >= cpus {
			busy = false
		}
	}
	return busy, slots
}

// firstLine is a message's first line, for a log line that stands for it
// (a dead executor's report carries its stderr below).
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " (…)"
	}
	return s
}

// shuffleMetricsOf fills te's shuffle figures from the executor's.
func shuffleMetricsOf(te *event.TaskEnd, m *task.ShuffleMetrics) {
	te.ShuffleWriteBytes = m.BytesWritten
	te.ShuffleReadBytes = m.ReadBytes()
	te.ShuffleWrite = event.ShuffleWriteMetrics{Records: m.RecordsWritten, Spills: m.Spills,
		SpillBytes: m.SpillBytes, WriteTime: m.WriteTime}
	te.ShuffleRead = event.ShuffleReadMetrics{LocalBlocks: m.LocalBlocks, RemoteBlocks: m.RemoteBlocks,
		LocalBytes: m.LocalBytes, RemoteBytes: m.RemoteBytes, FetchWait: m.FetchWait}
}
