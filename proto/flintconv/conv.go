package flintconv

import (
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// TaskDescription fills w, the wire form of d.
func TaskDescription(d *backend.TaskDescription, w *flintpb.TaskDescription) {
	*w = flintpb.TaskDescription{
		TaskId: d.TaskID, Attempt: int32(d.Attempt), Index: int32(d.Index), TaskSetId: d.TaskSetID,
		JobId: d.JobID, StageId: int32(d.StageID), Function: d.Function, Codec: d.Codec, Input: d.Input,
		Cpus: int32(d.CPUs), ExecutorId: d.ExecutorID, Speculative: d.Speculative,
		Files: FileRefs(d.Files), FilesToken: d.FilesToken,
	}
}

// FileRefs is the wire form of files (nil for none).
func FileRefs(files []*backend.File) []*flintpb.FileRef {
	if len(files) == 0 {
		return nil
	}
	arr := make([]flintpb.FileRef, len(files))
	out := make([]*flintpb.FileRef, len(files))
	for i, f := range files {
		arr[i] = flintpb.FileRef{Name: f.Name, Uri: f.URI, Sha256: f.SHA256, Size_: f.Size,
			Executable: f.Executable, Extract: f.Extract, Served: f.Served}
		out[i] = &arr[i]
	}
	return out
}

// TaskDescriptions is the wire form of ds, in one backing array.
func TaskDescriptions(ds []*backend.TaskDescription) []*flintpb.TaskDescription {
	arr := make([]flintpb.TaskDescription, len(ds))
	out := make([]*flintpb.TaskDescription, len(ds))
	for i, d := range ds {
		TaskDescription(d, &arr[i])
		out[i] = &arr[i]
	}
	return out
}

var states = map[flintpb.TaskState]scheduler.State{
	flintpb.TaskState_TASK_RUNNING:  scheduler.Running,
	flintpb.TaskState_TASK_FINISHED: scheduler.Finished,
	flintpb.TaskState_TASK_FAILED:   scheduler.Failed,
	flintpb.TaskState_TASK_KILLED:   scheduler.KilledState,
	flintpb.TaskState_TASK_LOST:     scheduler.Lost,
}

var kinds = map[flintpb.FailureKind]scheduler.FailureKind{
	flintpb.FailureKind_EXCEPTION:        scheduler.Exception,
	flintpb.FailureKind_PANIC:            scheduler.Panic,
	flintpb.FailureKind_RESULT_TOO_LARGE: scheduler.ResultTooLarge,
	flintpb.FailureKind_DECODE_ERROR:     scheduler.DecodeError,
	flintpb.FailureKind_UNKNOWN_FUNCTION: scheduler.UnknownFunction,
	flintpb.FailureKind_KILLED:           scheduler.Killed,
	flintpb.FailureKind_EXECUTOR_LOST:    scheduler.ExecutorLost,
	flintpb.FailureKind_RESULT_LOST:      scheduler.ResultLost,
	flintpb.FailureKind_LAUNCH_FAILED:    scheduler.LaunchFailed,
	flintpb.FailureKind_NOT_RETRYABLE:    scheduler.NotRetryable,
	flintpb.FailureKind_DISK_FULL:        scheduler.DiskFull,
	flintpb.FailureKind_FETCH_FAILED:     scheduler.FetchFailed,
}

// State is the domain state of a wire state; ok is false for a state the
// wire leaves unspecified (or one this version does not know).
func State(s flintpb.TaskState) (st scheduler.State, ok bool) {
	st, ok = states[s]
	return st, ok
}

// Failure is the domain form of a wire failure of an attempt that ended
// in state st: a kind the wire leaves unspecified becomes st's default
// (backend.FailureKindOf). A nil f is a nil failure.
func Failure(f *flintpb.TaskFailure, st scheduler.State) *scheduler.Failure {
	if f == nil {
		return nil
	}
	k, ok := kinds[f.Kind]
	if !ok {
		k = backend.FailureKindOf(st)
	}
	return &scheduler.Failure{Kind: k, Message: f.Message, Stack: f.Stack}
}

// FetchFailure is the domain form of a wire FetchFailed; nil is nil.
func FetchFailure(f *flintpb.FetchFailed) *mapoutput.FetchFailure {
	if f == nil {
		return nil
	}
	return &mapoutput.FetchFailure{ShuffleID: int(f.ShuffleId), MapIndex: int(f.MapIndex), ReduceIndex: int(f.ReduceIndex),
		ExecutorID: f.ExecutorId, Host: f.Host, Address: f.Address, Message: f.Message}
}

// FetchFailedFailure is the wire failure of a task that could not read a shuffle block
// (Spark's FetchFailed end reason), as an executor (or the simulation's) reports it: the block
// travels with it, for the driver's DAG core to recompute its map output.
func FetchFailedFailure(ff *mapoutput.FetchFailure) *flintpb.TaskFailure {
	return &flintpb.TaskFailure{Kind: flintpb.FailureKind_FETCH_FAILED, Message: ff.Error(),
		FetchFailed: &flintpb.FetchFailed{ShuffleId: int32(ff.ShuffleID), MapIndex: int32(ff.MapIndex),
			ReduceIndex: int32(ff.ReduceIndex), ExecutorId: ff.ExecutorID, Host: ff.Host, Address: ff.Address,
			Message: ff.Message}}
}

// StatusUpdate is the domain form of a wire update. A state the wire
// leaves unspecified stays out of range (the driver ignores it with a
// warning naming it).
func StatusUpdate(w *flintpb.StatusUpdate) *backend.StatusUpdate {
	st, ok := State(w.State)
	if !ok {
		st = scheduler.State(-1 - int(w.State))
	}
	u := &backend.StatusUpdate{TaskID: w.TaskId, Attempt: int(w.Attempt), ExecutorID: w.ExecutorId, State: st,
		Failure: Failure(w.Failure, st), Metrics: Metrics(w.Metrics)}
	if u.Failure != nil && u.Failure.Kind == scheduler.FetchFailed {
		u.FetchFailed = FetchFailure(w.Failure.FetchFailed)
	}
	switch r := w.GetResult().GetValue().(type) {
	case *flintpb.TaskResult_Inline:
		u.Result = r.Inline
	case *flintpb.TaskResult_Indirect:
		if r.Indirect != nil {
			u.Indirect = &backend.IndirectResult{BlockID: r.Indirect.BlockId, Size: r.Indirect.Size_,
				ExecutorID: r.Indirect.ExecutorId, SHA256: r.Indirect.Sha256}
		}
	}
	return u
}

// Metrics is the domain form of an executor's wire metrics (zero for nil).
func Metrics(m *flintpb.TaskMetrics) backend.TaskMetrics {
	if m == nil {
		return backend.TaskMetrics{}
	}
	return backend.TaskMetrics{
		RunTime: time.Duration(m.RunTimeNanos), DecodeTime: time.Duration(m.DecodeNanos), EncodeTime: time.Duration(m.EncodeNanos),
		ResultSize: m.ResultSize, InputSize: m.InputSize, InputRecords: m.InputRecords,
		Shuffle: task.ShuffleMetrics{
			RecordsWritten: m.ShuffleRecordsWritten, BytesWritten: m.ShuffleBytesWritten, Spills: m.ShuffleSpills,
			SpillBytes: m.ShuffleSpillBytes, WriteTime: time.Duration(m.ShuffleWriteNanos),
			LocalBlocks: m.ShuffleLocalBlocks, RemoteBlocks: m.ShuffleRemoteBlocks,
			LocalBytes: m.ShuffleLocalBytes, RemoteBytes: m.ShuffleRemoteBytes, FetchWait: time.Duration(m.ShuffleFetchWaitNanos),
		},
	}
}
