package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/deploy/minimesos/agent/statusupdate"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/uri"
)

// Errors.
var (
	ErrConfig  = errors.New("agent: invalid config")
	ErrClosed  = errors.New("agent: closed")
	ErrStarted = errors.New("agent: already started")
)

// FetchFunc fetches URIs into a sandbox before a command runs (the uri
// package's fetcher, adapted).
type FetchFunc func(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) error

// Config configures an agent. Zero durations take the defaults noted.
type Config struct {
	// ID re-registers under this agent id (empty: the master assigns one,
	// or the id recovered from WorkDir is used).
	ID       string
	Hostname string // default os.Hostname
	WorkDir  string // required
	// Endpoint is host:port of the agent's HTTP server (Handler), given to
	// executors as MESOS_AGENT_ENDPOINT. Required to launch custom executors.
	Endpoint string
	// Resources and Attributes in Mesos' flag syntax (ParseResources).
	// Of cpus, mem, disk and ports, those Resources does not name are
	// detected from the host (DetectResources); "" detects all four.
	Resources  string
	Attributes string
	// Fetch fetches CommandInfo.uris (default: the uri package's fetcher
	// with a FetcherCacheBytes cache in <work_dir>/fetch).
	Fetch             FetchFunc
	FetcherCacheBytes int64 // default 2 GiB, as Mesos' --fetcher_cache_size
	// Env is the environment executors inherit (nil: os.Environ()).
	Env []string
	// SecretResolver resolves the Mesos secrets of launches, as Mesos'
	// --secret_resolver module (nil: containerizer.DefaultSecretResolver,
	// value secrets only; containerizer.DirSecretResolver is a file-backed
	// store that resolves references too).
	SecretResolver containerizer.SecretResolver
	// Containerizers are the agent's containerizers, as Mesos'
	// --containerizers: "mesos" (processes; the default) and "docker"
	// (DOCKER ContainerInfos run through the Docker Engine API at
	// DockerEndpoint, "" meaning DOCKER_HOST or /var/run/docker.sock).
	Containerizers []string
	DockerEndpoint string

	RegistrationTimeout    time.Duration // executor must subscribe within (1m)
	ReregistrationTimeout  time.Duration // recovered executor must re-subscribe within (5s)
	ShutdownGrace          time.Duration // executor shutdown grace (5s)
	RecoveryTimeout        time.Duration // MESOS_RECOVERY_TIMEOUT (15m)
	SubscriptionBackoffMax time.Duration // MESOS_SUBSCRIPTION_BACKOFF_MAX (2s)
	KillGrace              time.Duration // command task kill grace (3s)
	GCDelay                time.Duration // sandbox removal after exit (1 week)
	UpdateRetryMin         time.Duration // status update retry (10s)
	UpdateRetryMax         time.Duration // status update retry cap (10m)
	ReregisterBackoff      time.Duration // between registration attempts (1s)
	PollInterval           time.Duration // liveness poll of recovered processes (100ms)
	// Clock drives the registration loop (the wait between attempts and the
	// watchdog that re-registers once the master's pings stopped) and the
	// kill grace periods of processes (SIGTERM, then SIGKILL once the grace
	// has passed on it): the wall clock by default; tests drive a clock.Fake.
	Clock  clock.Clock
	Logger logrus.FieldLogger
}

func (c *Config) defaults() error {
	var errs []error
	if c.WorkDir == "" {
		errs = append(errs, fmt.Errorf("%w: WorkDir is required", ErrConfig))
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	if c.FetcherCacheBytes <= 0 {
		c.FetcherCacheBytes = 2 << 30
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RegistrationTimeout, time.Minute)
	def(&c.ReregistrationTimeout, 5*time.Second)
	def(&c.ShutdownGrace, 5*time.Second)
	def(&c.RecoveryTimeout, 15*time.Minute)
	def(&c.SubscriptionBackoffMax, 2*time.Second)
	def(&c.KillGrace, 3*time.Second)
	def(&c.GCDelay, 7*24*time.Hour)
	def(&c.UpdateRetryMin, 10*time.Second)
	def(&c.UpdateRetryMax, 10*time.Minute)
	def(&c.ReregisterBackoff, time.Second)
	def(&c.PollInterval, 100*time.Millisecond)
	if len(c.Containerizers) == 0 {
		c.Containerizers = []string{"mesos"}
	}
	for _, z := range c.Containerizers {
		if z != "mesos" && z != "docker" {
			errs = append(errs, fmt.Errorf("%w: unknown containerizer %q (mesos, docker)", ErrConfig, z))
		}
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = logrus.StandardLogger()
	}
	return errors.Join(errs...)
}

// Agent is one minimesos agent. Create with New, then Start.
type Agent struct {
	cfg        Config
	log        logrus.FieldLogger
	resources  []mesos.Resource
	attributes []mesos.Attribute
	sum        *statusupdate.Manager

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	agentID string
	master  link.Master
	started bool
	closed  bool
	// killing: the agent was closed by Close (its processes are killed),
	// not by Stop (they are left for the next agent).
	killing     bool
	inbox       []link.MasterMessage
	inboxReady  chan struct{}
	reregister  chan struct{}
	lastPing    time.Time
	pingEvery   time.Duration
	pingTimeout time.Duration // silence after which the master is gone
	frameworks  map[string]*framework
	gcTimers    map[*time.Timer]struct{}

	// checkpoint state usable without a.mu
	ckptFW    sync.Map     // framework id → true for checkpointing frameworks
	ckptAgent atomic.Value // agent id (string) once known
	ckptAny   atomic.Bool  // some framework checkpoints
	ckptMu    sync.Mutex
	ckptEmpty bool // updates.json was last written with no update
	ckpt      *checkpointWriter

	docker *containerizer.Docker // nil unless Config.Containerizers has "docker"
}

var _ link.Agent = (*Agent)(nil)

// New validates cfg, recovers checkpointed state from the work dir and
// returns an agent that is not yet registered.
func New(cfg Config) (*Agent, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	_, err1 := ParseResources(cfg.Resources)
	attrs, err2 := ParseAttributes(cfg.Attributes)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("agent: work dir: %w", err)
	}
	res, err := DetectResources(cfg.Resources, cfg.WorkDir, func(err error) { cfg.Logger.Warn(err.Error()) })
	if err != nil {
		return nil, err
	}
	if cfg.Fetch == nil {
		cache, err := uri.NewCache(filepath.Join(cfg.WorkDir, "fetch"), cfg.FetcherCacheBytes)
		if err != nil {
			return nil, fmt.Errorf("agent: fetcher cache: %w", err)
		}
		f := uri.New(uri.Config{Cache: cache})
		cfg.Fetch = func(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) error {
			_, err := f.Fetch(ctx, uris, sandbox)
			return err
		}
	}
	docker, err := newDocker(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Agent{docker: docker,
		cfg: cfg, log: cfg.Logger, resources: res, attributes: attrs,
		ctx: ctx, cancel: cancel, agentID: cfg.ID,
		inboxReady: make(chan struct{}, 1), reregister: make(chan struct{}, 1),
		frameworks: map[string]*framework{}, gcTimers: map[*time.Timer]struct{}{},
	}
	a.ckpt = newCheckpointWriter(cfg.Logger, a.checkpointUpdates)
	a.sum = statusupdate.New(statusupdate.Config{
		Forward: a.forwardUpdate, RetryMin: cfg.UpdateRetryMin, RetryMax: cfg.UpdateRetryMax,
		Changed: a.ckpt.updatesChanged, Logger: cfg.Logger,
	})
	if err := a.recover(); err != nil {
		a.sum.Close()
		a.ckpt.close()
		cancel()
		return nil, err
	}
	return a, nil
}

// ID is the agent id assigned by the master ("" before registration).
func (a *Agent) ID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.agentID
}

// Resources are the agent's total resources.
func (a *Agent) Resources() []mesos.Resource { return a.resources }

// Start registers with m and keeps the agent registered (re-registering
// after a master restart, ErrUnknownAgent or missed pings) until Stop or
// Close. It returns once the first registration succeeded, or with ctx's
// error if ctx ends first (registration attempts go on in the background).
func (a *Agent) Start(ctx context.Context, m link.Master) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	if a.started {
		a.mu.Unlock()
		return ErrStarted
	}
	a.started, a.master = true, m
	a.mu.Unlock()
	first := make(chan error, 1)
	a.wg.Add(2)
	go a.inboxLoop()
	go a.registrationLoop(a.ctx, first)
	select {
	case err := <-first:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// registration is what the agent (re-)registers with: its info, and the
// frameworks, custom executors and tasks it still runs, as Mesos' agent
// builds ReregisterSlaveMessage.
func (a *Agent) registration() link.Registration {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := link.Registration{
		AgentInfo: mesos.AgentInfo{Hostname: a.cfg.Hostname, Resources: a.resources, Attributes: a.attributes},
		Endpoint:  a.cfg.Endpoint,
	}
	if a.agentID != "" {
		r.AgentInfo.ID = &mesos.AgentID{Value: a.agentID}
	}
	for _, fw := range a.frameworks {
		if len(fw.executors) == 0 {
			continue
		}
		r.Frameworks = append(r.Frameworks, fw.info)
		for _, ex := range fw.executors {
			if ex.state == exTerminated {
				continue
			}
			// Command executors are the agent's own (Mesos' agent leaves
			// them out of ReregisterSlaveMessage: "the master doesn't
			// store them"); their tasks are reported. Reporting one
			// would make the master book its allowance beside the task.
			if ex.command == nil {
				r.Executors = append(r.Executors, link.Executor{FrameworkID: fw.id(), Info: ex.info})
			}
			r.Tasks = append(r.Tasks, ex.reportTasks(a.agentID)...)
		}
	}
	a.reportPendingLocked(&r)
	return r
}

// reportPendingLocked adds the launches still waiting in the inbox as
// TASK_STAGING, with their new executors and frameworks, as Mesos' agent
// reports its pending tasks on re-registration: a master must not take a
// task it sent for unknown (and lose it) because the agent had not
// handled the RunTask yet when it re-registered.
func (a *Agent) reportPendingLocked(r *link.Registration) {
	seenFw := map[string]bool{}
	seenEx := map[string]bool{}
	for i := range r.Frameworks {
		seenFw[r.Frameworks[i].GetID().GetValue()] = true
	}
	for i := range r.Executors {
		seenEx[r.Executors[i].FrameworkID.Value+"\x00"+r.Executors[i].Info.ExecutorID.Value] = true
	}
	for _, m := range a.inbox {
		rt := m.RunTask
		if rt == nil {
			continue
		}
		fwID := rt.Framework.GetID().GetValue()
		if fwID == "" {
			continue
		}
		if !seenFw[fwID] {
			seenFw[fwID] = true
			r.Frameworks = append(r.Frameworks, rt.Framework)
		}
		exec := rt.Executor
		if exec == nil && rt.Task != nil {
			exec = rt.Task.Executor
		}
		var exID *mesos.ExecutorID
		if exec != nil {
			id := exec.ExecutorID
			exID = &id
			if k := fwID + "\x00" + id.Value; !seenEx[k] {
				seenEx[k] = true
				r.Executors = append(r.Executors, link.Executor{FrameworkID: mesos.FrameworkID{Value: fwID}, Info: *exec})
			}
		}
		var tasks []mesos.TaskInfo
		if rt.Task != nil {
			tasks = append(tasks, *rt.Task)
		}
		if rt.Group != nil {
			tasks = append(tasks, rt.Group.Tasks...)
		}
		for _, t := range tasks {
			r.Tasks = append(r.Tasks, mesos.Task{
				Name: t.Name, TaskID: t.TaskID, FrameworkID: mesos.FrameworkID{Value: fwID}, ExecutorID: exID,
				AgentID: mesos.AgentID{Value: a.agentID}, State: mesos.TASK_STAGING.Enum(), Resources: t.Resources,
			})
		}
	}
}

func (a *Agent) registrationLoop(ctx context.Context, first chan<- error) {
	defer a.wg.Done()
	registered := false
	for {
		reg, err := a.master.RegisterAgent(ctx, a.registration(), a)
		if errors.Is(err, link.ErrUnknownAgent) && a.ID() != "" {
			a.log.WithField("agent", a.ID()).Warn("agent: master refused re-registration; registering anew")
			a.mu.Lock()
			a.agentID = ""
			a.mu.Unlock()
			continue
		}
		if err != nil {
			a.log.WithError(err).Debug("agent: registration failed")
		} else {
			a.registered(reg)
			if !registered {
				registered = true
				first <- nil // buffered
			}
		}
		if !a.waitForReregistration(ctx, err == nil) {
			return
		}
		a.sum.Pause()
	}
}

func (a *Agent) registered(reg link.Registered) {
	a.mu.Lock()
	a.agentID = reg.AgentID.Value
	a.pingEvery, a.pingTimeout = reg.PingInterval, reg.PingTimeout
	if a.pingTimeout <= 0 {
		a.pingTimeout = 5 * reg.PingInterval
	}
	a.lastPing = a.cfg.Clock.Now()
	a.mu.Unlock()
	a.ckptAgent.Store(reg.AgentID.Value)
	a.writeAgentID(reg.AgentID.Value)
	a.sum.SetAgentID(reg.AgentID.Value)
	a.log.WithField("agent", reg.AgentID.Value).Info("agent: registered")
}

// waitForReregistration blocks until the agent must register again (it
// returns true) or ctx ends (false). While registered it watches pings:
// no ping for the master's announced ping timeout means it is gone.
func (a *Agent) waitForReregistration(ctx context.Context, ok bool) bool {
	if !ok {
		select {
		case <-ctx.Done():
			return false
		case <-a.cfg.Clock.After(a.cfg.ReregisterBackoff):
			return true
		}
	}
	tick := a.cfg.Clock.NewTicker(a.cfg.ReregisterBackoff)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-a.reregister:
			return true
		case <-tick.C():
			a.mu.Lock()
			silent := a.pingEvery > 0 && a.cfg.Clock.Now().Sub(a.lastPing) > a.pingTimeout
			a.mu.Unlock()
			if silent {
				return true
			}
		}
	}
}

// MasterDetected tells the agent that a new leading master was elected
// (ZooKeeper): it re-registers now, as a Mesos agent does when its master
// detector reports a new leader, instead of after its ping timeout.
func (a *Agent) MasterDetected() { a.triggerReregistration() }

func (a *Agent) triggerReregistration() {
	select {
	case a.reregister <- struct{}{}:
	default:
	}
}

// send delivers an agent message to the master asynchronously (never
// from Deliver's caller).
func (a *Agent) send(m link.AgentMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sendLocked(m)
}

func (a *Agent) sendLocked(m link.AgentMessage) {
	master, id := a.master, a.agentID
	if a.closed || master == nil {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// A master that does not know the agent (it restarted) ignores its
		// messages, as Mesos' does ("Ignoring … from unknown agent"): the
		// agent re-registers once the master has been silent for its ping
		// timeout, or at once when a new leader is detected (MasterDetected).
		if err := master.FromAgent(a.ctx, id, m); err != nil {
			a.log.WithError(err).Debug("agent: message to master failed")
		}
	}()
}

func (a *Agent) forwardUpdate(ctx context.Context, u link.StatusUpdate) error {
	a.mu.Lock()
	master, id := a.master, a.agentID
	a.mu.Unlock()
	if master == nil {
		return ErrClosed
	}
	return master.FromAgent(ctx, id, link.AgentMessage{StatusUpdate: &u})
}

// Deliver queues a master message; it returns at once.
func (a *Agent) Deliver(m link.MasterMessage) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.inbox = append(a.inbox, m)
	a.mu.Unlock()
	select {
	case a.inboxReady <- struct{}{}:
	default:
	}
	return nil
}

// inboxLoop handles master messages one at a time, in order.
func (a *Agent) inboxLoop() {
	defer a.wg.Done()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.inboxReady:
		}
		for {
			a.mu.Lock()
			if len(a.inbox) == 0 || a.closed {
				a.mu.Unlock()
				break
			}
			m := a.inbox[0]
			a.inbox = a.inbox[1:]
			a.mu.Unlock()
			a.handle(m)
		}
	}
}

func (a *Agent) handle(m link.MasterMessage) {
	switch {
	case m.Ping != nil:
		a.mu.Lock()
		a.lastPing = a.cfg.Clock.Now()
		a.mu.Unlock()
		a.send(link.AgentMessage{Pong: &link.Pong{Seq: m.Ping.Seq}})
	case m.RunTask != nil:
		a.runTask(*m.RunTask)
	case m.KillTask != nil:
		a.killTask(*m.KillTask)
	case m.ShutdownExecutor != nil:
		a.shutdownExecutor(m.ShutdownExecutor.FrameworkID.Value, m.ShutdownExecutor.ExecutorID.Value)
	case m.ShutdownFramework != nil:
		a.shutdownFramework(m.ShutdownFramework.FrameworkID.Value)
	case m.Acknowledge != nil:
		a.acknowledge(*m.Acknowledge)
	case m.FrameworkMessage != nil:
		a.frameworkMessage(*m.FrameworkMessage)
	case m.ReconcileTasks != nil:
		a.reconcileTasks(*m.ReconcileTasks)
	case m.UpdateFramework != nil:
		a.mu.Lock()
		if fw := a.frameworks[m.UpdateFramework.Framework.GetID().GetValue()]; fw != nil {
			fw.info = m.UpdateFramework.Framework
		}
		a.mu.Unlock()
	}
}

// Stop leaves every executor running (for a restarted agent on the same
// work dir to recover) and stops the agent: streams closed, retries and
// timers stopped.
func (a *Agent) Stop() { a.stop(false) }

// Close kills every process the agent started or recovered, waits for
// them to end, and stops the agent.
func (a *Agent) Close() error {
	a.stop(true)
	return nil
}

func (a *Agent) stop(kill bool) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed, a.killing = true, kill
	// Only the processes already recorded are handled here, read under
	// a.mu: a launch still in flight sees a.closed when it records its
	// process and kills it (Close, waiting for its end) or leaves it
	// running, checkpointed (Stop). The agent waits for it in a.wg.
	var procs []*containerizer.Process
	// The default executor's task processes are not recoverable: both
	// Stop and Close kill them (their tasks then end FAILED after a restart).
	dflt := a.defaultProcsLocked()
	for _, fw := range a.frameworks {
		for _, ex := range fw.executors {
			if ex.proc != nil {
				procs = append(procs, ex.proc)
			}
			ex.stopTimers()
			ex.closeSubscription()
		}
	}
	for t := range a.gcTimers {
		t.Stop()
	}
	a.mu.Unlock()
	for _, p := range dflt {
		killAndWait(p)
	}
	for _, p := range procs {
		if kill {
			killAndWait(p)
		} else {
			p.Release()
		}
	}
	a.cancel()
	a.sum.Close()
	a.wg.Wait()
	a.ckpt.close() // every checkpoint change is on disk
}

// killAndWait kills p's process tree and waits for the leader to end,
// then kills any straggler left in its group.
func killAndWait(p *containerizer.Process) {
	p.Kill(0)
	<-p.Done()
	p.Destroy()
}

// launchedAfterCloseLocked handles a process whose launch finished after the
// agent was stopped or closed (called with a.mu held, which it releases
// and takes again): Close kills it and waits for its end; Stop records it
// (checkpoint) and leaves it running for the next agent to recover, as
// every other process.
func (a *Agent) launchedAfterCloseLocked(ex *execRun, proc *containerizer.Process) {
	if a.killing {
		a.mu.Unlock()
		killAndWait(proc)
		a.mu.Lock()
		return
	}
	ex.proc = proc
	a.checkpointLocked(ex)
}
