package uistore

import (
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

func ms(d time.Duration) int64 { return d.Milliseconds() }

// task is a stage's record of one attempt: TaskData without its pointer
// fields, which data fills in (no allocation per event).
type task struct {
	TaskData
	dur     int64
	ended   bool
	metrics TaskMetrics
}

// data returns the attempt in the API's shape; a running one's duration
// runs to now.
func (t *task) data(now time.Time) TaskData {
	d := t.TaskData
	dur := t.dur
	if !t.ended {
		dur = now.Sub(t.LaunchTime.Time).Milliseconds()
	} else {
		m := t.metrics
		d.TaskMetrics = &m
	}
	d.Duration = &dur
	return d
}

func (s *Store) onTaskStart(e event.TaskStart) {
	k := StageKey{e.StageID, e.StageAttempt}
	st := s.stages[k]
	if st == nil {
		return
	}
	if _, dup := st.index[e.TaskID]; dup {
		return
	}
	if len(st.list) >= s.lim.Tasks+s.lim.Tasks/8 {
		trimTasks(st, s.lim.Tasks)
	}
	st.index[e.TaskID] = int32(len(st.list))
	st.list = append(st.list, task{TaskData: TaskData{TaskID: e.TaskID, Index: e.Index, Attempt: e.Attempt, PartitionID: e.Index,
		LaunchTime: Date{e.Time}, ExecutorID: e.ExecutorID, Host: e.Host, Status: TaskRunning, TaskLocality: e.Locality, Speculative: e.Speculative}})
	st.NumActiveTasks++
	if !st.started {
		st.started, st.FirstTaskLaunchedTime = true, NewDate(e.Time)
	}
	if j := s.jobs[st.JobID]; j != nil {
		j.NumActiveTasks++
	}
	if x := s.execs[e.ExecutorID]; x != nil {
		x.ActiveTasks++
	}
}

func (s *Store) onTaskEnd(e event.TaskEnd) {
	st := s.stages[StageKey{e.StageID, e.StageAttempt}]
	if st == nil {
		return
	}
	i, ok := st.index[e.TaskID]
	if !ok || st.list[i].ended {
		return
	}
	t := &st.list[i]
	d := ms(e.Time.Sub(t.LaunchTime.Time))
	t.dur, t.ended = d, true
	t.ErrorMessage = e.Reason
	if e.Stack != "" { // as Spark's errorMessage carries the exception's stack trace
		t.ErrorMessage += "\n" + e.Stack
	}
	t.metrics = TaskMetrics{ExecutorDeserializeTime: ms(e.DecodeTime), ExecutorRunTime: ms(e.RunTime), ResultSize: e.ResultSize,
		ResultSerializationTime: ms(e.EncodeTime), InputMetrics: InputMetrics{BytesRead: e.InputSize, RecordsRead: e.InputRecords},
		ShuffleReadMetrics: shuffleReadOf(e), ShuffleWriteMetrics: ShuffleWriteMetrics{BytesWritten: e.ShuffleWriteBytes,
			WriteTime: e.ShuffleWrite.WriteTime.Nanoseconds(), RecordsWritten: e.ShuffleWrite.Records},
		DiskBytesSpilled: e.ShuffleWrite.SpillBytes}
	t.Status = taskStatus(e.State)
	j := s.jobs[st.JobID]
	x := s.execs[t.ExecutorID]
	es := st.byExec[t.ExecutorID]
	if es == nil {
		es = &ExecutorStageSummary{}
		st.byExec[t.ExecutorID] = es
	}
	st.NumActiveTasks--
	if j != nil {
		j.NumActiveTasks--
	}
	if x != nil {
		x.ActiveTasks--
		x.TotalTasks++
		x.TotalDuration += d
		x.TotalInputBytes += e.InputSize
		x.TotalShuffleRead += e.ShuffleReadBytes
		x.TotalShuffleWrite += e.ShuffleWriteBytes
	}
	es.TaskTime += d
	es.InputBytes += e.InputSize
	es.ShuffleRead += e.ShuffleReadBytes
	es.ShuffleWrite += e.ShuffleWriteBytes
	st.ExecutorRunTime += ms(e.RunTime)
	st.ExecutorDeserialize += ms(e.DecodeTime)
	st.ResultSerialization += ms(e.EncodeTime)
	st.ResultSize += e.ResultSize
	st.InputBytes += e.InputSize
	st.InputRecords += e.InputRecords
	st.ShuffleReadBytes += e.ShuffleReadBytes
	st.ShuffleWriteBytes += e.ShuffleWriteBytes
	switch t.Status {
	case TaskSuccess:
		st.NumCompleteTasks++
		es.SucceededTasks++
		newIndex := st.done.add(t.Index)
		if newIndex {
			st.NumCompletedIndices++
		}
		if j != nil {
			j.NumCompletedTasks++
			if newIndex {
				j.NumCompletedIndices++
			}
		}
		if x != nil {
			x.CompletedTasks++
		}
	case TaskKilled:
		st.NumKilledTasks++
		es.KilledTasks++
		st.KilledTasksSummary[e.Reason]++
		if j != nil {
			j.NumKilledTasks++
			j.KilledTasksSummary[e.Reason]++
		}
	default:
		st.NumFailedTasks++
		es.FailedTasks++
		if j != nil {
			j.NumFailedTasks++
		}
		if x != nil {
			x.FailedTasks++
		}
	}
}

// taskStatus maps a TaskEnd state to Spark's task status: a lost task is
// a failed one (Spark's ExecutorLostFailure).
func taskStatus(state string) string {
	switch state {
	case "FINISHED":
		return TaskSuccess
	case "KILLED":
		return TaskKilled
	default:
		return TaskFailed
	}
}

func (s *Store) onExecutorAdded(e event.ExecutorAdded) {
	if x := s.execs[e.ExecutorID]; x != nil {
		x.IsActive, x.RemoveTime, x.RemoveReason = true, nil, ""
		return
	}
	s.execs[e.ExecutorID] = &ExecutorSummary{ID: e.ExecutorID, HostPort: e.Host, IsActive: true, TotalCores: e.Cores,
		MaxTasks: e.Cores, AddTime: Date{e.Time}, ExecutorLogs: map[string]string{}}
	s.execOrder = append(s.execOrder, e.ExecutorID)
}

// trimTasks forgets a stage's oldest ended task attempts until it holds at
// most limit (running ones are kept); amortised, it runs once per limit/8
// launches.
func trimTasks(st *stage, limit int) {
	excess := len(st.list) - limit
	kept := st.list[:0]
	for _, t := range st.list {
		if excess > 0 && t.ended {
			excess--
			continue
		}
		kept = append(kept, t)
	}
	clear(st.list[len(kept):])
	st.list = kept
	clear(st.index)
	for i := range st.list {
		st.index[st.list[i].TaskID] = int32(i)
	}
}

// shuffleReadOf is e's read figures in Spark's shape; bytes not known to be
// local count as remote.
func shuffleReadOf(e event.TaskEnd) ShuffleReadMetrics {
	r := e.ShuffleRead
	return ShuffleReadMetrics{RemoteBlocksFetched: r.RemoteBlocks, LocalBlocksFetched: r.LocalBlocks, FetchWaitTime: ms(r.FetchWait),
		RemoteBytesRead: e.ShuffleReadBytes - r.LocalBytes, LocalBytesRead: r.LocalBytes}
}
