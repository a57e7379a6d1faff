package fine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/launchbackoff"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func init() { backend.Register(backend.MesosFine, New) }

// ErrNotStarted is returned by methods that need a started backend.
var ErrNotStarted = errors.New("fine: backend not started")

// Backend is the fine-grained Mesos backend (Spark's
// MesosFineGrainedSchedulerBackend): every Flint task is a Mesos task, run
// by one Flint executor per agent.
//
// One goroutine owns its state: run (owner.go), started by Start. It takes
// the Mesos connection's events, the driver loop's batches (with their
// ticks) and its own timers from one inbox, in the order they came, and
// makes every call on the connection and the driver itself; other
// goroutines read what it publishes (view).
type Backend struct {
	p     backend.Params
	set   settings
	log   logrus.FieldLogger
	opts  []mesosconn.Option
	dial  mesosbackend.Dialer // nil: mesosbackend.SubscribeWith the configuration
	clock clock.Clock         // offer holds, launch back-off, exit grace

	// Set by Start before the owner runs, read-only after.
	d                       backend.Driver
	mesosbackend.AddedFiles // the file server (nil Server until Start)
	conn                    mesosbackend.Conn
	user                    string
	master                  string
	exe                     mesosbackend.Executable // the binary executors fetch
	exeLog                  string                  // its URI as logged
	secret                  string                  // result server secret: never logged
	driverHost              string
	httpc                   *http.Client
	tlsClients              sync.Map // pinned certificate of a result server → *http.Client
	// shuffle are every executor's shuffle settings (with the
	// application's shuffle token: never logged).
	shuffle *flintpb.ShuffleSettings
	// jobProps are the job's flint.* settings every executor receives.
	jobProps jobconf.Properties
	idTag    string // WithIDTag ("": random)
	idPrefix string // tags this driver's Mesos task and executor ids (mesosbackend.TaskIDPrefix)
	// predecessors are the executors of a previous driver this one shut
	// down, and when (shutdownPredecessors)
	predecessors map[string]time.Time

	own      *mesosbackend.Owner  // the owner goroutine and its inbox (owner.go)
	view     atomic.Pointer[view] // what the owner last published
	started  atomic.Bool          // Start subscribed: the owner runs
	stopping atomic.Bool          // Stop was called (set before the owner hears of it)
	stopOnce sync.Once
	stopErr  error
	releases sync.WaitGroup

	// Owned by the owner goroutine.
	chain       mesosconn.Handler     // the connection's events, as the owner handles them (deathHandler first)
	death       *deathHandler         // dead executors' exit status and stderr (death.go)
	tasks       map[string]*mtask     // Mesos task id → live task
	agents      map[string]*agentExec // agent id → its executor
	held        map[string]*heldOffer // offer id → offer in hand
	blocks      map[string]resultRef  // kept result block → its executor's result server
	frameworkID string
	launched    uint64                 // tasks launched, for Stats
	backoff     *launchbackoff.Backoff // agents whose launches were lost before their executor came up
	diag        fitDiag
	demand      backend.Demand // the driver loop's, as last applied
	ended       string         // why the master ended the framework ("" while it lives)
	shutdowns   [][2]string    // executor and agent ids Stop shuts down (flint.mesos.driver.failover)
	// svcs are the agents' shuffle services the driver named; nil until
	// one is. Stop says goodbye through it once the owner has ended.
	svcs *mesosbackend.ShuffleServices
	// Capacity bookkeeping, so that an update costs O(its agent), not
	// O(agents): the agents whose reported capacity may have changed
	// (touch), those whose held offers had slots at the last report, and
	// the slots' cpus summed over the agents (agentExec.cpus).
	dirty, slotted map[string]struct{}
	offeredCPUs    int
}

// fitDiag remembers why offers fit no task, for the no-fit error.
type fitDiag struct {
	offersSeen bool
	unfit      map[string]string    // agent → why its last offers fit no task
	filtered   []placement.Filtered // placement's reasons for the offers in hand
	unmet      []placement.Filtered // the last fresh offers declined for their constraints
	lastFit    time.Time            // last round in which an offer could hold a task
	waitSince  time.Time            // since when tasks wait with none live
}

// mtask is a Flint task attempt running as a Mesos task.
type mtask struct {
	flintID uint64
	attempt int32
	agentID string
	execID  string
	gen     int // the executor generation it was launched on (grantOwner)
	cpus    int
	short   bool // runs on cpus beside the executor's share
	reused  bool // launched on an executor already started (not a new generation)
}

// agentExec is the per-agent executor.
type agentExec struct {
	id, host string
	info     *mesos.ExecutorInfo // as first launched (Mesos needs it unchanged)
	gen      int                 // generation of info: a new one for every executor started
	genUsed  bool                // info was launched (the next new executor is a new generation)
	up       bool                // generation gen sent an update of its own: it came up
	lossSeen bool                // a task of generation gen was lost before it came up (counted once)
	exited   bool                // Mesos reported generation gen gone (FAILURE): offers made before still list it
	// agentLost: the agent is gone, and every executor with it; nothing
	// of it runs again (a returning agent has a new id)
	agentLost bool
	// launched are the generations launched whose exit Mesos has not
	// reported yet, oldest first; lastExited is the one the last FAILURE
	// was attributed to (exited), -1 for none.
	launched   []int
	lastExited int
	live       int  // tasks launched and not yet terminal
	liveCPUs   int  // their cpus
	shortLive  int  // live tasks on the executor's share (placement's ShortCPUs)
	started    bool // the executor runs (a task was launched on it)
	added      bool // reported up to the driver loop
	// goneWhy is why the executor went away (its agent lost, its exit)
	// while tasks of it were live: it is reported lost to the driver once
	// their updates ended them (reportGone), unless a new one started
	goneWhy  string
	reported int // the capacity last reported
	cpus     int // task slots last offered, for DefaultParallelism
}

// heldOffer is an offer kept for tasks that may come soon.
type heldOffer struct {
	offer mesos.Offer
	since time.Time
}

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

// WithClock replaces the wall clock of the backend's own timers (offer
// holds, launch back-off, the wait for a dead executor's exit status).
func WithClock(c clock.Clock) Option { return func(b *Backend) { b.clock = c } }

// New builds the fine backend for a Mesos master; it is the factory
// registered as backend.MesosFine.
func New(p backend.Params) (backend.Backend, error) { return NewBackend(p) }

// NewBackend is New with options, returning the concrete type.
func NewBackend(p backend.Params, opts ...Option) (*Backend, error) {
	if p.Master.Kind != backend.MasterMesos {
		return nil, fmt.Errorf("fine: master %q is not a Mesos master", p.Master.Raw)
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
		p: p, set: set, log: log, clock: clock.Real{},
		own:   mesosbackend.NewOwner(),
		tasks: map[string]*mtask{}, agents: map[string]*agentExec{},
		held: map[string]*heldOffer{}, blocks: map[string]resultRef{},
		diag: fitDiag{unfit: map[string]string{}}, backoff: launchbackoff.New(),
		httpc: &http.Client{Timeout: max(set.NetworkTimeout, 10*time.Second),
			Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}},
	}
	for _, o := range opts {
		o(b)
	}
	b.idPrefix = mesosbackend.TaskIDPrefixTagged(p.Config, b.idTag)
	b.master = mesosbackend.MasterURL(p.Master)
	return b, nil
}

// Start implements backend.Backend: it serves the driver's executable
// (unless flint.executor.uri names one), subscribes to the master, then
// starts the owner goroutine. Events the connection delivers while Start
// waits for the subscription wait in the owner's inbox; Start handles them
// before it returns.
func (b *Backend) Start(ctx context.Context, d backend.Driver) (err error) {
	b.d = d
	defer func() {
		if err != nil {
			b.own.Abandon()
			b.closeFiles(context.Background())
		}
	}()
	addr, err := b.set.Addr.Resolve(b.p.Master)
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.driverHost = addr.Host
	if b.secret, err = mesosbackend.AppSecret(b.p.Config); err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.jobProps = jobconf.FromConfig(b.p.Config)
	if b.shuffle, err = shuffleconf.DriverSettings(b.p.Config, b.secret); err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	if err := b.startFiles(addr); err != nil {
		return err
	}
	b.death = newDeathHandler(b, fetchHandler{handler{b}})
	b.chain = b.death
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
		return fmt.Errorf("fine: %w", err)
	}
	b.conn = conn
	// Start is the owner until run takes over: it handles what came while
	// it subscribed (SUBSCRIBED, reconciliation answers, first offers), so
	// the framework is registered when Start returns.
	b.own.Drain()
	b.publish()
	b.started.Store(true)
	go b.run()
	return nil
}

// startFiles serves the driver's own executable as the executor binary
// unless flint.executor.uri names one.
func (b *Backend) startFiles(addr mesosbackend.Addr) error {
	exe, err := b.StartFiles(&b.set.Executor, addr, b.log)
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.exe, b.exeLog = exe, exe.Log
	return nil
}

// kill kills a task through Mesos.
func (b *Backend) kill(taskID uint64, executorID, reason string) {
	if b.conn == nil {
		return
	}
	var agent *mesos.AgentID
	id := b.mesosTaskID(taskID)
	if t := b.tasks[id]; t != nil {
		agent = &mesos.AgentID{Value: t.agentID}
	}
	if err := b.conn.Kill(mesos.TaskID{Value: id}, agent); err != nil {
		b.log.WithField("executor", executorID).Debugf("fine: kill task %d (%s): %v", taskID, reason, err)
	}
}

// MaxTaskInput implements backend.TaskSizeLimiter: a task travels to
// Flint's Mesos executor inside its TaskInfo, in one record of the
// executor's event stream, which mesos-go reads with a 4 MiB frame limit.
func (b *Backend) MaxTaskInput() (int, string) {
	return maxLaunchRecord - taskInfoRoom, "a fine-grained task can carry (mesos-go's 4 MiB record limit on the executor's LAUNCH event; use coarse mode or files for larger inputs)"
}

const (
	// maxLaunchRecord is mesos-go's default recordio frame limit (1<<22,
	// "max protobuf size"), which the executor's subscription uses.
	maxLaunchRecord = 4 << 20
	// taskInfoRoom is what the TaskInfo's other fields (resources, the
	// executor's info, ids) may take of the record.
	taskInfoRoom = 64 << 10
)

// DefaultParallelism implements backend.Backend: the task slots last
// offered per agent (8 when unknown, as Spark's fine mode), at most
// flint.cores.max, at least 2.
func (b *Backend) DefaultParallelism() int {
	n := b.viewed().offeredCPUs
	if n == 0 {
		n = 8
	}
	if c := int(b.set.coresMax); !math.IsInf(b.set.coresMax, 1) && c < n {
		n = c
	}
	return max(n, 2)
}

// OfferFilters implements backend.OfferExplainer: why the offers in hand
// (and the last ones declined for their constraints) give no more slots.
func (b *Backend) OfferFilters() []placement.Filtered {
	return slices.Clone(b.viewed().filters)
}

// FrameworkID is the Mesos framework id ("" before Start).
func (b *Backend) FrameworkID() string { return b.viewed().frameworkID }

// Stats are the backend's counters.
type Stats struct {
	Launched   uint64 // Mesos tasks launched
	Running    int    // Mesos tasks not yet terminal
	HeldOffers int
	Executors  int // agents with a known executor
}

// Stats reports the backend's counters.
func (b *Backend) Stats() Stats { return b.viewed().stats }

// Stop implements backend.Backend: held offers are declined and the
// framework torn down, which makes the master kill every task and the
// agents shut the executors down.
func (b *Backend) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() {
		b.stopping.Store(true)
		if !b.started.Load() {
			b.closeFiles(ctx)
			return
		}
		b.post(func() { b.stop() })
		<-b.own.Done()
		b.releases.Wait()
		if b.svcs != nil { // the owner ended: Stop has it now
			b.svcs.Goodbye(ctx)
		}
		keep := mesosbackend.KeepFramework(b.p.Config)
		if keep {
			b.shutdownExecutors() // no TEARDOWN ends them: they would idle until the failover timeout
		}
		err := b.conn.Stop(ctx, !keep)
		if !mesosconn.StopReported(err) {
			b.stopErr = fmt.Errorf("fine: tear down the framework: %w", err)
		}
		b.closeFiles(ctx)
		b.httpc.CloseIdleConnections()
		b.tlsClients.Range(func(_, c any) bool {
			c.(*http.Client).CloseIdleConnections()
			return true
		})
		switch {
		case keep:
			b.log.Debugf("fine: stopped (framework %s kept for failover)", b.FrameworkID())
		case err == nil:
			b.log.Debugf("fine: stopped (framework %s torn down)", b.FrameworkID())
		default:
			b.log.Debugf("fine: stopped (framework %s not torn down: %v)", b.FrameworkID(), err)
		}
	})
	return b.stopErr
}

// stop is the owner's last input: the batches and events queued before
// Stop were handled; held offers are declined, demand withdrawn, dead
// executors' held updates dropped, and the executors Stop may shut down
// noted.
func (b *Backend) stop() {
	b.declineHeld(func(*heldOffer) bool { return true }, mesosconn.DeclineShuttingDown)
	b.conn.SetDemand(false)
	b.death.close()
	for agentID, a := range b.agents {
		if a.started {
			b.shutdowns = append(b.shutdowns, [2]string{a.id, agentID})
		}
	}
	b.own.Quit()
}

func (b *Backend) closeFiles(ctx context.Context) {
	b.CloseFiles(ctx, b.log, "fine")
}

// The driver's file server, serving the executor binary and the files a
// job adds, is b's embedded mesosbackend.AddedFiles (backend.FileServer,
// backend.FileUnserver).
var _ backend.FileUnserver = (*Backend)(nil)

// shutdownExecutors asks every agent running this driver's executor to shut it down (Stop
// without TEARDOWN, flint.mesos.driver.failover); the owner has ended.
func (b *Backend) shutdownExecutors() {
	for _, e := range b.shutdowns {
		if err := b.conn.Shutdown(mesos.ExecutorID{Value: e[0]}, mesos.AgentID{Value: e[1]}); err != nil {
			b.log.Warnf("fine: shut down executor %s on agent %s: %v", e[0], e[1], err)
		}
	}
}

var _ backend.SandboxLocator = (*Backend)(nil)

// ExecutorSandbox implements backend.SandboxLocator
// (mesosbackend.ExecutorSandbox on the backend's connection).
func (b *Backend) ExecutorSandbox(ctx context.Context, executorID string) (agentURL, dir string, err error) {
	var conn mesosbackend.Conn
	if b.started.Load() {
		conn = b.conn // set by Start before started, read-only after
	}
	if agentURL, dir, err = mesosbackend.ExecutorSandbox(ctx, conn, executorID); err != nil {
		return "", "", fmt.Errorf("fine: %w", err)
	}
	return agentURL, dir, nil
}
