package coarse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/uri"
)

func init() { framework.RegisterBackend(framework.BackendMesosCoarse, New) }

// ErrNotStarted is returned by methods that need a started backend.
var ErrNotStarted = errors.New("coarse: backend not started")

// reviveInterval re-offers free executor slots periodically so locality
// waits expire even when no task ends, and drives the no-executor check.
const reviveInterval = time.Second

// Backend is the coarse-grained Mesos backend (Spark's
// MesosCoarseGrainedSchedulerBackend): it turns Mesos offers into
// long-lived executor processes, which connect back to its gateway, and
// offers their free slots to the driver.
type Backend struct {
	p    framework.BackendParams
	set  settings
	log  logrus.FieldLogger
	opts []mesosconn.Option

	d      framework.Driver
	gw     *gateway.Gateway
	files  *uri.Server
	conn   *mesosconn.Conn
	user   string
	master string
	exeURI string // with the file server token: never logged
	exeLog string // exeURI as logged
	secret string // the gateway secret: never logged
	gwURL  string // host:port executors dial
	// certPin is the SHA-256 of the gateway's certificate with
	// flint.network.tls.enabled ("" for plaintext), given to executors.
	certPin string

	connReady chan struct{} // closed once conn is set (or Start failed)
	wake      chan struct{}
	stopCh    chan struct{}
	loopDone  chan struct{}
	stopOnce  sync.Once
	stopErr   error

	mu          sync.Mutex
	execs       map[string]*executor // launched, Mesos task not yet terminal
	nextID      int
	cores, gpus int // held by execs
	limit       int // executor target (dynamic allocation); -1 = no limit
	fails       *agentFailures
	stopping    bool
	frameworkID string
	started     bool
	diag        diagnosis
	localSince  time.Time     // since when offers wait for preferred hosts (zero: not waiting)
	exited      chan struct{} // closed and replaced whenever an executor ends
}

// executor is one executor: a Mesos task running a Flint binary in the
// coarse-executor role.
type executor struct {
	id, agentID, host string
	cores, gpus       int
	memMB             float64
	registered        bool
	lost              bool // reported lost to the driver (or never to be used again)
	stopRequested     bool
	free              int
	tasks             map[uint64]int // running task → cpus
}

var _ framework.Backend = (*Backend)(nil)

// Option configures New beyond the configuration keys (tests and embedders).
type Option func(*Backend)

// WithConnOptions passes options to the Mesos connection.
func WithConnOptions(opts ...mesosconn.Option) Option {
	return func(b *Backend) { b.opts = append(b.opts, opts...) }
}

// New builds the coarse backend for a Mesos master; it is the factory
// registered as framework.BackendMesosCoarse.
func New(p framework.BackendParams) (framework.Backend, error) { return NewBackend(p) }

// NewBackend is New with options, returning the concrete type.
func NewBackend(p framework.BackendParams, opts ...Option) (*Backend, error) {
	if p.Master.Kind != framework.MasterMesos {
		return nil, fmt.Errorf("coarse: master %q is not a Mesos master", p.Master.Raw)
	}
	set, err := readSettings(p.Config)
	if err != nil {
		return nil, err
	}
	log := p.Logger
	if log == nil {
		log = logrus.StandardLogger()
	}
	b := &Backend{
		p: p, set: set, log: log, limit: -1,
		connReady: make(chan struct{}), wake: make(chan struct{}, 1),
		stopCh: make(chan struct{}), loopDone: make(chan struct{}),
		execs:  map[string]*executor{},
		fails:  newAgentFailures(set.maxAgentFailures, set.agentExclusion),
		exited: make(chan struct{}),
	}
	for _, o := range opts {
		o(b)
	}
	b.master = driverside.MasterURL(p.Master)
	return b, nil
}

// Start implements framework.Backend: it serves the executor gateway and
// the driver's file server, then subscribes to the Mesos master. It fails
// (naming the master) when the master cannot be reached within
// min(flint.network.timeout, 60s) or refuses the framework.
func (b *Backend) Start(ctx context.Context, d framework.Driver) (err error) {
	b.d = d
	defer func() {
		if err != nil {
			close(b.connReady)
			b.closeServers(context.Background())
		}
	}()
	addr, err := b.set.addr.Resolve(b.p.Master)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	if err := b.startGateway(addr); err != nil {
		return err
	}
	if err := b.startFiles(addr); err != nil {
		return err
	}
	conn, user, err := driverside.Subscribe(ctx, b.p.Config, driverside.Subscription{
		Master: b.master, NetworkTimeout: b.set.networkTimeout, Logger: b.log, Options: b.opts,
	}, handler{b})
	b.user = user
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.mu.Lock()
	b.conn, b.started = conn, true
	b.mu.Unlock()
	close(b.connReady)
	go b.loop()
	return nil
}

func (b *Backend) startGateway(addr driverside.Addr) error {
	secret := b.p.Config.String("flint.authenticate.secret")
	if secret == "" {
		secret = gateway.NewSecret()
	}
	var tlsCfg *tls.Config
	if b.set.tls {
		var err error
		if tlsCfg, b.certPin, err = tlspin.Server(addr.Host, certValidity); err != nil {
			return fmt.Errorf("coarse: executor gateway: %w", err)
		}
	}
	gw, err := gateway.New(gateway.Config{
		Secret: secret, Events: gatewayEvents{b}, DriverID: "driver", TLS: tlsCfg,
		Properties: map[string]string{
			"flint.task.cpus":                strconv.Itoa(b.set.taskCPUs),
			"flint.driver.maxResultSize":     strconv.FormatInt(b.set.maxResultSize, 10),
			"flint.task.maxDirectResultSize": strconv.FormatInt(b.set.maxDirectResult, 10),
			"flint.network.timeout":          b.set.networkTimeout.String(),
		},
		HeartbeatInterval: b.set.heartbeat, Timeout: b.set.networkTimeout,
		MaxResultSize: b.set.maxResultSize, Logger: b.log,
	})
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.gw = gw
	b.secret = secret
	lis, err := addr.Listen(addr.GatewayPort, "executor gateway")
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	if err := gw.Serve(lis); err != nil {
		lis.Close()
		return fmt.Errorf("coarse: %w", err)
	}
	b.gwURL = addr.Advertised(lis)
	return nil
}

// startFiles serves the driver's own executable as the executor binary
// unless flint.executor.uri names one.
func (b *Backend) startFiles(addr driverside.Addr) error {
	fs, exe, err := driverside.ServeExecutor(b.set.executorURI, addr, b.log)
	b.files = fs
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.exeURI, b.exeLog = exe.URI, exe.Log
	if b.set.command == "" {
		b.set.command = "./" + driverside.URIBase(exe.URI)
	}
	return nil
}

// ReviveOffers implements framework.Backend.
func (b *Backend) ReviveOffers() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// KillTask implements framework.Backend.
func (b *Backend) KillTask(taskID uint64, executorID, reason string) {
	if b.gw == nil {
		return
	}
	if err := b.gw.Kill(executorID, taskID, reason); err != nil {
		b.log.WithField("executor", executorID).Debugf("coarse: kill task %d: %v", taskID, err)
	}
}

// FetchResult implements framework.Backend.
func (b *Backend) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	if b.gw == nil {
		return nil, ErrNotStarted
	}
	return b.gw.FetchResult(ctx, executorID, blockID)
}

// ReleaseResult implements framework.Backend.
func (b *Backend) ReleaseResult(executorID, blockID string) {
	if b.gw != nil {
		b.gw.ReleaseResult(executorID, blockID)
	}
}

// MaxTaskInput implements framework.TaskSizeLimiter: a launch travels in
// one gRPC message on the executor's stream, bounded by the gateway's
// message limit (less room for the description's other fields).
func (b *Backend) MaxTaskInput() (int, string) {
	return gateway.DefaultMaxMessageSize - taskFieldsRoom, "a coarse-mode launch message can carry (the driver↔executor gRPC message limit)"
}

// certValidity is how long the gateway's self-signed certificate is valid:
// longer than any application is expected to run.
const certValidity = 5 * 365 * 24 * time.Hour

// taskFieldsRoom is what a task description's fields other than the input
// may take of a message.
const taskFieldsRoom = 64 << 10

// DefaultParallelism implements framework.Backend: the cores of registered
// executors, at least 2 (Spark's rule).
func (b *Backend) DefaultParallelism() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.execs {
		if e.registered && !e.lost {
			n += e.cores
		}
	}
	return max(n, 2)
}

// FrameworkID is the Mesos framework id ("" before Start).
func (b *Backend) FrameworkID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.frameworkID
}

// GatewayAddr is the address executors connect to (FLINT_DRIVER_URL).
func (b *Backend) GatewayAddr() string { return b.gwURL }

// ExecutorInfo describes a live executor.
type ExecutorInfo struct {
	ID, AgentID, Host string
	Cores, FreeCores  int
	GPUs              int
	MemMB             float64
	Registered        bool
}

// Executors lists the executors launched and not yet ended, sorted by id.
func (b *Backend) Executors() []ExecutorInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ExecutorInfo, 0, len(b.execs))
	for _, e := range b.execs {
		if e.lost {
			continue
		}
		out = append(out, ExecutorInfo{ID: e.id, AgentID: e.agentID, Host: e.host, Cores: e.cores, FreeCores: e.free,
			GPUs: e.gpus, MemMB: e.memMB, Registered: e.registered})
	}
	sortExecutors(out)
	return out
}

// RequestTotalExecutors sets how many executors the backend keeps
// (dynamic allocation); n < 0 removes the limit (flint.cores.max still
// applies). Excess executors are not killed: use KillExecutor.
func (b *Backend) RequestTotalExecutors(n int) {
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
	b.updateDemand()
}

// KillExecutor stops an executor (dynamic allocation): it is asked to stop
// and its tasks are reported lost to the driver, which resubmits them.
func (b *Backend) KillExecutor(executorID string) error {
	b.mu.Lock()
	e := b.execs[executorID]
	if e == nil || e.lost {
		b.mu.Unlock()
		return fmt.Errorf("coarse: no live executor %q", executorID)
	}
	e.lost, e.stopRequested = true, true
	registered := e.registered
	b.mu.Unlock()
	if registered {
		b.d.ExecutorLost(executorID, "killed by the driver", false)
		if err := b.gw.StopExecutor(executorID, "killed by the driver"); err == nil {
			b.updateDemand()
			return nil
		}
		// Its stream is gone: end the process through Mesos instead.
	}
	b.killMesosTask(e)
	b.updateDemand()
	return nil
}

func (b *Backend) killMesosTask(e *executor) {
	b.mu.Lock()
	conn := b.conn
	b.mu.Unlock()
	if conn == nil {
		return
	}
	agent := mesos.AgentID{Value: e.agentID}
	if err := conn.Kill(mesos.TaskID{Value: e.id}, &agent); err != nil {
		b.log.WithField("executor", e.id).Warnf("coarse: kill executor %s through Mesos: %v", e.id, err)
	}
}

// Stop implements framework.Backend: executors are asked to stop and
// given flint.mesos.coarse.shutdownTimeout to exit, stragglers are killed
// through Mesos, the framework is torn down and the servers closed.
func (b *Backend) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() {
		close(b.stopCh)
		b.mu.Lock()
		b.stopping = true
		started := b.started
		b.mu.Unlock()
		if !started {
			b.closeServers(ctx)
			return
		}
		<-b.loopDone
		b.conn.SetDemand(false)
		b.stopExecutors(ctx)
		err := b.conn.Stop(ctx, true)
		if err != nil && !errors.Is(err, mesosconn.ErrNotSubscribed) {
			b.stopErr = fmt.Errorf("coarse: tear down the framework: %w", err)
		}
		b.closeServers(ctx)
		b.log.Infof("coarse: stopped (framework %s torn down)", b.FrameworkID())
	})
	return b.stopErr
}

// stopExecutors asks every executor to stop, waits for their Mesos tasks
// to end, then kills what is left and waits a little more.
func (b *Backend) stopExecutors(ctx context.Context) {
	b.mu.Lock()
	var asked, kill []*executor
	for _, e := range b.execs {
		e.stopRequested = true
		if e.registered && !e.lost {
			asked = append(asked, e)
		} else {
			kill = append(kill, e)
		}
	}
	b.mu.Unlock()
	for _, e := range asked {
		if err := b.gw.StopExecutor(e.id, "the driver is stopping"); err != nil {
			kill = append(kill, e)
		}
	}
	for _, e := range kill {
		b.killMesosTask(e)
	}
	if b.waitExecutors(ctx, b.set.shutdownTimeout) {
		return
	}
	b.mu.Lock()
	var left []*executor
	for _, e := range b.execs {
		left = append(left, e)
	}
	b.mu.Unlock()
	b.log.Warnf("coarse: %d executor(s) still running after %s; killing them through Mesos", len(left), b.set.shutdownTimeout)
	for _, e := range left {
		b.killMesosTask(e)
	}
	if !b.waitExecutors(ctx, 10*time.Second) {
		b.log.Warn("coarse: executors still reported running; tearing the framework down anyway")
	}
}

// waitExecutors waits until no executor's Mesos task is alive.
func (b *Backend) waitExecutors(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		b.mu.Lock()
		n, ch := len(b.execs), b.exited
		b.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (b *Backend) closeServers(ctx context.Context) {
	if b.gw != nil {
		_ = b.gw.Close()
	}
	if b.files != nil {
		if err := b.files.Close(ctx); err != nil {
			b.log.Warnf("coarse: %v", err)
		}
	}
}
