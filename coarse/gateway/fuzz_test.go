package gateway

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/proto/flintpb"
)

// FuzzHandleExecutorMessage feeds arbitrary bytes, as they would arrive on
// an executor's stream, through the codec into a registered connection's
// handler, with a fetch pending so ResultBlock chunks have somewhere to go.
// Nothing may panic, a fetch completes only with exactly its announced
// bytes, and a rejected message never delivers an event.
func FuzzHandleExecutorMessage(f *testing.F) {
	seeds := []*flintpb.ExecutorMessage{
		{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
			TaskId: 1, ExecutorId: "fuzz", State: flintpb.TaskState_TASK_FINISHED, Uuid: bytes.Repeat([]byte{1}, 16),
			Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte("x")}}}}},
		{Message: &flintpb.ExecutorMessage_Heartbeat{Heartbeat: &flintpb.Heartbeat{ExecutorId: "fuzz", RunningTaskIds: []uint64{1, 2}}}},
		{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{BlockId: "b", RequestId: 1, Data: []byte("abc"), TotalSize: 3, Last: true}}},
		{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{BlockId: "b", RequestId: 1, Data: []byte("ab"), TotalSize: 1 << 40}}},
		{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{BlockId: "b", RequestId: 1, Error: "not found", Last: true}}},
		{Message: &flintpb.ExecutorMessage_Register{Register: &flintpb.RegisterExecutor{ExecutorId: "again", Cores: 1, Token: "s"}}},
		{},
	}
	for _, m := range seeds {
		data, err := flintpb.Codec{}.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x12, 0xff, 0xff, 0xff, 0xff, 0x0f})

	var events atomic.Int64
	g, err := New(Config{Secret: "s", Events: EventFuncs{
		Update: func(*flintpb.StatusUpdate) { events.Add(1) },
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = g.Close() })
	var n atomic.Int64

	f.Fuzz(func(t *testing.T, data []byte) {
		c := newConn(g, "fuzz")
		id := fmt.Sprintf("fuzz-%d", n.Add(1))
		if err := c.handle(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Register{Register: &flintpb.RegisterExecutor{
			ExecutorId: id, Cores: 1, Token: ExecutorToken("s", id)}}}); err != nil {
			t.Fatal(err)
		}
		fe := &fetch{blockID: "b", done: make(chan struct{})}
		c.fetches.Store(uint64(1), fe)
		defer func() {
			c.kill("fuzz done", nil)
			c.finish()
		}()

		m := new(flintpb.ExecutorMessage)
		if err := (flintpb.Codec{}).Unmarshal(data, m); err != nil {
			return
		}
		if u := m.GetStatusUpdate(); u != nil {
			u.ExecutorId = id // reach the delivery path, not only the spoofing check
		}
		before := events.Load()
		err := c.handle(m)
		if err != nil && events.Load() != before {
			t.Fatalf("rejected message %v delivered an event", m)
		}
		select {
		case <-fe.done:
			if fe.err == nil && int64(len(fe.data)) != fe.total {
				t.Fatalf("fetch completed with %d of %d bytes", len(fe.data), fe.total)
			}
		default:
		}
	})
}
