package coarseexec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/uuid"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// client is the executor's connection state across sessions (streams).
type client struct {
	cfg Config
	log logrus.FieldLogger
	api flintpb.ExecutorGatewayClient
	rt  *executor.Runtime // created on the first registration
	// shuffle is the executor's shuffle (store, memory, server), when the
	// driver's registration answer carries shuffle properties.
	shuffle *shuffleenv.Env
	env     *stagetask.Env // the application's runtime state here (over shuffle), handed to tasks

	wake chan struct{} // the sender has work

	mu       sync.Mutex
	seq      uint64
	unacked  map[[16]byte]unacked    // status updates the driver has not acked
	live     bool                    // a session is serving: queue for sending
	batching bool                    // the live session's driver understands StatusUpdates
	updates  []*flintpb.StatusUpdate // queued for the live session, in report order
	ctrl     []*flintpb.ExecutorMessage
	bulk     []*flintpb.ExecutorMessage // result chunks: sent when ctrl is empty
	closing  bool                       // send what is queued, then CloseSend
}

type unacked struct {
	seq uint64
	u   *flintpb.StatusUpdate
}

func newClient(cfg Config, api flintpb.ExecutorGatewayClient) *client {
	return &client{cfg: cfg, api: api, wake: make(chan struct{}, 1), unacked: make(map[[16]byte]unacked),
		log: cfg.Logger.WithFields(logrus.Fields{"component": "coarse-executor", "executor_id": cfg.ExecutorID})}
}

// report is the runtime's Reporter: every update is kept until the driver
// acknowledges it and queued on the live session, if any (the sender
// batches whatever is queued when it wakes).
func (c *client) report(u *flintpb.StatusUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live && u.State != flintpb.TaskState_TASK_RUNNING {
		c.supersedeRunning(u.TaskId)
	}
	c.seq++
	c.unacked[[16]byte(u.Uuid)] = unacked{seq: c.seq, u: u}
	if c.live {
		c.updates = append(c.updates, u)
		c.signal()
	}
}

// supersedeScan bounds how far back supersedeRunning looks in the queue, so
// a long queue (a stalled stream) never makes reporting quadratic.
const supersedeScan = 64

// supersedeRunning drops the RUNNING update of task id if it is still queued
// and unsent: the terminal update being reported carries everything the
// driver needs, so a task that ends before the sender wakes costs one update
// on the wire instead of two. It is never sent, so it needs no ack.
func (c *client) supersedeRunning(id uint64) {
	for i := len(c.updates) - 1; i >= max(0, len(c.updates)-supersedeScan); i-- {
		q := c.updates[i]
		if q.TaskId != id {
			continue
		}
		if q.State == flintpb.TaskState_TASK_RUNNING {
			delete(c.unacked, [16]byte(q.Uuid))
			c.updates = slices.Delete(c.updates, i, i+1)
		}
		return
	}
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *client) enqueue(m *flintpb.ExecutorMessage, bulk bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return
	}
	if bulk {
		c.bulk = append(c.bulk, m)
	} else {
		c.ctrl = append(c.ctrl, m)
	}
	c.signal()
}

// begin starts a session's queue with every unacknowledged update, oldest
// first (the driver drops the ones it already has). batching is whether
// the session's driver understands StatusUpdates.
func (c *client) begin(batching bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pend := make([]unacked, 0, len(c.unacked))
	for _, p := range c.unacked {
		pend = append(pend, p)
	}
	slices.SortFunc(pend, func(a, b unacked) int { return cmp.Compare(a.seq, b.seq) })
	c.updates = c.updates[:0]
	for _, p := range pend {
		c.updates = append(c.updates, p.u)
	}
	c.ctrl = c.ctrl[:0]
	c.bulk, c.live, c.closing, c.batching = nil, true, false, batching
	c.signal()
}

func (c *client) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live, c.ctrl, c.bulk, c.updates = false, nil, nil, nil
}

// drain takes everything queued but result chunks: the status updates (in
// report order) and the control messages. When
// both are empty it takes one result chunk instead, so chunks never delay
// updates. done reports that the session is closing and everything was
// sent. spare is an emptied slice for the next updates.
func (c *client) drain(spare []*flintpb.StatusUpdate) (us []*flintpb.StatusUpdate, ctrl []*flintpb.ExecutorMessage, chunk *flintpb.ExecutorMessage, batching, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	us, ctrl = c.updates, c.ctrl
	c.updates, c.ctrl = spare, nil
	switch {
	case len(us) > 0 || len(ctrl) > 0:
	case c.closing:
		done = true
	case len(c.bulk) > 0:
		chunk, c.bulk[0] = c.bulk[0], nil
		c.bulk = c.bulk[1:]
	}
	return us, ctrl, chunk, c.batching, done
}

func (c *client) acked(uuids ...[]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, uuid := range uuids {
		if len(uuid) == 16 {
			delete(c.unacked, [16]byte(uuid))
		}
	}
}

// pendingUpdates counts the updates not yet acknowledged.
func (c *client) pendingUpdates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.unacked)
}

type stream = flintpb.ExecutorGateway_ConnectClient

// serve runs a registered session: a sender, heartbeats, and the receive
// loop on this goroutine.
func (c *client) serve(ctx context.Context, cancel context.CancelFunc, s stream, hb time.Duration, batching bool) error {
	c.begin(batching)
	defer c.end()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.sendLoop(ctx, cancel, s) }()
	go func() { defer wg.Done(); c.heartbeatLoop(ctx, hb) }()
	err := c.recvLoop(ctx, cancel, s)
	cancel()
	wg.Wait()
	return err
}

// sendLoop sends whatever is queued each time it wakes: control messages,
// then every queued status update in one StatusUpdates message (when the
// driver understands it), never waiting for more to fill a batch.
func (c *client) sendLoop(ctx context.Context, cancel context.CancelFunc, s stream) {
	var spare []*flintpb.StatusUpdate
	send := func(m *flintpb.ExecutorMessage) bool {
		if err := s.Send(m); err != nil {
			if !errors.Is(err, io.EOF) { // io.EOF: Recv reports the status
				cancel()
			}
			return false
		}
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		// Yield once before draining: the sender is woken by the first
		// update, and the task goroutines already runnable report theirs
		// meanwhile, so one StatusUpdates carries several. Measured on the
		// coarse benchmark (64 slots): 1.1 → 3.5–6.5 updates per message
		// and +25–30 % tasks/s, at no cost in one-task latency.
		runtime.Gosched()
		for {
			us, ctrl, chunk, batching, done := c.drain(spare)
			if done {
				_ = s.CloseSend()
				return
			}
			if len(us) == 0 && len(ctrl) == 0 && chunk == nil {
				spare = us
				break
			}
			for _, m := range ctrl {
				if !send(m) {
					return
				}
			}
			if !c.sendUpdates(us, batching, send) {
				return
			}
			if chunk != nil && !send(chunk) {
				return
			}
			clear(us)
			spare = us[:0]
		}
	}
}

// sendUpdates sends us in report order: one StatusUpdates per batch of at
// most flintpb.BatchBytes (so inline results finishing together never take
// a message past the gRPC limit), or one by one to a driver without
// batching. Send marshals before returning, so us may be reused.
func (c *client) sendUpdates(us []*flintpb.StatusUpdate, batching bool, send func(*flintpb.ExecutorMessage) bool) bool {
	limit := flintpb.BatchBytes(c.cfg.MaxMessageSize)
	for len(us) > 0 {
		n, size := 1, us[0].Size()
		for ; batching && n < len(us); n++ {
			next := us[n].Size()
			if size+next > limit {
				break
			}
			size += next
		}
		var m *flintpb.ExecutorMessage
		if n == 1 {
			m = &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: us[0]}}
		} else {
			m = &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdates{StatusUpdates: &flintpb.StatusUpdates{Updates: us[:n]}}}
		}
		if !send(m) {
			return false
		}
		us = us[n:]
	}
	return true
}

func (c *client) heartbeatLoop(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = 10 * time.Second
	}
	t := c.cfg.Clock.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		running := c.rt.Running()
		c.enqueue(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Heartbeat{Heartbeat: &flintpb.Heartbeat{
			ExecutorId: c.cfg.ExecutorID, TimestampUnixNano: c.cfg.Now().UnixNano(),
			RunningTaskIds: running, FreeCores: int32(c.rt.FreeCores()),
		}}}, false)
	}
}

func (c *client) recvLoop(ctx context.Context, cancel context.CancelFunc, s stream) error {
	for {
		m, err := s.Recv()
		if err != nil {
			if ctx.Err() != nil && status.Code(err) == codes.Canceled {
				return fmt.Errorf("coarse: session ended: %w", context.Cause(ctx))
			}
			return classify(err)
		}
		switch x := m.Message.(type) {
		case *flintpb.DriverMessage_LaunchTask:
			c.launch(x.LaunchTask)
		case *flintpb.DriverMessage_LaunchTasks:
			for _, td := range x.LaunchTasks.GetTasks() {
				c.launch(td)
			}
		case *flintpb.DriverMessage_Acks:
			c.acked(x.Acks.GetUuids()...)
		case *flintpb.DriverMessage_KillTask:
			c.rt.Kill(x.KillTask.TaskId, x.KillTask.Reason)
		case *flintpb.DriverMessage_Ack:
			c.acked(x.Ack.Uuid)
		case *flintpb.DriverMessage_FetchResult:
			c.serveResult(x.FetchResult)
		case *flintpb.DriverMessage_ReleaseResult:
			c.rt.ReleaseResult(x.ReleaseResult.BlockId)
		case *flintpb.DriverMessage_ReleaseShuffle:
			c.releaseShuffle(x.ReleaseShuffle)
		case *flintpb.DriverMessage_StopExecutor:
			c.log.WithField("reason", x.StopExecutor.Reason).Info("driver asked the executor to stop")
			c.stop(s, cancel)
			return errStopped
		}
	}
}

// releaseShuffle deletes the map outputs the driver released.
func (c *client) releaseShuffle(r *flintpb.ReleaseShuffle) {
	if c.shuffle == nil {
		return
	}
	log := c.log.WithField("namespace", r.Namespace).WithField("shuffle", r.ShuffleId).WithField("all", r.All)
	// the application's environment drops the shuffle's map statuses too
	release := c.shuffle.ReleaseShuffle
	if c.env != nil {
		release = c.env.ReleaseShuffle
	}
	if err := release(r.Namespace, int(r.ShuffleId), r.All); err != nil {
		log.WithError(err).Warn("releasing shuffle outputs")
		return
	}
	log.Debug("released shuffle outputs")
}

// launch starts td; a task the runtime refuses is reported failed so the
// driver reschedules it.
func (c *client) launch(td *flintpb.TaskDescription) {
	if err := c.rt.Launch(td); err != nil {
		c.log.WithError(err).WithField("task_id", td.TaskId).Warn("launch failed")
		c.report(&flintpb.StatusUpdate{
			TaskId: td.TaskId, Attempt: td.Attempt, ExecutorId: c.cfg.ExecutorID,
			State:             flintpb.TaskState_TASK_FAILED,
			Failure:           &flintpb.TaskFailure{Kind: flintpb.FailureKind_LAUNCH_FAILED, Message: err.Error()},
			TimestampUnixNano: c.cfg.Now().UnixNano(), Uuid: uuid.New(),
		})
	}
}

// serveResult queues the block's chunks (or its error) for sending.
func (c *client) serveResult(f *flintpb.FetchResult) {
	data, err := c.rt.FetchResult(f.BlockId)
	if err != nil {
		c.enqueue(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{
			BlockId: f.BlockId, RequestId: f.RequestId, Error: err.Error(), Last: true}}}, true)
		return
	}
	total := int64(len(data))
	for off := 0; ; off += c.cfg.ChunkSize {
		end := min(off+c.cfg.ChunkSize, len(data))
		c.enqueue(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{
			BlockId: f.BlockId, RequestId: f.RequestId, Data: data[off:end], Offset: int64(off),
			TotalSize: total, Last: end == len(data)}}}, true)
		if end == len(data) {
			return
		}
	}
}

// stop kills the tasks, sends their final updates, closes the stream and
// waits (bounded) for the driver to end it.
func (c *client) stop(s stream, cancel context.CancelFunc) {
	c.closeRuntime()
	c.mu.Lock()
	c.closing = true
	c.signal()
	c.mu.Unlock()
	t := c.cfg.Clock.AfterFunc(c.cfg.ShutdownTimeout, cancel)
	defer t.Stop()
	for {
		if _, err := s.Recv(); err != nil {
			return
		}
	}
}
