package coarse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/internal/clock"
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
//
// One goroutine owns its state: run (owner.go), started by Start. It takes
// the Mesos connection's events, the gateway's (registrations, status
// updates, broken streams), the driver loop's batches (with their ticks),
// its own timers and the dynamic-allocation calls from one inbox, in the
// order they came, and makes every call on the connection, the gateway
// streams and the driver itself; other goroutines read what it publishes
// (view) or ask it (call).
type Backend struct {
	p     backend.Params
	set   settings
	log   logrus.FieldLogger
	opts  []mesosconn.Option
	dial  mesosbackend.Dialer // nil: mesosbackend.SubscribeWith the configuration
	clock clock.Clock         // offers, failures, back-offs, the death grace, Stop's waits
	// newStreams replaces the gateway server (WithStreams): nil serves one.
	newStreams func(gateway.Events) Streams

	// Set by Start before the owner runs, read-only after.
	d                       backend.Driver
	gw                      Streams          // the executors' streams: the gateway, or WithStreams' fake
	server                  *gateway.Gateway // the gateway server (nil with WithStreams)
	mesosbackend.AddedFiles                  // the file server (nil Server until Start)
	conn                    mesosbackend.Conn
	user                    string
	master                  string
	exe                     mesosbackend.Executable // the binary executors fetch
	exeLog                  string                  // its URI as logged
	secret                  string                  // the gateway secret: never logged
	gwURL                   string                  // host:port executors dial
	// certPin is the SHA-256 of the gateway's certificate with
	// flint.network.tls.enabled ("" for plaintext), given to executors.
	certPin  string
	idTag    string // WithIDTag ("": random)
	idPrefix string // starts every executor id (mesosbackend.TaskIDPrefix)

	own      *mesosbackend.Owner  // the owner goroutine and its inbox (owner.go)
	view     atomic.Pointer[view] // what the owner last published
	started  atomic.Bool          // Start subscribed: the owner runs
	stopOnce sync.Once
	stopErr  error

	// Owned by the owner goroutine.
	chain       mesosconn.Handler    // the connection's events, as the owner handles them
	gwChain     gateway.Events       // the gateway's events, as the owner handles them
	execs       map[string]*executor // launched, Mesos task not yet terminal
	nextID      int
	cores, gpus int // held by execs
	limit       int // executor target (dynamic allocation); -1 = no limit
	fails       *agentFailures
	backoff     *launchbackoff.Backoff
	stopping    bool
	frameworkID string
	diag        diagnosis
	demand      backend.Demand                // the driver loop's, as last applied
	ended       string                        // why the master ended the framework ("" while it lives)
	localSince  time.Time                     // since when offers wait for preferred hosts (zero: not waiting)
	exited      chan struct{}                 // closed and replaced whenever an executor ends
	deaths      *deaths                       // reports of executors that ended (death.go)
	svcs        *mesosbackend.ShuffleServices // the agents' shuffle services; nil until one is named
}

// executor is one executor: a Mesos task running a Flint binary in the
// coarse-executor role.
type executor struct {
	id, agentID, host string
	cores, gpus       int
	memMB             float64
	ports             []uint64 // the port numbers its launch took (placement.ExecutorLaunch.Ports)
	registered        bool
	lost              bool // reported lost to the driver (or never to be used again)
	stopRequested     bool
	streamEnded       bool // asked to stop, it closed its gateway stream: done for Stop
}

// Streams is what the backend calls on its executors' gateway streams:
// *gateway.Gateway in production, a recording fake in tests (WithStreams).
// Every call queues and returns; none blocks on an executor.
type Streams interface {
	LaunchTasks(executorID string, tds []*flintpb.TaskDescription) error
	Kill(executorID string, taskID uint64, reason string) error
	ReleaseResult(executorID, blockID string)
	ReleaseShuffle(executorID, namespace string, shuffleID int, all bool)
	StopExecutor(executorID, reason string) error
	FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error)
}

var _ Streams = (*gateway.Gateway)(nil)

var _ backend.Backend = (*Backend)(nil)

// Option configures New beyond the configuration keys (tests and embedders).
type Option func(*Backend)

// WithConnOptions passes options to the Mesos connection.
func WithConnOptions(opts ...mesosconn.Option) Option {
	return func(b *Backend) { b.opts = append(b.opts, opts...) }
}

// WithDialer replaces the subscription to the Mesos master: the backend
// talks to what d returns (a recording fake in tests, a simulated master)
// instead of dialing flint.master. WithConnOptions is then unused.
func WithDialer(d mesosbackend.Dialer) Option { return func(b *Backend) { b.dial = d } }

// WithIDTag replaces the random tag a driver taking over a framework
// (flint.mesos.driver.frameworkId) starts its Mesos task and executor ids
// with (mesosbackend.TaskIDPrefix): a simulation's run is a function of its
// seed. A new framework's ids stay untagged either way.
func WithIDTag(tag string) Option { return func(b *Backend) { b.idTag = tag } }

// WithClock replaces the wall clock of the backend's own time: offers'
// locality wait, agent exclusions and launch back-offs, the grace a dead
// executor's Mesos status gets, and Stop's waits.
func WithClock(c clock.Clock) Option { return func(b *Backend) { b.clock = c } }

// WithStreams replaces the executor gateway: Start serves none and calls
// newStreams with the events the executors' streams deliver (a recording
// fake in tests, simulated executors); executors are told to dial addr.
func WithStreams(newStreams func(gateway.Events) Streams, addr string) Option {
	return func(b *Backend) { b.newStreams, b.gwURL = newStreams, addr }
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
		p: p, set: set, log: log, limit: -1, clock: clock.Real{},
		own:     mesosbackend.NewOwner(),
		execs:   map[string]*executor{},
		fails:   newAgentFailures(set.maxAgentFailures, set.agentExclusion),
		backoff: launchbackoff.New(),
		exited:  make(chan struct{}),
	}
	if ac, on, err := p.Config.DynamicAllocation(); err != nil {
		return nil, fmt.Errorf("coarse: %w", err)
	} else if on {
		// the driver's first decision comes on its first tick; offers
		// before it launch no more than the decision core starts at
		b.limit = max(ac.MinExecutors, ac.InitialExecutors)
	}
	b.chain = fetchHandler{handler{b}}
	b.gwChain = fetchEvents{gatewayEvents{b}}
	for _, o := range opts {
		o(b)
	}
	b.idPrefix = mesosbackend.TaskIDPrefixTagged(p.Config, b.idTag)
	b.deaths = newDeaths(b)
	b.master = mesosbackend.MasterURL(p.Master)
	return b, nil
}

// Start implements backend.Backend: it serves the executor gateway and
// the driver's file server, subscribes to the Mesos master, then starts
// the owner goroutine. It fails (naming the master) when the master cannot
// be reached within min(flint.network.timeout, 60s) or refuses the
// framework. Events that come while Start waits for the subscription wait
// in the owner's inbox; Start handles them before it returns.
func (b *Backend) Start(ctx context.Context, d backend.Driver) (err error) {
	b.d = d
	defer func() {
		if err != nil {
			b.own.Abandon()
			b.closeServers(context.Background())
		}
	}()
	addr, err := b.set.Addr.Resolve(b.p.Master)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	if err := b.startGateway(addr); err != nil {
		return err
	}
	if err := b.startFiles(addr); err != nil {
		return err
	}
	dial := b.dial
	if dial == nil {
		dial = mesosbackend.SubscribeWith(b.p.Config, mesosbackend.Subscription{
			Master: b.master, NetworkTimeout: b.set.NetworkTimeout, Logger: b.log, Options: b.opts,
			Metrics: b.p.Metrics,
		})
	}
	conn, user, err := dial(ctx, mesosbackend.Inlet(b.own, &b.chain))
	b.user = user
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.conn = conn
	// Start is the owner until run takes over: it handles what came while
	// it subscribed (SUBSCRIBED, reconciliation answers, first offers).
	b.own.Drain()
	b.publish()
	b.started.Store(true)
	go b.run()
	return nil
}

func (b *Backend) startGateway(addr mesosbackend.Addr) error {
	secret, err := mesosbackend.AppSecret(b.p.Config)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	var tlsCfg *tls.Config
	if b.set.TLS {
		if tlsCfg, b.certPin, err = tlspin.Server(addr.Host, certValidity); err != nil {
			return fmt.Errorf("coarse: executor gateway: %w", err)
		}
	}
	// Every executor serves its shuffle outputs to the application's
	// other executors (framework/config/shuffleconf).
	shuffleSet, err := shuffleconf.DriverSettings(b.p.Config, secret)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	// Every flint.* setting, as Spark hands executors its spark.* ones.
	job := jobconf.FromConfig(b.p.Config)
	settings := &flintpb.ExecutorSettings{
		TaskCpus: int32(b.set.taskCPUs), MaxResultSize: b.set.MaxResultSize, MaxDirectResultSize: b.set.MaxDirectResult,
		Shuffle: shuffleSet, JobSettings: job.Settings, JobSecrets: job.Secrets,
	}
	b.secret = secret
	if b.newStreams != nil {
		b.gw = b.newStreams(gwInlet{b})
		return nil
	}
	gw, err := gateway.New(gateway.Config{
		Secret: secret, Events: gwInlet{b}, DriverID: "driver", TLS: tlsCfg,
		Settings:          settings,
		HeartbeatInterval: b.set.heartbeat, Timeout: b.set.NetworkTimeout,
		MaxResultSize: b.set.MaxResultSize, Logger: b.log,
	})
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	b.gw, b.server = gw, gw
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
	exe, err := b.StartFiles(&b.set.Executor, addr, b.log)
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

// FetchResult implements backend.Backend (the gateway is safe for
// concurrent use: the fetch does not go through the owner).
func (b *Backend) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	if !b.started.Load() {
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
func (b *Backend) DefaultParallelism() int { return max(b.viewed().cores, 2) }

// OfferFilters implements backend.OfferExplainer: why the last offers
// were not (fully) used, as placement said.
func (b *Backend) OfferFilters() []placement.Filtered {
	return slices.Clone(b.viewed().filtered)
}

// FrameworkID is the Mesos framework id ("" before Start).
func (b *Backend) FrameworkID() string { return b.viewed().frameworkID }

// GatewayAddr is the address executors connect to (FLINT_DRIVER_URL).
func (b *Backend) GatewayAddr() string { return b.gwURL }

// ExecutorInfo describes a live executor.
type ExecutorInfo struct {
	ID, AgentID, Host string
	Cores             int
	GPUs              int
	MemMB             float64
	Ports             []uint64 // the ports its launch took from the offer (mesosbackend.Executor.Ports of them)
	Registered        bool
}

// Executors lists the executors launched and not yet ended, sorted by id,
// as of the owner's last round of inputs.
func (b *Backend) Executors() []ExecutorInfo { return slices.Clone(b.viewed().executors) }

// RequestTotalExecutors sets how many executors the backend keeps
// (dynamic allocation); n < 0 removes the limit (flint.cores.max still
// applies). Excess executors are not killed: use KillExecutor. It returns
// once the owner has taken the new target.
func (b *Backend) RequestTotalExecutors(n int) {
	b.call(func() {
		b.limit = n
		b.updateDemand()
	})
}

// KillExecutor stops an executor (dynamic allocation): it is asked to stop
// and its tasks are reported lost to the driver, which resubmits them.
func (b *Backend) KillExecutor(executorID string) error {
	err := ErrNotStarted
	b.call(func() { err = b.killExecutor(executorID, "killed by the driver") })
	return err
}

// applyAllocation applies dynamic allocation's decision on the owner: the
// new target bounds launches (offers are declined, and suppressed, while
// the live executors reach it), and each released executor is stopped
// through its stream as Stop does, its loss reported with the release's
// reason. The driver loop placed no task on it since deciding, and a
// batch's launches are queued before this runs: nothing can reach it after
// its stop.
func (b *Backend) applyAllocation(a *backend.Allocation) {
	b.limit = a.Target
	for _, r := range a.Release {
		if err := b.killExecutor(r.ExecutorID, r.Reason); err != nil {
			b.log.WithField("executor", r.ExecutorID).Debugf("coarse: release: %v", err) // it ended meanwhile
			continue
		}
		b.log.WithField("executor", r.ExecutorID).Infof("coarse: executor %s %s", r.ExecutorID, r.Reason)
	}
	b.updateDemand()
}

func (b *Backend) killExecutor(executorID, reason string) error {
	e := b.execs[executorID]
	if e == nil || e.lost {
		return fmt.Errorf("coarse: no live executor %q", executorID)
	}
	e.lost, e.stopRequested = true, true
	if e.registered {
		b.d.ExecutorLost(executorID, reason, false)
		if err := b.gw.StopExecutor(executorID, reason); err == nil {
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
	if b.conn == nil {
		return
	}
	agent := mesos.AgentID{Value: e.agentID}
	if err := b.conn.Kill(mesos.TaskID{Value: e.id}, &agent); err != nil {
		b.log.WithField("executor", e.id).Warnf("coarse: kill executor %s through Mesos: %v", e.id, err)
	}
}

// Stop implements backend.Backend: executors are asked to stop and
// given flint.mesos.coarse.shutdownTimeout to exit, stragglers are killed
// through Mesos, the owner ends, the framework is torn down and the
// servers closed.
func (b *Backend) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() {
		if !b.started.Load() {
			b.closeServers(ctx)
			return
		}
		b.stopExecutors(ctx)
		b.post(func() {
			b.deaths.close()
			b.own.Quit()
		})
		<-b.own.Done()
		b.deaths.wait()
		if b.svcs != nil { // the owner ended: Stop has it now
			b.svcs.Goodbye(ctx)
		}
		err := b.conn.Stop(ctx, !b.set.KeepFramework)
		if !mesosconn.StopReported(err) {
			b.stopErr = fmt.Errorf("coarse: tear down the framework: %w", err)
		}
		b.closeServers(ctx)
		switch {
		case b.set.KeepFramework:
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
// to end, then kills what is left and waits a little more. The owner
// keeps handling events meanwhile: those ends come through it.
func (b *Backend) stopExecutors(ctx context.Context) {
	b.call(func() {
		b.stopping = true
		b.conn.SetDemand(false)
		for _, e := range b.execs {
			e.stopRequested = true
			if e.registered && !e.lost && b.gw.StopExecutor(e.id, "the driver is stopping") == nil {
				continue
			}
			b.killMesosTask(e)
		}
	})
	if b.waitExecutors(ctx, b.set.shutdownTimeout) {
		return
	}
	b.call(func() {
		left := 0
		for _, e := range b.execs {
			if !e.streamEnded {
				left++
				b.killMesosTask(e)
			}
		}
		b.log.Warnf("coarse: %d executor(s) still running after %s; killed them through Mesos", left, b.set.shutdownTimeout)
	})
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
	timeout := b.clock.After(d)
	var grace <-chan time.Time
	for {
		var alive, streaming int
		var ch chan struct{}
		if !b.call(func() {
			alive, ch = len(b.execs), b.exited
			for _, e := range b.execs {
				if !e.streamEnded {
					streaming++
				}
			}
		}) {
			return true // the owner ended: nothing is left to wait for
		}
		if alive == 0 {
			return true
		}
		if streaming == 0 && grace == nil {
			grace = b.clock.After(streamEndedGrace)
		}
		select {
		case <-ch:
		case <-grace:
			return true
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (b *Backend) closeServers(ctx context.Context) {
	if b.server != nil {
		_ = b.server.Close()
	}
	b.CloseFiles(ctx, b.log, "coarse")
}

// The driver's file server, serving the executor binary and the files a
// job adds, is b's embedded mesosbackend.AddedFiles (backend.FileServer,
// backend.FileUnserver).
var _ backend.FileUnserver = (*Backend)(nil)

var _ backend.SandboxLocator = (*Backend)(nil)

// ExecutorSandbox implements backend.SandboxLocator
// (mesosbackend.ExecutorSandbox on the backend's connection).
func (b *Backend) ExecutorSandbox(ctx context.Context, executorID string) (agentURL, dir string, err error) {
	var conn mesosbackend.Conn
	if b.started.Load() {
		conn = b.conn // set by Start before started, read-only after
	}
	if agentURL, dir, err = mesosbackend.ExecutorSandbox(ctx, conn, executorID); err != nil {
		return "", "", fmt.Errorf("coarse: %w", err)
	}
	return agentURL, dir, nil
}
