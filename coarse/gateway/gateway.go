package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrUnknownExecutor: no registered executor has the id.
	ErrUnknownExecutor = errors.New("gateway: unknown executor")
	// ErrExecutorLost: the executor went away before answering.
	ErrExecutorLost = errors.New("gateway: executor lost")
	// ErrClosed: the gateway is closed.
	ErrClosed = errors.New("gateway: closed")
	// ErrFetch: the executor could not serve a result, or served it wrongly.
	ErrFetch = errors.New("gateway: result fetch failed")
)

// Defaults of Config fields left zero.
const (
	// DefaultTimeout is flint.network.timeout's default.
	DefaultTimeout = 120 * time.Second
	// DefaultHeartbeatInterval is flint.executor.heartbeatInterval's default.
	DefaultHeartbeatInterval = 10 * time.Second
	// DefaultMaxMessageSize bounds one gRPC message in either direction
	// (Spark's spark.rpc.message.maxSize is 128 MiB too). It must exceed
	// flint.task.maxDirectResultSize (inline results ride status updates)
	// and the largest task input; indirect results are chunked and never
	// approach it.
	DefaultMaxMessageSize = 128 << 20
	// DefaultDedupWindow is how many recent status update uuids are
	// remembered per executor to drop duplicates.
	DefaultDedupWindow = 1 << 12
)

// ExecutorInfo describes a registered executor.
type ExecutorInfo struct {
	ID         string
	Host       string
	Rack       string
	AgentID    string
	Cores      int
	Version    string
	PID        int
	Attributes map[string]string
	// Addr is the executor's network address as the gateway saw it.
	Addr string
}

// Events receives what executors report. Calls for one executor come from
// that executor's stream goroutine, in order: ExecutorRegistered, its
// status updates, then at most one ExecutorLost. Calls for different
// executors run concurrently. Implementations should return quickly: the
// executor's stream is not read while a call runs, and a status update is
// acknowledged only after StatusUpdate returns. Methods may call back into
// the Gateway. No event is delivered once Close has begun.
type Events interface {
	ExecutorRegistered(info ExecutorInfo)
	// StatusUpdate hands over an update; each uuid is delivered once (within
	// Config.DedupWindow). u must not be modified.
	StatusUpdate(u *flintpb.StatusUpdate)
	// ExecutorLost reports that the executor's stream ended (broken, timed
	// out, refused later, or the executor stopped).
	ExecutorLost(executorID, reason string)
}

// EventFuncs adapts functions to Events; nil fields ignore the event.
type EventFuncs struct {
	Registered func(info ExecutorInfo)
	Update     func(u *flintpb.StatusUpdate)
	Lost       func(executorID, reason string)
}

var _ Events = EventFuncs{}

// ExecutorRegistered implements Events.
func (f EventFuncs) ExecutorRegistered(info ExecutorInfo) {
	if f.Registered != nil {
		f.Registered(info)
	}
}

// StatusUpdate implements Events.
func (f EventFuncs) StatusUpdate(u *flintpb.StatusUpdate) {
	if f.Update != nil {
		f.Update(u)
	}
}

// ExecutorLost implements Events.
func (f EventFuncs) ExecutorLost(executorID, reason string) {
	if f.Lost != nil {
		f.Lost(executorID, reason)
	}
}

// Config configures a Gateway.
type Config struct {
	// Secret is the application secret (flint.authenticate.secret, or
	// NewSecret per application); each executor presents its own
	// ExecutorToken derived from it. Required: the gateway never runs
	// unauthenticated. It is never logged.
	Secret string
	// Events receives registrations, status updates and losses. Required.
	Events Events
	// DriverID is told to executors in RegisteredExecutor.
	DriverID string
	// Settings are sent to every executor on registration (task cpus,
	// result limits, shuffle and job settings); the gateway stamps their
	// version (flintpb.SettingsVersion) and never modifies them otherwise.
	Settings *flintpb.ExecutorSettings
	// HeartbeatInterval is how often executors are told to heartbeat
	// (flint.executor.heartbeatInterval); default DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// Timeout is how long an executor may stay silent (no heartbeat nor any
	// other message) before it is lost, and how long a new stream may take
	// to register (flint.network.timeout); default DefaultTimeout. It must
	// exceed HeartbeatInterval.
	Timeout time.Duration
	// CheckInterval is how often silence is checked; default Timeout/10,
	// at most one second.
	CheckInterval time.Duration
	// MaxMessageSize bounds one gRPC message each way; default
	// DefaultMaxMessageSize.
	MaxMessageSize int
	// MaxResultSize rejects indirect results larger than this in
	// FetchResult (flint.driver.maxResultSize); 0 means unlimited.
	MaxResultSize int64
	// DedupWindow is how many recent status update uuids are remembered
	// per executor (it must exceed one executor's updates in flight);
	// default DefaultDedupWindow.
	DedupWindow int
	// TLS, when set, serves the stream over TLS with this configuration
	// (the coarse backend's comes from tlspin.Server); nil serves
	// plaintext gRPC.
	TLS *tls.Config
	// Clock drives the silence checks; default the system clock.
	Clock Clock
	// Logger is optional; nil discards logs.
	Logger logrus.FieldLogger
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Secret == "" {
		errs = append(errs, errors.New("gateway: Secret is required (use NewSecret)"))
	}
	if c.Events == nil {
		errs = append(errs, errors.New("gateway: Events is required"))
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.HeartbeatInterval < 0 || c.Timeout < 0 || c.CheckInterval < 0 || c.MaxMessageSize < 0 || c.MaxResultSize < 0 || c.DedupWindow < 0 {
		errs = append(errs, errors.New("gateway: durations and sizes must not be negative"))
	}
	if c.Timeout <= c.HeartbeatInterval {
		errs = append(errs, fmt.Errorf("gateway: Timeout (%s) must exceed HeartbeatInterval (%s)", c.Timeout, c.HeartbeatInterval))
	}
	if c.CheckInterval == 0 {
		c.CheckInterval = min(c.Timeout/10, time.Second)
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.DedupWindow == 0 {
		c.DedupWindow = DefaultDedupWindow
	}
	if c.Clock == nil {
		c.Clock = SystemClock()
	}
	if c.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		c.Logger = l
	}
	if c.Settings == nil {
		c.Settings = &flintpb.ExecutorSettings{}
	}
	c.Settings.Version = flintpb.SettingsVersion
	return c, errors.Join(errs...)
}

// ExecutorToken is what executor executorID presents to a gateway whose
// Config.Secret is secret: HMAC-SHA256(secret, executor id), URL-safe
// base64. The backend gives each executor only its own token, so the
// application secret never leaves the driver, and a token seen in an
// agent's state or a process environment only ever registers that one
// executor — which the backend accepts once, and only if it launched it.
func ExecutorToken(secret, executorID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("flint executor token v1\x00"))
	m.Write([]byte(executorID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// NewSecret returns a random secret (256 bits, URL-safe base64) for one
// application.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b)
}

// Gateway is the driver's end of the coarse-grained executor protocol: a
// gRPC server executors connect to, and the registry of connected
// executors. It is safe for concurrent use.
//
// One goroutine, the registry loop (run), owns the registry: every live
// stream, the registered executors, their dedup windows and the silence
// checks. Streams opening, registering and ending, and Serve, are its
// inputs (do); it publishes the registered executors after each change
// (registered), which Launch, Kill, FetchResult and Executors read without
// waiting on it. Each stream's writer owns its stream and takes what to
// send from its own mailbox (conn.out).
type Gateway struct {
	cfg    Config
	log    logrus.FieldLogger
	srv    *grpc.Server
	secret string
	// batchBytes bounds the task descriptions batched into one LaunchTasks.
	batchBytes int
	nextReq    atomic.Uint64
	closing    chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup // registry loop, serve loop, stream handlers and readers

	// inbox takes the registry loop's inputs: each runs on the loop.
	inbox chan func()
	// registered is the registry loop's latest map of registered, live
	// executors (never modified once published).
	registered atomic.Pointer[map[string]*conn]
	addr       atomic.Pointer[net.Addr]

	// Owned by the registry loop:
	execs   map[string]*conn   // registered, live executors
	dedups  dedups             // per executor id, across its sessions
	streams map[*conn]struct{} // every live stream, registered or not
	serving bool
}

// New validates cfg and returns a Gateway; call Serve to accept executors.
func New(cfg Config) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg, log: cfg.Logger.WithField("component", "gateway"),
		secret: cfg.Secret, dedups: newDedups(cfg.DedupWindow),
		batchBytes: flintpb.BatchBytes(cfg.MaxMessageSize),
		closing:    make(chan struct{}), inbox: make(chan func()),
		execs: make(map[string]*conn), streams: make(map[*conn]struct{}),
	}
	g.registered.Store(&map[string]*conn{})
	opts := []grpc.ServerOption{
		grpc.ForceServerCodec(flintpb.Codec{}),
		grpc.MaxRecvMsgSize(cfg.MaxMessageSize),
		grpc.MaxSendMsgSize(cfg.MaxMessageSize),
		// Pings detect executors whose connection is alive but which stopped
		// reading (paused, hung), so a blocked send never outlives Timeout.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: max(cfg.Timeout/3, time.Second), Timeout: max(cfg.Timeout/3, time.Second)}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	g.srv = grpc.NewServer(opts...)
	flintpb.RegisterExecutorGatewayServer(g.srv, (*service)(g))
	g.wg.Add(1)
	go g.run()
	return g, nil
}

// Serve starts serving executors on lis in the background and returns at
// once; the gateway owns lis from then on and closes it in Close.
func (g *Gateway) Serve(lis net.Listener) error {
	err := ErrClosed
	g.do(func() {
		switch {
		case g.isClosing():
			return
		case g.serving:
			err = errors.New("gateway: already serving")
			return
		}
		err = nil
		addr := lis.Addr()
		g.serving = true
		g.addr.Store(&addr)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			if err := g.srv.Serve(lis); err != nil {
				g.log.WithError(err).Error("gateway stopped serving")
			}
		}()
	})
	if err == nil {
		g.log.WithField("addr", lis.Addr().String()).Debug("executor gateway listening")
	}
	return err
}

// Addr is the address Serve listens on (nil before Serve): what executors
// get as FLINT_DRIVER_URL.
func (g *Gateway) Addr() net.Addr {
	if a := g.addr.Load(); a != nil {
		return *a
	}
	return nil
}

// Executors returns the registered executors, sorted by id.
func (g *Gateway) Executors() []ExecutorInfo {
	execs := *g.registered.Load()
	out := make([]ExecutorInfo, 0, len(execs))
	for _, c := range execs {
		out = append(out, c.info)
	}
	slices.SortFunc(out, func(a, b ExecutorInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Close stops the gateway: connections are closed at once (executors see
// their stream end and, unless stopped before, retry until their own
// timeout), pending fetches fail with ErrClosed, and Close waits for every
// goroutine of the gateway. No event is delivered once Close has begun. It
// is idempotent.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() { close(g.closing) })
	g.srv.Stop()
	g.wg.Wait()
	return nil
}

func (g *Gateway) isClosing() bool {
	select {
	case <-g.closing:
		return true
	default:
		return false
	}
}

// authentic reports whether token is executorID's token, in constant time.
func (g *Gateway) authentic(token, executorID string) bool {
	return hmac.Equal([]byte(token), []byte(ExecutorToken(g.secret, executorID)))
}

// lookup returns the live connection of a registered executor.
func (g *Gateway) lookup(executorID string) (*conn, error) {
	if g.isClosing() {
		return nil, ErrClosed
	}
	c := (*g.registered.Load())[executorID]
	if c == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownExecutor, executorID)
	}
	return c, nil
}

// do runs f on the registry loop and returns once it ran; false, without
// running it, once the gateway is closing.
func (g *Gateway) do(f func()) bool {
	done := make(chan struct{})
	select {
	case g.inbox <- func() { f(); close(done) }:
		<-done
		return true
	case <-g.closing:
		return false
	}
}

// run is the registry loop: it runs the inputs do hands it, one at a time,
// and ends streams that stayed silent longer than Timeout, until Close.
func (g *Gateway) run() {
	defer g.wg.Done()
	t := g.cfg.Clock.NewTicker(g.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-g.closing:
			return
		case f := <-g.inbox:
			f()
		case <-t.C():
			g.checkSilence()
		}
	}
}

// publish hands the registered executors to readers (registry loop).
func (g *Gateway) publish() {
	m := maps.Clone(g.execs)
	g.registered.Store(&m)
}

func (g *Gateway) checkSilence() {
	now := g.cfg.Clock.Now().UnixNano()
	// An executor gives up after Timeout without the driver; after twice
	// that it cannot resend anything its window would catch.
	g.dedups.expire(time.Unix(0, now), 2*g.cfg.Timeout)
	for c := range g.streams {
		if time.Duration(now-c.lastSeen.Load()) <= g.cfg.Timeout {
			continue
		}
		if c.registered() {
			reason := fmt.Sprintf("no heartbeat for more than %s", g.cfg.Timeout)
			c.kill(reason, status.Error(codes.DeadlineExceeded, "gateway: "+reason))
		} else {
			reason := fmt.Sprintf("no registration within %s", g.cfg.Timeout)
			c.kill(reason, status.Error(codes.DeadlineExceeded, "gateway: "+reason))
		}
	}
}
