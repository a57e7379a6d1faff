package coarse

import (
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/testkit/backendharness"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// noAddrConn is a connection to a master that gave no address (a
// simulated one): no sandbox can be read through it.
type noAddrConn struct{ mesosbackend.Conn }

func (noAddrConn) Master() mesos.MasterInfo { return mesos.MasterInfo{ID: "m1"} }

// An executor that dies under a master with no address is reported lost
// in the same round of the owner as the Mesos status that ended it — no
// goroutine writes the report, so a simulation stepping the backend sees
// the loss on the Flush after the status, every time — and the report is
// Mesos' status alone.
func TestDeathReportWithoutMasterAddressIsInline(t *testing.T) {
	r := newRig(t)
	r.up()
	var got []backendharness.Event
	r.b.call(func() {
		r.b.conn = noAddrConn{r.b.conn}
		handler{r.b}.Update(mesosStatus("0", mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, "Command exited with status 3"))
		got = r.h.Driver.Events() // still on the owner: nothing else ran meanwhile
	})
	if len(got) != 1 || got[0].String() != "lost 0" || !strings.Contains(got[0].Reason, "Command exited with status 3") ||
		strings.Contains(got[0].Reason, "stderr") {
		t.Fatalf("driver calls %v in the status' round, want executor 0 lost with Mesos' status alone", got)
	}
	r.settle()
	r.streams.Script()
	if ev := r.h.Driver.Events(); len(ev) != 0 {
		t.Fatalf("driver calls %v after the round, want none (reported once)", ev)
	}
}

// An update its stream delivers after Mesos reported the executor's end
// (sent before the executor died, it came the other way round the
// network) does not reach the driver: the executor was reported lost with
// its tasks, which the driver has resubmitted; the late result would end
// an attempt twice and, for a map task, register an output of a lost
// executor (found by the simulation, seed 30 with the coarse backend).
func TestUpdateAfterExecutorLossIsDropped(t *testing.T) {
	r := newRig(t)
	r.up()
	r.b.Apply(launch(7, 8))
	r.expect(nil, []string{"launch 0 [7 8]"}, nil)
	r.streams.Events().StatusUpdate(&flintpb.StatusUpdate{TaskId: 7, Attempt: 1, ExecutorId: "0", State: flintpb.TaskState_TASK_FINISHED})
	r.expect(nil, nil, []string{"status 7 TASK_FINISHED"})
	r.h.Handler().Update(mesosStatus("0", mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, "Command exited with status 3"))
	r.settle()
	r.streams.Script()
	r.h.Conn.Script()
	if got := r.h.Driver.Script(); !slices.Equal(got, []string{"lost 0"}) {
		t.Fatalf("driver calls %q, want executor 0 lost", got)
	}
	r.streams.Events().StatusUpdate(&flintpb.StatusUpdate{TaskId: 8, Attempt: 1, ExecutorId: "0", State: flintpb.TaskState_TASK_FINISHED})
	r.streams.Events().ExecutorLost("0", "stream broke")
	r.expect(nil, nil, nil)
}
