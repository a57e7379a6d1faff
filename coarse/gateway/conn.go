package gateway

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/flint-mesos/flint/internal/mailbox"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// service adapts Gateway to the generated server interface without
// exporting Connect on Gateway.
type service Gateway

func (s *service) Connect(stream flintpb.ExecutorGateway_ConnectServer) error {
	return (*Gateway)(s).serveStream(stream)
}

// conn is one executor stream. The stream handler goroutine is its only
// sender (writeLoop), taking what to send from out; readLoop is its only
// receiver and delivers events.
type conn struct {
	g        *Gateway
	addr     string
	lastSeen atomic.Int64 // unix nanos of the last message, by Config.Clock

	done   chan struct{} // closed by the first kill
	once   sync.Once
	st     error  // handler's return status; set before done is closed
	reason string // why the stream ended; set before done is closed

	// Set by the registry loop before reg (and before the executor is
	// published), never changed after.
	reg      atomic.Bool
	id       string
	info     ExecutorInfo
	batching bool   // the executor understands LaunchTasks and StatusUpdateAcks
	dedup    *dedup // the executor's window of delivered update uuids: readLoop's

	// out is the writer's mailbox: messages and acks in the order queued,
	// closed once the stream ended (nothing more is sent).
	out *mailbox.Mailbox[outItem]
	// fetches are the FetchResults awaiting their chunks, by request id
	// (*fetch): FetchResult adds one, readLoop completes it.
	fetches  sync.Map
	stopping atomic.Pointer[string] // StopExecutor's reason, when sent
}

// outItem is one message for the writer, else acks: several in acks, or
// the one in ack.
type outItem struct {
	m    *flintpb.DriverMessage
	acks []ackItem
	ack  ackItem
}

func newConn(g *Gateway, addr string) *conn {
	c := &conn{g: g, addr: addr, done: make(chan struct{}), out: mailbox.New[outItem]()}
	c.lastSeen.Store(g.cfg.Clock.Now().UnixNano())
	return c
}

func (c *conn) registered() bool { return c.reg.Load() }

// kill ends the stream with st (nil: OK) for reason; the first call wins.
func (c *conn) kill(reason string, st error) {
	c.once.Do(func() {
		c.reason, c.st = reason, st
		close(c.done)
	})
}

// send queues m for the writer; ErrExecutorLost once the stream ended.
// Messages must not be modified after send.
func (c *conn) send(m *flintpb.DriverMessage) error {
	if !c.out.Put(outItem{m: m}) {
		return fmt.Errorf("%w: %s", ErrExecutorLost, c.id)
	}
	return nil
}

// ackItem is one status update to acknowledge.
type ackItem struct {
	taskID uint64
	uuid   []byte
}

// queueAcks queues acknowledgements (the writer owns acks from then on);
// they are dropped once the stream ended.
func (c *conn) queueAcks(acks []ackItem) {
	if len(acks) > 0 {
		c.out.Put(outItem{acks: acks})
	}
}

func (g *Gateway) serveStream(stream flintpb.ExecutorGateway_ConnectServer) error {
	addr := "unknown"
	if p, ok := peer.FromContext(stream.Context()); ok && p.Addr != nil {
		addr = p.Addr.String()
	}
	c := newConn(g, addr)
	opened := false
	g.do(func() {
		if !g.isClosing() {
			g.streams[c], opened = struct{}{}, true
			g.wg.Add(2)
		}
	})
	if !opened {
		return status.Error(codes.Unavailable, "gateway: closed")
	}
	defer g.wg.Done()
	go c.readLoop(stream)
	return c.writeLoop(stream)
}

// writeLoop sends queued messages until the stream is killed. Each wake-up
// drains everything queued (no waiting to fill a batch): consecutive
// launches become one LaunchTasks and all acks one StatusUpdateAcks when the
// executor understands them.
func (c *conn) writeLoop(stream flintpb.ExecutorGateway_ConnectServer) error {
	ctx := stream.Context()
	w := writer{c: c, stream: stream, seen: make(map[[16]byte]struct{})}
	var q []outItem
	for {
		select {
		case <-c.done:
			return c.st
		case <-c.g.closing:
			c.kill("driver gateway closed", status.Error(codes.Unavailable, "gateway: closed"))
			return c.st
		case <-ctx.Done():
			c.kill("stream ended: "+ctx.Err().Error(), status.FromContextError(ctx.Err()).Err())
			return c.st
		case <-c.out.Wake():
		}
		// Yield once before taking the queue: launches and acks that
		// goroutines already runnable are about to queue join this flush
		// instead of the next one (see the executor's sendLoop).
		runtime.Gosched()
		q = c.out.Take(q)
		if err := w.flush(q); err != nil {
			c.kill("send failed: "+err.Error(), status.Errorf(codes.Unavailable, "gateway: send: %v", err))
			return c.st
		}
	}
}

// writer coalesces a drained queue into as few messages as the executor
// understands. It belongs to the writeLoop goroutine.
type writer struct {
	c       *conn
	stream  flintpb.ExecutorGateway_ConnectServer
	pending []*flintpb.TaskDescription // launches not sent yet
	size    int                        // their encoded size
	seen    map[[16]byte]struct{}      // acks of this flush, deduplicated
	acks    []ackItem                  // acks of this flush, sent after its messages
}

// add queues a launch for the next LaunchTasks, first sending what is
// pending when td would take the batch past the gateway's batch size: a
// batch never comes near the gRPC message limit, however large the inputs.
func (w *writer) add(td *flintpb.TaskDescription) error {
	n := td.Size()
	if len(w.pending) > 0 && w.size+n > w.c.g.batchBytes {
		if err := w.sendLaunches(); err != nil {
			return err
		}
	}
	w.pending = append(w.pending, td)
	w.size += n
	return nil
}

// flush sends the messages of q in order, launches coalesced, then the
// acks of q together.
func (w *writer) flush(q []outItem) error {
	for _, it := range q {
		switch {
		case it.m == nil && len(it.acks) > 0:
			w.acks = append(w.acks, it.acks...)
			continue
		case it.m == nil:
			w.acks = append(w.acks, it.ack)
			continue
		}
		if err := w.message(it.m); err != nil {
			return err
		}
	}
	if err := w.sendLaunches(); err != nil {
		return err
	}
	err := w.sendAcks(w.acks)
	clear(w.acks)
	w.acks = w.acks[:0]
	return err
}

// message sends m, or queues it for the next LaunchTasks when it is a
// launch the executor takes batched.
func (w *writer) message(m *flintpb.DriverMessage) error {
	switch x := m.Message.(type) {
	case *flintpb.DriverMessage_LaunchTask:
		if w.c.batching {
			return w.add(x.LaunchTask)
		}
	case *flintpb.DriverMessage_LaunchTasks:
		for _, td := range x.LaunchTasks.GetTasks() {
			if w.c.batching {
				if err := w.add(td); err != nil {
					return err
				}
			} else if err := w.stream.Send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: td}}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := w.sendLaunches(); err != nil {
		return err
	}
	return w.stream.Send(m)
}

func (w *writer) sendLaunches() error {
	var m *flintpb.DriverMessage
	switch len(w.pending) {
	case 0:
		return nil
	case 1:
		m = &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: w.pending[0]}}
	default:
		m = &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTasks{LaunchTasks: &flintpb.LaunchTasks{Tasks: w.pending}}}
	}
	err := w.stream.Send(m) // marshals m before returning: the slice may be reused
	clear(w.pending)
	w.pending, w.size = w.pending[:0], 0
	return err
}

func (w *writer) sendAcks(acks []ackItem) error {
	if len(acks) == 0 {
		return nil
	}
	if !w.c.batching {
		for _, a := range acks {
			if err := w.stream.Send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_Ack{Ack: &flintpb.StatusUpdateAck{TaskId: a.taskID, Uuid: a.uuid}}}); err != nil {
				return err
			}
		}
		return nil
	}
	clear(w.seen)
	uuids := make([][]byte, 0, len(acks))
	for _, a := range acks {
		k := [16]byte(a.uuid)
		if _, dup := w.seen[k]; dup {
			continue
		}
		w.seen[k] = struct{}{}
		uuids = append(uuids, a.uuid)
	}
	if len(uuids) == 1 {
		return w.stream.Send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_Ack{Ack: &flintpb.StatusUpdateAck{TaskId: acks[0].taskID, Uuid: uuids[0]}}})
	}
	return w.stream.Send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_Acks{Acks: &flintpb.StatusUpdateAcks{Uuids: uuids}}})
}

// readLoop receives and handles messages until the stream ends, then
// reports the executor lost. It outlives the handler by the time Recv
// takes to notice that the handler returned.
func (c *conn) readLoop(stream flintpb.ExecutorGateway_ConnectServer) {
	defer c.g.wg.Done()
	for {
		m, err := stream.Recv()
		if err != nil {
			c.recvEnded(err)
			break
		}
		c.lastSeen.Store(c.g.cfg.Clock.Now().UnixNano())
		if err := c.handle(m); err != nil {
			c.kill(status.Convert(err).Message(), err)
			break
		}
	}
	c.finish()
}

func (c *conn) recvEnded(err error) {
	if errors.Is(err, io.EOF) {
		if reason := c.stopReason(); reason != "" {
			c.kill("executor stopped: "+reason, nil)
		} else {
			c.kill("executor closed its stream", nil)
		}
		return
	}
	c.kill("stream broken: "+status.Convert(err).Message(), status.Error(codes.Unavailable, "gateway: stream broken"))
}

// stopReason is StopExecutor's reason, "" unless the driver stopped it.
func (c *conn) stopReason() string {
	if r := c.stopping.Load(); r != nil {
		return *r
	}
	return ""
}

// finish unregisters the executor, fails its pending fetches and reports
// it lost.
func (c *conn) finish() {
	<-c.done // readLoop killed the stream before calling finish
	g := c.g
	lost := false
	g.do(func() {
		delete(g.streams, c)
		if c.registered() && g.execs[c.id] == c {
			delete(g.execs, c.id)
			g.dedups.leave(c.id, g.cfg.Clock.Now())
			g.publish()
			lost = true
		}
	})
	// Nothing is queued after this; a FetchResult that queued its request
	// before has added its fetch already, one that did not sees the
	// mailbox closed.
	c.out.Close()
	c.fetches.Range(func(id, f any) bool {
		if _, ok := c.fetches.LoadAndDelete(id); ok {
			f.(*fetch).finish(nil, fmt.Errorf("%w: %s: %s", ErrExecutorLost, c.id, c.reason))
		}
		return true
	})
	if !lost {
		return
	}
	entry := g.log.WithFields(logrus.Fields{"executor_id": c.id, "reason": c.reason})
	if c.stopReason() != "" || g.isClosing() {
		entry.Debug("executor stopped") // the driver asked for it: not a loss worth a warning
	} else {
		entry.Debug("executor lost") // the backend reports it, with how it ended
	}
	if !g.isClosing() {
		g.cfg.Events.ExecutorLost(c.id, c.reason)
	}
}

// handle processes one message from the network. An error ends the stream
// with that status (a protocol violation or a refused registration).
func (c *conn) handle(m *flintpb.ExecutorMessage) error {
	if r, ok := m.Message.(*flintpb.ExecutorMessage_Register); ok {
		if c.registered() {
			return status.Error(codes.InvalidArgument, "gateway: executor registered twice on one stream")
		}
		return c.register(r.Register)
	}
	if !c.registered() {
		return status.Error(codes.InvalidArgument, "gateway: the first message must be RegisterExecutor")
	}
	switch x := m.Message.(type) {
	case *flintpb.ExecutorMessage_StatusUpdate:
		return c.onStatus([]*flintpb.StatusUpdate{x.StatusUpdate})
	case *flintpb.ExecutorMessage_StatusUpdates:
		return c.onStatus(x.StatusUpdates.GetUpdates())
	case *flintpb.ExecutorMessage_ResultBlock:
		c.onBlock(x.ResultBlock)
	}
	// Heartbeats only refresh lastSeen (done for every message); unknown
	// messages from newer executors are ignored.
	return nil
}

func (c *conn) register(r *flintpb.RegisterExecutor) error {
	g := c.g
	if r == nil {
		return status.Error(codes.InvalidArgument, "gateway: empty RegisterExecutor")
	}
	log := g.log.WithFields(logrus.Fields{"executor_id": r.ExecutorId, "addr": c.addr})
	if !g.authentic(r.Token, r.ExecutorId) {
		log.Warn("executor authentication failed: wrong token")
		return status.Error(codes.Unauthenticated, "gateway: executor authentication failed")
	}
	if r.ExecutorId == "" || r.Cores <= 0 {
		return status.Errorf(codes.InvalidArgument, "gateway: registration needs an executor id and positive cores (got %q, %d)", r.ExecutorId, r.Cores)
	}
	info := ExecutorInfo{ID: r.ExecutorId, Host: r.Host, Rack: r.Rack, AgentID: r.AgentId, Cores: int(r.Cores),
		Version: r.Version, PID: int(r.Pid), Attributes: maps.Clone(r.Attributes), Addr: c.addr}
	var refused error
	ran := g.do(func() {
		if g.isClosing() {
			refused = status.Error(codes.Unavailable, "gateway: closed")
			return
		}
		if old := g.execs[r.ExecutorId]; old != nil {
			log.Warn("duplicate executor id refused")
			refused = status.Errorf(codes.AlreadyExists, "gateway: executor %q is already registered (from %s)", r.ExecutorId, old.addr)
			return
		}
		c.id, c.info, c.batching = r.ExecutorId, info, r.Batching
		c.dedup = g.dedups.join(c.id)
		c.reg.Store(true)
		reply := &flintpb.RegisteredExecutor{DriverId: g.cfg.DriverID, Settings: g.cfg.Settings,
			HeartbeatIntervalNanos: int64(g.cfg.HeartbeatInterval), Batching: true}
		// Queued before the executor is published, so that no Launch can
		// overtake it.
		_ = c.send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_Registered{Registered: reply}})
		g.execs[c.id] = c
		g.publish()
	})
	if !ran {
		return status.Error(codes.Unavailable, "gateway: closed")
	}
	if refused != nil {
		return refused
	}
	log.WithFields(logrus.Fields{"host": info.Host, "cores": info.Cores, "agent_id": info.AgentID, "version": info.Version}).
		Debug("executor registered")
	if !g.isClosing() {
		g.cfg.Events.ExecutorRegistered(info)
	}
	return nil
}

// onStatus delivers updates in order (each uuid once) and then queues
// their acks together. An invalid update ends the stream; the ones before
// it were delivered but are not acked, so the executor resends them and
// dedup drops them.
func (c *conn) onStatus(us []*flintpb.StatusUpdate) error {
	if len(us) == 1 { // one update (an executor that does not batch): no slice to allocate
		if stop, err := c.deliver(us[0]); stop {
			return err
		}
		c.out.Put(outItem{ack: ackItem{taskID: us[0].TaskId, uuid: us[0].Uuid}})
		return nil
	}
	acks := make([]ackItem, 0, len(us))
	for _, u := range us {
		if stop, err := c.deliver(u); stop {
			if err != nil {
				c.queueAcks(acks)
			}
			return err
		}
		acks = append(acks, ackItem{taskID: u.TaskId, uuid: u.Uuid})
	}
	c.queueAcks(acks)
	return nil
}

// deliver hands u to Events unless its uuid was delivered before. stop
// ends onStatus: with an error for an invalid update, without one once the
// gateway is closing (nothing is delivered nor acked then).
func (c *conn) deliver(u *flintpb.StatusUpdate) (stop bool, err error) {
	if err := c.checkStatus(u); err != nil {
		return true, err
	}
	if c.g.isClosing() {
		return true, nil
	}
	if c.dedup.firstSeen([16]byte(u.Uuid)) {
		c.g.cfg.Events.StatusUpdate(u)
	}
	return false, nil
}

func (c *conn) checkStatus(u *flintpb.StatusUpdate) error {
	if u == nil || len(u.Uuid) != 16 {
		return status.Error(codes.InvalidArgument, "gateway: status update without a 16-byte uuid")
	}
	if u.ExecutorId != c.id {
		return status.Errorf(codes.InvalidArgument, "gateway: executor %q sent an update as %q", c.id, u.ExecutorId)
	}
	if _, ok := flintpb.TaskState_name[int32(u.State)]; !ok || u.State == flintpb.TaskState_TASK_STATE_UNSPECIFIED {
		return status.Errorf(codes.InvalidArgument, "gateway: status update of task %d with invalid state %d", u.TaskId, u.State)
	}
	return nil
}
