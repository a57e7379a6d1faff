package coarseexec

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/proto/flintpb"
)

func testClient() *client {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return newClient(Config{ExecutorID: "e1", Logger: l}, nil)
}

func upd(task uint64, st flintpb.TaskState, id byte) *flintpb.StatusUpdate {
	return &flintpb.StatusUpdate{TaskId: task, ExecutorId: "e1", State: st, Uuid: bytes.Repeat([]byte{id}, 16)}
}

// ids renders updates as "task:state-initial" for compact comparisons.
func ids(us []*flintpb.StatusUpdate) []string {
	var out []string
	for _, u := range us {
		out = append(out, string(rune('0'+u.TaskId))+":"+u.State.String()[5:6])
	}
	return out
}

const (
	running  = flintpb.TaskState_TASK_RUNNING
	finished = flintpb.TaskState_TASK_FINISHED
	failed   = flintpb.TaskState_TASK_FAILED
)

func TestDrainKeepsReportOrder(t *testing.T) {
	c := testClient()
	c.begin(true)
	c.report(upd(1, running, 1))
	c.report(upd(2, running, 2))
	c.report(upd(1, finished, 3))
	c.report(upd(3, running, 4))
	us, ctrl, chunk, batching, done := c.drain(nil)
	if !batching || done || chunk != nil || len(ctrl) != 0 {
		t.Fatalf("drain: batching %v done %v chunk %v ctrl %v", batching, done, chunk, ctrl)
	}
	// Task 1 finished before its RUNNING update was sent: the terminal
	// update supersedes it, in the queue and among the unacked.
	if got, want := ids(us), []string{"2:R", "1:F", "3:R"}; !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
	if n := c.pendingUpdates(); n != 3 {
		t.Fatalf("%d unacked, want 3", n)
	}
	// Task 2's RUNNING update was already drained (sent): it stays.
	c.report(upd(2, failed, 5))
	us, _, _, _, _ = c.drain(us[:0])
	if got, want := ids(us), []string{"2:F"}; !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
	if n := c.pendingUpdates(); n != 4 {
		t.Fatalf("%d unacked, want 4", n)
	}
	c.acked(upd(0, 0, 2).Uuid, upd(0, 0, 3).Uuid, upd(0, 0, 3).Uuid, upd(0, 0, 5).Uuid, []byte{1})
	if n := c.pendingUpdates(); n != 1 {
		t.Fatalf("%d unacked after acks, want 1", n)
	}
}

// A RUNNING update is superseded only by its own task's terminal update,
// and only while it waits in the queue of a live session.
func TestSupersedeRunningOnlyItsOwnQueuedUpdate(t *testing.T) {
	c := testClient()
	c.report(upd(1, running, 1)) // no session: kept for the next one
	c.report(upd(1, finished, 2))
	if n := c.pendingUpdates(); n != 2 {
		t.Fatalf("%d unacked without a session, want 2 (resent when one begins)", n)
	}
	c.begin(true)
	us, _, _, _, _ := c.drain(nil)
	if got, want := ids(us), []string{"1:R", "1:F"}; !slices.Equal(got, want) {
		t.Fatalf("resent %v, want %v", got, want)
	}
	c.report(upd(2, running, 3))
	c.report(upd(3, running, 4))
	c.report(upd(3, failed, 5))
	c.report(upd(4, finished, 6)) // no RUNNING queued at all
	us, _, _, _, _ = c.drain(us[:0])
	if got, want := ids(us), []string{"2:R", "3:F", "4:F"}; !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
}

// A batch sent just before the stream broke and only partly acked is
// resent, unacked updates only, oldest first, on the next session.
func TestBatchSplitAcrossReconnect(t *testing.T) {
	c := testClient()
	c.begin(true)
	for i := byte(1); i <= 4; i++ {
		c.report(upd(uint64(i), running, i))
	}
	us, _, _, _, _ := c.drain(nil)
	if len(us) != 4 {
		t.Fatalf("drained %d, want 4", len(us))
	}
	c.acked(upd(0, 0, 1).Uuid, upd(0, 0, 3).Uuid) // part of the batch acked, then the stream breaks
	c.end()
	// While disconnected tasks go on reporting; nothing is queued.
	c.report(upd(2, finished, 12))
	c.report(upd(5, running, 15))
	c.report(upd(5, finished, 16))
	us, _, _, _, _ = c.drain(nil)
	if len(us) != 0 {
		t.Fatalf("queued %v while disconnected", ids(us))
	}
	c.begin(false) // the new session's driver does not batch
	us, _, _, batching, _ := c.drain(nil)
	if batching {
		t.Fatal("batching reported for a driver without it")
	}
	if got, want := ids(us), []string{"2:R", "4:R", "2:F", "5:R", "5:F"}; !slices.Equal(got, want) {
		t.Fatalf("resent %v, want %v", got, want)
	}
	// Acks lost again: a third session resends the same.
	c.end()
	c.begin(true)
	us, _, _, _, _ = c.drain(nil)
	if got, want := ids(us), []string{"2:R", "4:R", "2:F", "5:R", "5:F"}; !slices.Equal(got, want) {
		t.Fatalf("resent %v, want %v", got, want)
	}
	c.acked(upd(0, 0, 2).Uuid, upd(0, 0, 4).Uuid, upd(0, 0, 12).Uuid, upd(0, 0, 15).Uuid, upd(0, 0, 16).Uuid)
	if n := c.pendingUpdates(); n != 0 {
		t.Fatalf("%d unacked, want 0", n)
	}
}

// Result chunks wait until no update or control message is queued, and a
// closing session ends once those are sent.
func TestDrainChunksAfterUpdates(t *testing.T) {
	c := testClient()
	c.begin(true)
	chunk := &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{BlockId: "b"}}}
	c.enqueue(chunk, true)
	c.report(upd(1, finished, 1))
	us, _, got, _, _ := c.drain(nil)
	if len(us) != 1 || got != nil {
		t.Fatalf("first drain: %d updates, chunk %v", len(us), got)
	}
	us, _, got, _, done := c.drain(nil)
	if len(us) != 0 || got != chunk || done {
		t.Fatalf("second drain: %d updates, chunk %v, done %v", len(us), got, done)
	}
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	if _, _, _, _, done := c.drain(nil); !done {
		t.Fatal("closing session not done")
	}
}
