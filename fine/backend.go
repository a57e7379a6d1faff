package fine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
	"github.com/flint-mesos/flint/uri"
)

func init() { framework.RegisterBackend(framework.BackendMesosFine, New) }

// ErrNotStarted is returned by methods that need a started backend.
var ErrNotStarted = errors.New("fine: backend not started")

// Backend is the fine-grained Mesos backend (Spark's
// MesosFineGrainedSchedulerBackend): every Flint task is a Mesos task, run
// by one Flint executor per agent.
type Backend struct {
	p    framework.BackendParams
	set  settings
	log  logrus.FieldLogger
	opts []mesosconn.Option

	d          framework.Driver
	files      *uri.Server
	conn       *mesosconn.Conn
	user       string
	master     string
	exeURI     string // with the file server token: never logged
	exeLog     string // exeURI as logged
	secret     string // result server secret: never logged
	driverHost string
	httpc      *http.Client

	connReady chan struct{}
	wake      chan struct{}
	stopCh    chan struct{}
	loopDone  chan struct{}
	stopOnce  sync.Once
	stopErr   error
	releases  sync.WaitGroup

	round sync.Mutex // one launch round at a time (held offers are used once)

	mu          sync.Mutex
	tasks       map[string]*mtask       // Mesos task id → live task
	agents      map[string]*agentExec   // agent id → its executor
	held        map[string]*heldOffer   // offer id → offer in hand
	blocks      map[string]resultRef    // kept result block → its executor's result server
	tlsClients  map[string]*http.Client // per pinned certificate of a result server
	stopping    bool
	started     bool
	frameworkID string
	launched    uint64 // tasks launched, for Stats
	diag        fitDiag
}

// fitDiag remembers why offers fit no task, for the no-fit error.
type fitDiag struct {
	offersSeen bool
	unfit      map[string]string // agent → why its last offers fit no task
	lastFit    time.Time         // last round in which an offer could hold a task
	waitSince  time.Time         // since when tasks wait with none live
}

// mtask is a Flint task attempt running as a Mesos task.
type mtask struct {
	flintID uint64
	attempt int32
	agentID string
	execID  string
	cpus    int
}

// agentExec is the per-agent executor.
type agentExec struct {
	id, host string
	info     *mesos.ExecutorInfo // as first launched (Mesos needs it unchanged)
	live     int                 // tasks launched and not yet terminal
	added    bool                // reported to the driver
	cpus     int                 // task slots last offered, for DefaultParallelism
}

// heldOffer is an offer kept for tasks that may come soon.
type heldOffer struct {
	offer mesos.Offer
	since time.Time
}

var _ framework.Backend = (*Backend)(nil)

// Option configures New beyond the configuration keys (tests and embedders).
type Option func(*Backend)

// WithConnOptions passes options to the Mesos connection.
func WithConnOptions(opts ...mesosconn.Option) Option {
	return func(b *Backend) { b.opts = append(b.opts, opts...) }
}

// New builds the fine backend for a Mesos master; it is the factory
// registered as framework.BackendMesosFine.
func New(p framework.BackendParams) (framework.Backend, error) { return NewBackend(p) }

// NewBackend is New with options, returning the concrete type.
func NewBackend(p framework.BackendParams, opts ...Option) (*Backend, error) {
	if p.Master.Kind != framework.MasterMesos {
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
		p: p, set: set, log: log,
		connReady: make(chan struct{}), wake: make(chan struct{}, 1),
		stopCh: make(chan struct{}), loopDone: make(chan struct{}),
		tasks: map[string]*mtask{}, agents: map[string]*agentExec{},
		held: map[string]*heldOffer{}, blocks: map[string]resultRef{}, tlsClients: map[string]*http.Client{},
		diag: fitDiag{unfit: map[string]string{}},
		httpc: &http.Client{Timeout: max(set.networkTimeout, 10*time.Second),
			Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}},
	}
	for _, o := range opts {
		o(b)
	}
	b.master = driverside.MasterURL(p.Master)
	return b, nil
}

// Start implements framework.Backend: it serves the driver's executable
// (unless flint.executor.uri names one), then subscribes to the master.
func (b *Backend) Start(ctx context.Context, d framework.Driver) (err error) {
	b.d = d
	defer func() {
		if err != nil {
			close(b.connReady)
			b.closeFiles(context.Background())
		}
	}()
	addr, err := b.set.addr.Resolve(b.p.Master)
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.driverHost = addr.Host
	b.secret = b.p.Config.String("flint.authenticate.secret")
	if len(b.secret) < 16 {
		b.secret = uri.NewToken()
	}
	if err := b.startFiles(addr); err != nil {
		return err
	}
	conn, user, err := driverside.Subscribe(ctx, b.p.Config, driverside.Subscription{
		Master: b.master, NetworkTimeout: b.set.networkTimeout, Logger: b.log, Options: b.opts,
	}, handler{b})
	b.user = user
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.mu.Lock()
	b.conn, b.started = conn, true
	b.mu.Unlock()
	close(b.connReady)
	go b.loop()
	return nil
}

// startFiles serves the driver's own executable as the executor binary
// unless flint.executor.uri names one.
func (b *Backend) startFiles(addr driverside.Addr) error {
	fs, exe, err := driverside.ServeExecutor(b.set.executorURI, addr, b.log)
	b.files = fs
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	b.exeURI, b.exeLog = exe.URI, exe.Log
	if b.set.command == "" {
		b.set.command = "./" + driverside.URIBase(exe.URI)
	}
	return nil
}

// ReviveOffers implements framework.Backend: held offers are used at once,
// and Mesos is asked for more.
func (b *Backend) ReviveOffers() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// KillTask implements framework.Backend: the task is killed through Mesos.
func (b *Backend) KillTask(taskID uint64, executorID, reason string) {
	b.mu.Lock()
	conn := b.conn
	var agent *mesos.AgentID
	id := mesosTaskID(taskID)
	if t := b.tasks[id]; t != nil {
		agent = &mesos.AgentID{Value: t.agentID}
	}
	b.mu.Unlock()
	if conn == nil {
		return
	}
	if err := conn.Kill(mesos.TaskID{Value: id}, agent); err != nil {
		b.log.WithField("executor", executorID).Debugf("fine: kill task %d (%s): %v", taskID, reason, err)
	}
}

// MaxTaskInput implements framework.TaskSizeLimiter: a task travels to
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

// DefaultParallelism implements framework.Backend: the task slots last
// offered per agent (8 when unknown, as Spark's fine mode), at most
// flint.cores.max, at least 2.
func (b *Backend) DefaultParallelism() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, a := range b.agents {
		n += a.cpus
	}
	if n == 0 {
		n = 8
	}
	if c := int(b.set.coresMax); !math.IsInf(b.set.coresMax, 1) && c < n {
		n = c
	}
	return max(n, 2)
}

// FrameworkID is the Mesos framework id ("" before Start).
func (b *Backend) FrameworkID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.frameworkID
}

// Stats are the backend's counters.
type Stats struct {
	Launched   uint64 // Mesos tasks launched
	Running    int    // Mesos tasks not yet terminal
	HeldOffers int
	Executors  int // agents with a known executor
}

// Stats reports the backend's counters.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Launched: b.launched, Running: len(b.tasks), HeldOffers: len(b.held), Executors: len(b.agents)}
}

// Stop implements framework.Backend: held offers are declined and the
// framework torn down, which makes the master kill every task and the
// agents shut the executors down.
func (b *Backend) Stop(ctx context.Context) error {
	b.stopOnce.Do(func() {
		close(b.stopCh)
		b.mu.Lock()
		b.stopping = true
		started := b.started
		b.mu.Unlock()
		if !started {
			b.closeFiles(ctx)
			return
		}
		<-b.loopDone
		b.round.Lock()
		b.declineHeld(func(*heldOffer) bool { return true }, mesosconn.DeclineShuttingDown)
		b.round.Unlock()
		b.conn.SetDemand(false)
		b.releases.Wait()
		err := b.conn.Stop(ctx, true)
		if err != nil && !errors.Is(err, mesosconn.ErrNotSubscribed) {
			b.stopErr = fmt.Errorf("fine: tear down the framework: %w", err)
		}
		b.closeFiles(ctx)
		b.httpc.CloseIdleConnections()
		b.mu.Lock()
		for _, c := range b.tlsClients {
			c.CloseIdleConnections()
		}
		b.mu.Unlock()
		b.log.Infof("fine: stopped (framework %s torn down)", b.FrameworkID())
	})
	return b.stopErr
}

func (b *Backend) closeFiles(ctx context.Context) {
	if b.files != nil {
		if err := b.files.Close(ctx); err != nil {
			b.log.Warnf("fine: %v", err)
		}
	}
}
