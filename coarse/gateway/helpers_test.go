package gateway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "test-secret"

// tokenFor is executor id's token under secret.
func tokenFor(id string) string { return gateway.ExecutorToken(secret, id) }

// recorder is an Events that records everything and signals on channels.
type recorder struct {
	mu      sync.Mutex
	updates []*flintpb.StatusUpdate
	// block, when set, is waited on before an update is recorded.
	block func(u *flintpb.StatusUpdate)

	registered chan gateway.ExecutorInfo
	updated    chan *flintpb.StatusUpdate
	lost       chan [2]string
}

func newRecorder() *recorder {
	return &recorder{registered: make(chan gateway.ExecutorInfo, 64), updated: make(chan *flintpb.StatusUpdate, 4096), lost: make(chan [2]string, 64)}
}

func (r *recorder) ExecutorRegistered(info gateway.ExecutorInfo) { r.registered <- info }
func (r *recorder) ExecutorLost(id, reason string)               { r.lost <- [2]string{id, reason} }
func (r *recorder) StatusUpdate(u *flintpb.StatusUpdate) {
	r.mu.Lock()
	block := r.block
	r.mu.Unlock()
	if block != nil {
		block(u)
	}
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
	r.updated <- u
}

func (r *recorder) all() []*flintpb.StatusUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*flintpb.StatusUpdate(nil), r.updates...)
}

func (r *recorder) waitRegistered(t testing.TB) gateway.ExecutorInfo {
	t.Helper()
	select {
	case info := <-r.registered:
		return info
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a registration")
		return gateway.ExecutorInfo{}
	}
}

func (r *recorder) waitLost(t testing.TB) [2]string {
	t.Helper()
	select {
	case l := <-r.lost:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for an executor loss")
		return [2]string{}
	}
}

// waitState returns the next update of task id in state, skipping others.
func (r *recorder) waitState(t testing.TB, id uint64, state flintpb.TaskState) *flintpb.StatusUpdate {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-r.updated:
			if u.TaskId == id && u.State == state {
				return u
			}
		case <-deadline:
			t.Fatalf("timed out waiting for task %d %s", id, state)
			return nil
		}
	}
}

func startGateway(t testing.TB, ev gateway.Events, mod func(*gateway.Config)) *gateway.Gateway {
	t.Helper()
	cfg := gateway.Config{Secret: secret, Events: ev, DriverID: "driver-test",
		Settings: &flintpb.ExecutorSettings{MaxDirectResultSize: 65536}}
	if mod != nil {
		mod(&cfg)
	}
	gw, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Serve(lis); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return gw
}

// testRegistry registers the functions the tests launch; release unblocks
// "gate".
func testRegistry(release <-chan struct{}) *task.Registry {
	r := task.NewRegistry()
	task.MustRegister(r, "bytes", func(_ context.Context, n int) ([]byte, error) {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		return b, nil
	}, nil)
	task.MustRegister(r, "noop", func(context.Context, int) (int, error) { return 0, nil }, nil)
	task.MustRegister(r, "len", func(_ context.Context, b []byte) (int, error) { return len(b), nil }, nil)
	task.MustRegister(r, "panic", func(context.Context, int) (int, error) { panic("boom") }, nil)
	task.MustRegister(r, "fail", func(context.Context, int) (int, error) { return 0, errors.New("bad input") }, nil)
	task.MustRegister(r, "block", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, context.Cause(ctx)
	}, nil)
	task.MustRegister(r, "gate", func(ctx context.Context, _ int) (int, error) {
		select {
		case <-release:
			return 1, nil
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}, nil)
	return r
}

// encodeInt encodes n with the codec "bytes" and friends use.
func encodeInt(t testing.TB, r *task.Registry, fn string, n int) *flintpb.TaskDescription {
	t.Helper()
	e, err := r.Lookup(fn)
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.Codec().Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return &flintpb.TaskDescription{Function: fn, Codec: e.Codec().Name(), Input: in}
}

// executorRun is a running coarse.Run.
type executorRun struct {
	cancel context.CancelFunc
	done   chan error
}

func startExecutor(t testing.TB, addr string, mod func(*coarseexec.Config)) *executorRun {
	t.Helper()
	cfg := coarseexec.Config{DriverURL: addr, ExecutorID: "exec-1", Cores: 4, Host: "localhost",
		AgentID: "agent-1", Timeout: 5 * time.Second, RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond,
		ShutdownTimeout: 2 * time.Second, Registry: testRegistry(nil)}
	if mod != nil {
		mod(&cfg)
	}
	if cfg.Token == "" {
		cfg.Token = tokenFor(cfg.ExecutorID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &executorRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- coarseexec.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("executor Run did not return after cancel")
		}
	})
	return r
}

func (r *executorRun) wait(t testing.TB, within time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(within):
		t.Fatalf("executor Run still running after %s", within)
		return nil
	}
}

// rawClient is a hand-driven executor stream.
type rawClient struct {
	cc     *grpc.ClientConn
	stream flintpb.ExecutorGateway_ConnectClient
	cancel context.CancelFunc
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(flintpb.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := flintpb.NewExecutorGatewayClient(cc).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{cc: cc, stream: stream, cancel: cancel}
	t.Cleanup(c.close)
	return c
}

func (c *rawClient) close() {
	c.cancel()
	_ = c.cc.Close()
}

// register sends a registration and returns the driver's first answer.
func (c *rawClient) register(id, token string) (*flintpb.DriverMessage, error) {
	err := c.stream.Send(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Register{Register: &flintpb.RegisterExecutor{
		ExecutorId: id, Host: "raw", Cores: 2, Token: token}}})
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return c.stream.Recv()
}

func (c *rawClient) send(t testing.TB, m *flintpb.ExecutorMessage) {
	t.Helper()
	if err := c.stream.Send(m); err != nil {
		t.Fatal(err)
	}
}

// newFakeClock is the shared manual clock. clock.Fake's doc says why
// testing/synctest cannot serve these tests: executors talk to the gateway
// over gRPC on loopback TCP.
func newFakeClock() *clock.Fake { return clock.NewFake(time.Time{}) }

// proxy forwards TCP connections to target; it can drop traffic and break
// every connection, to simulate a network fault between executor and driver.
type proxy struct {
	lis    net.Listener
	target string
	drop   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	// bytes forwarded and dropped, by direction
	fwd, drp [2]atomic.Int64
}

// Directions through the proxy.
const (
	toGateway  = 0
	toExecutor = 1
)

func (p *proxy) forwarded(dir int) int64 { return p.fwd[dir].Load() }
func (p *proxy) dropped(dir int) int64   { return p.drp[dir].Load() }

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{lis: lis, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.lis.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.lis.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out, toGateway)
		go p.pipe(out, in, toExecutor)
	}
}

func (p *proxy) pipe(from, to net.Conn, dir int) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		switch {
		case n > 0 && p.drop.Load():
			p.drp[dir].Add(int64(n))
		case n > 0:
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
			p.fwd[dir].Add(int64(n))
		}
		if err != nil {
			to.Close()
			return
		}
	}
}

// breakAll closes every forwarded connection.
func (p *proxy) breakAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) close() {
	p.lis.Close()
	p.breakAll()
	p.wg.Wait()
}
