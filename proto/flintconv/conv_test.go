package flintconv

import (
	"reflect"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func TestTaskDescriptionRoundTrip(t *testing.T) {
	d := &backend.TaskDescription{TaskID: 7, Attempt: 2, Index: 3, TaskSetID: "ts", JobID: 9, StageID: 4,
		Function: "f", Codec: "gob", Input: []byte("in"), CPUs: 2, ExecutorID: "e1", Speculative: true,
		Files:      []*backend.File{{Name: "a.txt", URI: "http://h/a.txt", SHA256: "ab", Size: 3, Executable: true, Extract: true, Served: true}},
		FilesToken: "tok"}
	ws := TaskDescriptions([]*backend.TaskDescription{d, d})
	if len(ws) != 2 || ws[0] == ws[1] {
		t.Fatalf("got %d descriptions (distinct: %t)", len(ws), len(ws) == 2 && ws[0] != ws[1])
	}
	w := ws[0]
	if w.TaskId != 7 || w.Attempt != 2 || w.Index != 3 || w.TaskSetId != "ts" || w.JobId != 9 || w.StageId != 4 ||
		w.Function != "f" || w.Codec != "gob" || string(w.Input) != "in" || w.Cpus != 2 || w.ExecutorId != "e1" || !w.Speculative {
		t.Fatalf("wire form %+v", w)
	}
	if len(w.Files) != 1 || w.FilesToken != "tok" || *w.Files[0] != (flintpb.FileRef{Name: "a.txt", Uri: "http://h/a.txt", Sha256: "ab", Size_: 3,
		Executable: true, Extract: true, Served: true}) {
		t.Fatalf("files %v, token %q", w.Files, w.FilesToken)
	}
}

func TestFailureKinds(t *testing.T) {
	cases := []struct {
		wire flintpb.FailureKind
		want scheduler.FailureKind
	}{
		{flintpb.FailureKind_EXCEPTION, scheduler.Exception},
		{flintpb.FailureKind_PANIC, scheduler.Panic},
		{flintpb.FailureKind_RESULT_TOO_LARGE, scheduler.ResultTooLarge},
		{flintpb.FailureKind_DECODE_ERROR, scheduler.DecodeError},
		{flintpb.FailureKind_UNKNOWN_FUNCTION, scheduler.UnknownFunction},
		{flintpb.FailureKind_KILLED, scheduler.Killed},
		{flintpb.FailureKind_EXECUTOR_LOST, scheduler.ExecutorLost},
		{flintpb.FailureKind_RESULT_LOST, scheduler.ResultLost},
		{flintpb.FailureKind_LAUNCH_FAILED, scheduler.LaunchFailed},
		{flintpb.FailureKind_FETCH_FAILED, scheduler.FetchFailed},
	}
	for _, c := range cases {
		f := Failure(&flintpb.TaskFailure{Kind: c.wire, Message: "m", Stack: "s"}, scheduler.Failed)
		if f.Kind != c.want || f.Message != "m" || f.Stack != "s" {
			t.Errorf("%s: got %+v, want kind %s", c.wire, f, c.want)
		}
	}
	// A kind the wire leaves unspecified is the state's.
	for st, want := range map[scheduler.State]scheduler.FailureKind{
		scheduler.Failed: scheduler.Exception, scheduler.KilledState: scheduler.Killed, scheduler.Lost: scheduler.ExecutorLost,
	} {
		if f := Failure(&flintpb.TaskFailure{Message: "m"}, st); f.Kind != want {
			t.Errorf("unspecified kind in %s: got %s, want %s", st, f.Kind, want)
		}
	}
	if Failure(nil, scheduler.Failed) != nil {
		t.Error("a nil wire failure became a failure")
	}
}

func TestStatusUpdate(t *testing.T) {
	w := &flintpb.StatusUpdate{TaskId: 5, Attempt: 1, ExecutorId: "e", State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("r")}},
		Metrics: &flintpb.TaskMetrics{RunTimeNanos: 10, DecodeNanos: 2, EncodeNanos: 3, ResultSize: 1, InputSize: 4,
			ShuffleRecordsWritten: 5, ShuffleBytesWritten: 6, ShuffleSpills: 7, ShuffleSpillBytes: 8, ShuffleWriteNanos: 9,
			ShuffleLocalBlocks: 11, ShuffleRemoteBlocks: 12, ShuffleLocalBytes: 13, ShuffleRemoteBytes: 14, ShuffleFetchWaitNanos: 15}}
	want := &backend.StatusUpdate{TaskID: 5, Attempt: 1, ExecutorID: "e", State: scheduler.Finished, Result: []byte("r"),
		Metrics: backend.TaskMetrics{RunTime: 10, DecodeTime: 2, EncodeTime: 3, ResultSize: 1, InputSize: 4,
			Shuffle: task.ShuffleMetrics{RecordsWritten: 5, BytesWritten: 6, Spills: 7, SpillBytes: 8, WriteTime: 9 * time.Nanosecond,
				LocalBlocks: 11, RemoteBlocks: 12, LocalBytes: 13, RemoteBytes: 14, FetchWait: 15}}}
	if got := StatusUpdate(w); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	w = &flintpb.StatusUpdate{TaskId: 6, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Indirect{Indirect: &flintpb.IndirectResult{BlockId: "b", Size_: 3, ExecutorId: "e", Sha256: "ab"}}}}
	if got := StatusUpdate(w); got.Result != nil || !reflect.DeepEqual(got.Indirect, &backend.IndirectResult{BlockID: "b", Size: 3, ExecutorID: "e", SHA256: "ab"}) {
		t.Fatalf("indirect: got %+v", got)
	}
	for wire, st := range map[flintpb.TaskState]scheduler.State{flintpb.TaskState_TASK_RUNNING: scheduler.Running,
		flintpb.TaskState_TASK_FAILED: scheduler.Failed, flintpb.TaskState_TASK_KILLED: scheduler.KilledState, flintpb.TaskState_TASK_LOST: scheduler.Lost} {
		if got := StatusUpdate(&flintpb.StatusUpdate{State: wire}).State; got != st {
			t.Errorf("%s: got %s", wire, got)
		}
	}
	// An unspecified state is none of the driver's: it is ignored there.
	switch got := StatusUpdate(&flintpb.StatusUpdate{}).State; got {
	case scheduler.Running, scheduler.Finished, scheduler.Failed, scheduler.KilledState, scheduler.Lost:
		t.Fatalf("an unspecified state became %s", got)
	}
}

// A FETCH_FAILED failure reaches the driver as scheduler.FetchFailed with
// the block it names.
func TestFetchFailedStatusUpdate(t *testing.T) {
	w := &flintpb.StatusUpdate{TaskId: 8, ExecutorId: "e2", State: flintpb.TaskState_TASK_FAILED,
		Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_FETCH_FAILED, Message: "m",
			FetchFailed: &flintpb.FetchFailed{ShuffleId: 3, MapIndex: -1, ReduceIndex: 2, ExecutorId: "e1", Host: "h1",
				Address: "https://h1:1", Message: "gone"}}}
	got := StatusUpdate(w)
	if got.State != scheduler.Failed || got.Failure == nil || got.Failure.Kind != scheduler.FetchFailed || got.Failure.Message != "m" {
		t.Fatalf("got %+v, want a Failed update with a FetchFailed failure", got)
	}
	want := &mapoutput.FetchFailure{ShuffleID: 3, MapIndex: -1, ReduceIndex: 2, ExecutorID: "e1", Host: "h1",
		Address: "https://h1:1", Message: "gone"}
	if !reflect.DeepEqual(got.FetchFailed, want) {
		t.Errorf("fetch failure %+v, want %+v", got.FetchFailed, want)
	}
	// another kind carries no block, even if the wire sets one
	w.Failure.Kind = flintpb.FailureKind_EXCEPTION
	if got := StatusUpdate(w); got.FetchFailed != nil {
		t.Errorf("an EXCEPTION failure carries fetch failure %+v", got.FetchFailed)
	}
}
