package coarse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/jobconf"
	"github.com/flint-mesos/flint/executor/shuffleenv"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func init() { backend.Register(backend.MesosCoarse, New) }

// ErrNotStarted is returned by methods that need a started backend.
var ErrNotStarted = errors.New("coarse: backend not started")

// Backend is the coarse-grained Mesos backend (Spark's
// MesosCoarseGrainedSchedulerBackend): it turns Mesos offers into
// long-lived executor processes, which connect back to its gateway, and
// reports them with their cores to the driver loop, whose batches it
// applies on the executors' streams.
type Backend struct {
	p    backend.Params
	set  settings
	log  logrus.FieldLogger
	opts []mesosconn.Option

	d                       backend.Driver
	gw                      *gateway.Gateway
	mesosbackend.AddedFiles // the file server (nil Server until Start)
	conn                    *mesosconn.Conn
	user                    string
	master                  string
	exe                     mesosbackend.Executable // the binary executors fetch
	exeLog                  string                  // its URI as logged
	secret                  string                  // the gateway secret: never logged
	gwURL                   string                  // host:port executors dial
	// certPin is the SHA-256 of the gateway's certificate with
	// flint.network.tls.enabled ("" for plaintext), given to executors.
	certPin string

	connReady chan struct{} // closed once conn is set (or Start failed)
	stopOnce  sync.Once
	stopErr   error

	mu          sync.Mutex
	execs       map[string]*executor // launched, Mesos task not yet terminal
	nextID      int
	idPrefix    string // starts every executor id (mesosbackend.TaskIDPrefix)
	cores, gpus int    // held by execs
	limit       int    // executor target (dynamic allocation); -1 = no limit
	fails       *agentFailures
	backoff     *launchbackoff.Backoff
	now         func() time.Time // the clock of offers, failures and back-offs (tests inject one)
	stopping    bool
	frameworkID string
	started     bool
	diag        diagnosis
	demand      backend.Demand // the driver loop's, as last applied
	ended       string         // why the master ended the framework ("" while it lives)
	localSince  time.Time      // since when offers wait for preferred hosts (zero: not waiting)
	exited      chan struct{}  // closed and replaced whenever an executor ends
	deaths      *deaths        // reports of executors that ended (death.go)
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
	streamEnded       bool // asked to stop, it closed its gateway stream: done for Stop
}

var _ backend.Backend = (*Backend)(nil)

// Option configures New beyond the configuration keys (tests and embedders).
type Option func(*Backend)

// WithConnOptions passes options to the Mesos connection.
func WithConnOptions(opts ...mesosconn.Option) Option {
	return func(b *Backend) { b.opts = append(b.opts, opts...) }
}

// New builds the coarse backend for a Mesos master; it is the factory
// registered as backend.MesosCoarse.
func New(p backend.Params) (backend.Backend, error) { return NewBackend(p) }

// NewBackend is New with options, returning the concrete type.
func NewBackend(p backend.Params, opts ...Option) (*Backend, error) {
	if p.Master.Kind != backend.MasterMesos {
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
		connReady: make(chan struct{}), deaths: newDeaths(),
		execs:    map[string]*executor{},
		fails:    newAgentFailures(set.maxAgentFailures, set.agentExclusion),
		backoff:  launchbackoff.New(),
		now:      time.Now,
		exited:   make(chan struct{}),
		idPrefix: mesosbackend.TaskIDPrefix(p.Config),
	}
	for _, o := range opts {
		o(b)
	}
	b.master = mesosbackend.MasterURL(p.Master)
	return b, nil
}

// Start implements backend.Backend: it serves the executor gateway and
// the driver's file server, then subscribes to the Mesos master. It fails
// (naming the master) when the master cannot be reached within
// min(flint.network.timeout, 60s) or refuses the framework.
func (b *Backend) Start(ctx context.Context, d backend.Driver) (err error) {
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
	conn, user, err := mesosbackend.Subscribe(ctx, b.p.Config, mesosbackend.Subscription{
		Master: b.master, NetworkTimeout: b.set.networkTimeout, Logger: b.log, Options: b.opts,
	}, fetchHandler{handler{b}})
	b.user = user
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.mu.Lock()
	b.conn, b.started = conn, true
	b.mu.Unlock()
	close(b.connReady)
	return nil
}

func (b *Backend) startGateway(addr mesosbackend.Addr) error {
	secret, err := mesosbackend.AppSecret(b.p.Config)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	var tlsCfg *tls.Config
	if b.set.tls {
		if tlsCfg, b.certPin, err = tlspin.Server(addr.Host, certValidity); err != nil {
			return fmt.Errorf("coarse: executor gateway: %w", err)
		}
	}
	// Every executor serves its shuffle outputs to the application's
	// other executors (executor/shuffleenv).
	shuffleProps, err := shuffleenv.DriverProperties(b.p.Config, secret)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	// Every flint.* setting, as Spark hands executors its spark.* ones.
	job := jobconf.FromConfig(b.p.Config)
	settings := &flintpb.ExecutorSettings{
		TaskCpus: int32(b.set.taskCPUs), MaxResultSize: b.set.maxResultSize, MaxDirectResultSize: b.set.maxDirectResult,
		Shuffle: shuffleProps, JobSettings: job.Settings, JobSecrets: job.Secrets,
	}
	gw, err := gateway.New(gateway.Config{
		Secret: secret, Events: fetchEvents{gatewayEvents{b}}, DriverID: "driver", TLS: tlsCfg,
		Settings:          settings,
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
func (b *Backend) startFiles(addr mesosbackend.Addr) error {
	exe, err := b.StartFiles(b.set.executorURI, b.set.executorSHA, addr, b.log, b.set.env, &b.set.command)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.exe, b.exeLog = exe, exe.Log
	return nil
}

// kill asks an executor to kill a task.
func (b *Backend) kill(taskID uint64, executorID, reason string) {
	if err := b.gw.Kill(executorID, taskID, reason); err != nil {
		b.log.WithField("executor", executorID).Debugf("coarse: kill task %d: %v", taskID, err)
	}
}

// FetchResult implements backend.Backend.
func (b *Backend) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	if b.gw == nil {
		return nil, ErrNotStarted
	}
	return b.gw.FetchResult(ctx, executorID, blockID)
}

// MaxTaskInput implements backend.TaskSizeLimiter: a launch travels in
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

// DefaultParallelism implements backend.Backend: the cores of registered
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

// OfferFilters implements backend.OfferExplainer: why the last offers
// were not (fully) used, as placement said.
func (b *Backend) OfferFilters() []placement.Filtered {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.diag.filtered)
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
	Cores             int
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
		out = append(out, ExecutorInfo{ID: e.id, AgentID: e.agentID, Host: e.host, Cores: e.cores,
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

// Stop implements backend.Backend: executors are asked to stop and
// given flint.mesos.coarse.shutdownTimeout to exit, stragglers are killed
// through Mesos, the framework is torn down and the servers closed.
func (b *Backend) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.stopping = true
		started := b.started
		b.mu.Unlock()
		if !started {
			b.deaths.close()
			b.closeServers(ctx)
			return
		}
		b.conn.SetDemand(false)
		b.stopExecutors(ctx)
		err := b.conn.Stop(ctx, !b.set.keepFramework)
		if !mesosconn.StopReported(err) {
			b.stopErr = fmt.Errorf("coarse: tear down the framework: %w", err)
		}
		b.deaths.close()
		b.closeServers(ctx)
		switch {
		case b.set.keepFramework:
			b.log.Infof("coarse: stopped; framework %s stays registered for flint.mesos.failoverTimeout (flint.mesos.driver.failover): a driver started with flint.mesos.driver.frameworkId=%s takes it over", b.FrameworkID(), b.FrameworkID())
		case err == nil:
			b.log.Debugf("coarse: stopped (framework %s torn down)", b.FrameworkID())
		default:
			b.log.Debugf("coarse: stopped (framework %s not torn down: %v)", b.FrameworkID(), err)
		}
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
		if e.streamEnded {
			continue
		}
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

// streamEndedGrace is how long Stop still waits for the Mesos terminal
// update of executors that, asked to stop, have already ended their gateway
// stream. Normally the update follows within milliseconds and the executor
// ends TASK_FINISHED before the TEARDOWN; a master that restarted meanwhile
// may never hear of the exit, and waiting the whole shutdown timeout for it
// would only delay the TEARDOWN that reaches whatever remains.
const streamEndedGrace = 2 * time.Second

// waitExecutors waits until every executor's Mesos task has ended, or,
// once the executors left have all ended their gateway streams, for at most
// streamEndedGrace more.
func (b *Backend) waitExecutors(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var grace <-chan time.Time
	for {
		b.mu.Lock()
		alive, streaming, ch := len(b.execs), 0, b.exited
		for _, e := range b.execs {
			if !e.streamEnded {
				streaming++
			}
		}
		b.mu.Unlock()
		if alive == 0 {
			return true
		}
		if streaming == 0 && grace == nil {
			g := time.NewTimer(streamEndedGrace)
			defer g.Stop()
			grace = g.C
		}
		select {
		case <-ch:
		case <-grace:
			return true
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
	b.CloseFiles(ctx, b.log, "coarse")
}

// The driver's file server, serving the executor binary and the files a
// job adds, is b's embedded mesosbackend.AddedFiles (backend.FileServer,
// backend.FileUnserver).
var _ backend.FileUnserver = (*Backend)(nil)
