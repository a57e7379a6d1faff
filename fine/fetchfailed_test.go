package fine

import (
	"reflect"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// A fine executor's TASK_FAILED whose data is the runtime's FETCH_FAILED
// update reaches the driver as a Failed update with the FetchFailed end
// reason and the block it names.
func TestTranslateCarriesAFetchFailure(t *testing.T) {
	ex := flintpb.StatusUpdate{TaskId: 7, ExecutorId: "exec-a", State: flintpb.TaskState_TASK_FAILED,
		Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_FETCH_FAILED, Message: "fetch failed",
			FetchFailed: &flintpb.FetchFailed{ShuffleId: 2, MapIndex: 1, ReduceIndex: 0, ExecutorId: "exec-b",
				Host: "h2", Address: "https://h2:7337", Message: "connection refused"}}}
	data, err := ex.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	msg := "FETCH_FAILED: fetch failed"
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t7"}, State: mesos.TASK_FAILED.Enum(), Message: &msg,
		Source: mesos.SOURCE_EXECUTOR.Enum(), Data: data}
	u := translate(&mtask{flintID: 7, execID: "exec-a"}, st)
	if u.State != scheduler.Failed || u.Failure == nil || u.Failure.Kind != scheduler.FetchFailed || u.Failure.Message != "fetch failed" {
		t.Fatalf("update %+v (failure %+v), want Failed with the FetchFailed end reason", u, u.Failure)
	}
	want := &mapoutput.FetchFailure{ShuffleID: 2, MapIndex: 1, ReduceIndex: 0, ExecutorID: "exec-b", Host: "h2",
		Address: "https://h2:7337", Message: "connection refused"}
	if !reflect.DeepEqual(u.FetchFailed, want) {
		t.Errorf("fetch failure %+v, want %+v", u.FetchFailed, want)
	}
}

// The master's reconciliation answer for a task whose FINISHED update a
// partition held carries no result: the attempt is lost (retried, not
// counted as the task's failure), not failed as a result lost; an agent's
// FINISHED without data is still a failure.
func TestTranslateReconciledFinishedIsLost(t *testing.T) {
	reason, msg := mesos.REASON_RECONCILIATION, "Reconciliation: Latest task state"
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t9"}, State: mesos.TASK_FINISHED.Enum(), Message: &msg,
		Source: mesos.SOURCE_MASTER.Enum(), Reason: &reason}
	u := translate(&mtask{flintID: 9, execID: "exec-a"}, st)
	if u.State != scheduler.Lost || u.Failure == nil || u.Failure.Kind != scheduler.ExecutorLost || u.Result != nil {
		t.Fatalf("update %+v (failure %+v), want Lost with ExecutorLost and no result", u, u.Failure)
	}
	st.Source, st.Reason = mesos.SOURCE_AGENT.Enum(), nil
	u = translate(&mtask{flintID: 9, execID: "exec-a"}, st)
	if u.State != scheduler.Failed || u.Failure == nil || u.Failure.Kind != scheduler.ResultLost {
		t.Fatalf("agent's FINISHED without data: update %+v (failure %+v), want Failed with ResultLost", u, u.Failure)
	}
}
