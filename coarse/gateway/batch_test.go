package gateway_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// registerBatching registers a raw executor that announces batching and
// checks the driver announces it too.
func registerBatching(t *testing.T, raw *rawClient, id string) {
	t.Helper()
	raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Register{Register: &flintpb.RegisterExecutor{
		ExecutorId: id, Host: "raw", Cores: 2, Token: tokenFor(id), Batching: true}}})
	m, err := raw.stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if r := m.GetRegistered(); r == nil || !r.Batching {
		t.Fatalf("first message %v, want RegisteredExecutor with batching", m)
	}
}

func uuidOf(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }

// launchedIDs reads launches (single or batched) until n tasks arrived and
// returns their ids in arrival order, with how many messages carried them.
func launchedIDs(t *testing.T, raw *rawClient, n int) (ids []uint64, msgs int) {
	t.Helper()
	for len(ids) < n {
		m, err := raw.stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch x := m.Message.(type) {
		case *flintpb.DriverMessage_LaunchTask:
			ids, msgs = append(ids, x.LaunchTask.TaskId), msgs+1
		case *flintpb.DriverMessage_LaunchTasks:
			for _, td := range x.LaunchTasks.Tasks {
				ids = append(ids, td.TaskId)
			}
			msgs++
		default:
			t.Fatalf("unexpected %T", m.Message)
		}
	}
	return ids, msgs
}

func TestLaunchTasksBatchedInOrder(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	raw := dialRaw(t, gw.Addr().String())
	registerBatching(t, raw, "e1")
	rec.waitRegistered(t)
	tds := []*flintpb.TaskDescription{{TaskId: 3}, {TaskId: 1}, {TaskId: 2}}
	if err := gw.LaunchTasks("e1", tds); err != nil {
		t.Fatal(err)
	}
	if err := gw.Launch("e1", &flintpb.TaskDescription{TaskId: 9}); err != nil {
		t.Fatal(err)
	}
	ids, msgs := launchedIDs(t, raw, 4)
	if !slices.Equal(ids, []uint64{3, 1, 2, 9}) {
		t.Fatalf("launched %v, want [3 1 2 9]", ids)
	}
	if msgs > 2 {
		t.Fatalf("4 launches took %d messages, want one batch (plus at most the later single launch)", msgs)
	}
	if err := gw.LaunchTasks("nobody", tds); err == nil {
		t.Fatal("LaunchTasks to an unknown executor succeeded")
	}
	if err := gw.LaunchTasks("e1", []*flintpb.TaskDescription{{TaskId: 1}, nil}); err == nil {
		t.Fatal("LaunchTasks with a nil task succeeded")
	}
}

// An executor that does not announce batching (an older one) gets one
// LaunchTask per task and one StatusUpdateAck per update.
func TestNoBatchingForOldExecutors(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	raw := dialRaw(t, gw.Addr().String())
	if _, err := raw.register("old", tokenFor("old")); err != nil {
		t.Fatal(err)
	}
	rec.waitRegistered(t)
	if err := gw.LaunchTasks("old", []*flintpb.TaskDescription{{TaskId: 1}, {TaskId: 2}, {TaskId: 3}}); err != nil {
		t.Fatal(err)
	}
	ids, msgs := launchedIDs(t, raw, 3)
	if !slices.Equal(ids, []uint64{1, 2, 3}) || msgs != 3 {
		t.Fatalf("launched %v in %d messages, want [1 2 3] in 3", ids, msgs)
	}
	for i := byte(1); i <= 3; i++ {
		raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
			TaskId: uint64(i), ExecutorId: "old", State: flintpb.TaskState_TASK_FINISHED, Uuid: uuidOf(i)}}})
	}
	for i := byte(1); i <= 3; i++ {
		m, err := raw.stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		a := m.GetAck()
		if a == nil || a.TaskId != uint64(i) || !bytes.Equal(a.Uuid, uuidOf(i)) {
			t.Fatalf("message %d: %v, want the ack of task %d", i, m, i)
		}
	}
}

// A StatusUpdates batch is delivered in order, each uuid once, and acked
// with each uuid once.
func TestStatusUpdatesBatchDeliveredInOrderAckedOnce(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	raw := dialRaw(t, gw.Addr().String())
	registerBatching(t, raw, "e1")
	rec.waitRegistered(t)
	upd := func(task uint64, st flintpb.TaskState, id byte) *flintpb.StatusUpdate {
		return &flintpb.StatusUpdate{TaskId: task, ExecutorId: "e1", State: st, Uuid: uuidOf(id)}
	}
	batch := []*flintpb.StatusUpdate{
		upd(1, flintpb.TaskState_TASK_RUNNING, 1), upd(2, flintpb.TaskState_TASK_RUNNING, 2),
		upd(1, flintpb.TaskState_TASK_FINISHED, 3), upd(1, flintpb.TaskState_TASK_RUNNING, 1), // duplicate resent
		upd(2, flintpb.TaskState_TASK_FAILED, 4),
	}
	raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdates{StatusUpdates: &flintpb.StatusUpdates{Updates: batch}}})
	acked := map[string]int{}
	for len(acked) < 4 {
		m, err := raw.stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		switch x := m.Message.(type) {
		case *flintpb.DriverMessage_Acks:
			for _, u := range x.Acks.Uuids {
				acked[string(u)]++
			}
		case *flintpb.DriverMessage_Ack:
			acked[string(x.Ack.Uuid)]++
		default:
			t.Fatalf("unexpected %T", m.Message)
		}
	}
	for u, n := range acked {
		if n != 1 {
			t.Errorf("uuid %x acked %d times", u, n)
		}
	}
	rec.waitState(t, 2, flintpb.TaskState_TASK_FAILED)
	var got []string
	for _, u := range rec.all() {
		got = append(got, u.State.String()+":"+string(rune('0'+u.TaskId)))
	}
	want := []string{"TASK_RUNNING:1", "TASK_RUNNING:2", "TASK_FINISHED:1", "TASK_FAILED:2"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
}

// An invalid update in a batch ends the stream; the valid ones before it
// are delivered.
func TestStatusUpdatesBatchWithInvalidUpdate(t *testing.T) {
	rec := newRecorder()
	gw := startGateway(t, rec, nil)
	raw := dialRaw(t, gw.Addr().String())
	registerBatching(t, raw, "e1")
	rec.waitRegistered(t)
	raw.send(t, &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdates{StatusUpdates: &flintpb.StatusUpdates{Updates: []*flintpb.StatusUpdate{
		{TaskId: 1, ExecutorId: "e1", State: flintpb.TaskState_TASK_FINISHED, Uuid: uuidOf(1)},
		{TaskId: 2, ExecutorId: "e1", State: flintpb.TaskState_TASK_FINISHED, Uuid: []byte{1}},
	}}}})
	rec.waitState(t, 1, flintpb.TaskState_TASK_FINISHED)
	if lost := rec.waitLost(t); lost[0] != "e1" {
		t.Fatalf("lost %v", lost)
	}
}

// Batches never exceed the gRPC message limit: launches whose inputs add up
// to more than one message allows, and inline results finishing together
// that do, travel in several messages instead of breaking the stream.
func TestBatchesStayUnderTheMessageLimit(t *testing.T) {
	const limit, each, n = 4 << 20, 1 << 20, 10 // 10 MiB of inputs, then of results
	rec := newRecorder()
	gw := startGateway(t, rec, func(c *gateway.Config) {
		c.MaxMessageSize = limit
		c.Settings = &flintpb.ExecutorSettings{MaxDirectResultSize: each + 1024}
	})
	reg := testRegistry(nil)
	startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.Cores, c.MaxMessageSize = reg, n, limit })
	rec.waitRegistered(t)

	lenEntry, err := reg.Lookup("len")
	if err != nil {
		t.Fatal(err)
	}
	input, err := lenEntry.Codec().Marshal(bytes.Repeat([]byte{1}, each))
	if err != nil {
		t.Fatal(err)
	}
	var tds []*flintpb.TaskDescription
	for i := range n {
		tds = append(tds, &flintpb.TaskDescription{TaskId: uint64(i + 1), Function: "len", Codec: lenEntry.Codec().Name(), Input: input})
	}
	if err := gw.LaunchTasks("exec-1", tds); err != nil {
		t.Fatal(err)
	}
	finished := func(from uint64) map[uint64]*flintpb.StatusUpdate {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			done := map[uint64]*flintpb.StatusUpdate{}
			for _, u := range rec.all() {
				if u.TaskId >= from && u.TaskId < from+n && u.State == flintpb.TaskState_TASK_FINISHED {
					done[u.TaskId] = u
				}
			}
			if len(done) == n {
				return done
			}
			select {
			case l := <-rec.lost:
				t.Fatalf("executor lost: %v", l)
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d tasks from %d finished", len(done), n, from)
			}
		}
	}
	finished(1)

	tds = tds[:0]
	for i := range n {
		td := encodeInt(t, reg, "bytes", each)
		td.TaskId = uint64(100 + i)
		tds = append(tds, td)
	}
	if err := gw.LaunchTasks("exec-1", tds); err != nil {
		t.Fatal(err)
	}
	for id, u := range finished(100) {
		if len(u.Result.GetInline()) < each {
			t.Fatalf("task %d: inline result of %d bytes, want %d", id, len(u.Result.GetInline()), each)
		}
	}
	select {
	case l := <-rec.lost:
		t.Fatalf("executor lost: %v", l)
	default:
	}
}
