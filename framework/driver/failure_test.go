package driver

import (
	"testing"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// A Failed update with the FetchFailed end reason hands its block to the
// DAG core; one naming no block (or in another state) is an Exception, so
// that no stage waits on a fetch failure the DAG core never heard of.
func TestFailureOfAFetchFailedUpdate(t *testing.T) {
	ff := &mapoutput.FetchFailure{ShuffleID: 1, MapIndex: 0, ReduceIndex: 2, ExecutorID: "e1", Message: "gone"}
	u := &backend.StatusUpdate{TaskID: 4, State: scheduler.Failed,
		Failure: &scheduler.Failure{Kind: scheduler.FetchFailed, Message: "m"}, FetchFailed: ff}
	if f, got := failureOf(u); f.Kind != scheduler.FetchFailed || f.Message != "m" || got != ff {
		t.Errorf("failureOf = %+v, %v; want FetchFailed \"m\" with its block", f, got)
	}
	for _, bad := range []*backend.StatusUpdate{
		{TaskID: 4, State: scheduler.Failed, Failure: &scheduler.Failure{Kind: scheduler.FetchFailed, Message: "m"}},
		{TaskID: 4, State: scheduler.Lost, Failure: &scheduler.Failure{Kind: scheduler.FetchFailed, Message: "m"}, FetchFailed: ff},
	} {
		if f, got := failureOf(bad); f.Kind != scheduler.Exception || got != nil {
			t.Errorf("failureOf(%s, block %v) = %+v, %v; want an Exception without a block", bad.State, bad.FetchFailed, f, got)
		}
	}
	if f, got := failureOf(&backend.StatusUpdate{TaskID: 4, State: scheduler.Failed,
		Failure: &scheduler.Failure{Kind: scheduler.Exception, Message: "x"}, FetchFailed: ff}); f.Kind != scheduler.Exception || got != nil {
		t.Errorf("an Exception update = %+v, %v; want no block", f, got)
	}
}
