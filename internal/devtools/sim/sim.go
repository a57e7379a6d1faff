package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse"
	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
	"github.com/flint-mesos/flint/fine"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/internal/clock"
)

// Config is one simulated cluster and workload.
type Config struct {
	Agents     int       // agents at start
	AgentCPUs  float64   // cpus per agent
	AgentMem   float64   // MiB per agent
	Jobs       int       // jobs in all
	Concurrent int       // jobs running at once (at least 1)
	Speculate  bool      // the task core speculates slow tasks
	CPUChoices []float64 // when set, each agent's cpus are drawn from these (AgentCPUs ignored)
	SlowAgents float64   // fraction of agents whose tasks take SlowFactor times as long
	SlowFactor float64
	Tasks      int // map tasks per job
	Reducers   int // reduce tasks per job (0: Tasks/4, at least 1)
	MeanTask   time.Duration
	AllocEvery time.Duration // the master's allocation interval (Mesos: 1s)
	MaxVirtual time.Duration // a run not done by then fails
	Faults     Faults
	// Coarse runs the coarse backend (package coarse: long-lived
	// executors that register over their gateway streams) instead of fine.
	Coarse bool
	// CoresMax is flint.cores.max (0: unset); the master checks the
	// framework never holds more cpus.
	CoresMax   int
	TraceLines int // trace lines kept for a failure's report
	// SkipTrackerCheck skips the per-step walk of the map-output tracker
	// (a scale run's cost is then the driver's, not the check's).
	SkipTrackerCheck bool
	// FailoverAt, when set, is the virtual time of the Faults.Failovers
	// (instead of a seeded time while work runs): scale_test's offer storm.
	FailoverAt time.Duration
	// OnTrace, when set, sees every trace line as it is made (scale
	// tests time phases of a run by them); it decides nothing.
	OnTrace func(line string)

	offerSkew  float64 // cpus the master adds to what it offers (a deliberate bug, for tests)
	skipBlock  bool    // reducers of partition 0 skip a block (a deliberate bug, for tests)
	forgetLoss string  // launches on executors with this prefix count as before a loss (for tests)
	// hideExecutors: offers list no executor (a deliberately broken
	// master, for tests: a successor cannot see its predecessor's idle
	// fine executors)
	hideExecutors bool
	// untaggedSuccessor: a restarted driver is not told the framework id
	// it takes over, so its ids are untagged (a deliberate bug, for tests)
	untaggedSuccessor bool
}

// Faults are the probabilities and counts of injected faults.
type Faults struct {
	AgentLosses int           // agents lost during the run (each back later under a new id)
	Duplicate   float64       // probability an update is delivered twice
	Jitter      time.Duration // an update's delivery delay is drawn in [0, Jitter)
	Reorder     float64       // probability a stale RUNNING follows a task's terminal update
	Rescind     float64       // probability an allocation round is followed by an offer rescinded
	FetchFail   float64       // probability a reduce task's first fetch fails though its output is there
	Crashes     int           // executors crashed during the run (their tasks FAILED, outputs gone)
	Failovers   int           // master failovers during the run (new leader id, offers void)
	Partitions  int           // driver↔master network partitions during the run (calls lost, events held, then healed)
	// Restarts are driver processes that die during the run (no Stop: the
	// master keeps the framework, its tasks and executors, and holds its
	// updates), each replaced 1–20 s later by a new driver subscribing
	// with the same framework id (flint.mesos.driver.frameworkId), which
	// runs every job again from the start (restart.go).
	Restarts int
}

// DefaultConfig is the CI run's cluster: 20 agents of 8 cpus, 3 jobs of
// 200 tasks, every fault on.
func DefaultConfig() Config {
	return Config{
		Agents: 20, AgentCPUs: 8, AgentMem: 16384, Jobs: 3, Tasks: 200,
		MeanTask: 2 * time.Second, AllocEvery: time.Second, MaxVirtual: 2 * time.Hour,
		Faults:     Faults{AgentLosses: 2, Duplicate: 0.05, Jitter: 50 * time.Millisecond, Reorder: 0.02, Rescind: 0.3},
		TraceLines: 60,
	}
}

// Profile is the cluster and workload of a seed: DefaultConfig varied by
// the seed (agents, their sizes, slow agents, speculation, concurrent
// jobs, fault rates), so that seeds cover more than the faults' timing.
func Profile(seed int64) Config {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9f0f11e))
	c := DefaultConfig()
	c.Agents = 3 + r.IntN(28)
	c.CPUChoices = [][]float64{{8}, {2, 4, 8}, {1.5, 2, 3.5}, {16, 32}}[r.IntN(4)]
	c.Jobs = 1 + r.IntN(4)
	c.Concurrent = 1 + r.IntN(3)
	c.Tasks = 20 + r.IntN(300)
	c.MeanTask = time.Duration(200+r.IntN(3000)) * time.Millisecond
	c.Speculate = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		c.SlowAgents, c.SlowFactor = 0.2, 2+4*r.Float64()
	}
	c.Faults = Faults{
		AgentLosses: r.IntN(min(c.Agents, 5)),
		Duplicate:   []float64{0, 0.05, 0.3}[r.IntN(3)],
		Jitter:      time.Duration(r.IntN(500)) * time.Millisecond,
		Reorder:     []float64{0, 0.02, 0.2}[r.IntN(3)],
		Rescind:     []float64{0, 0.3, 0.9}[r.IntN(3)],
		FetchFail:   []float64{0, 0, 0.001, 0.005}[r.IntN(4)],
		Crashes:     r.IntN(3),
		Failovers:   r.IntN(2),
	}
	// Drawn after the rest, so that a seed's cluster, workload and faults
	// above are what they were before these knobs existed (fineProfile).
	c.Coarse = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		c.CoresMax = 4 + r.IntN(60)
	}
	c.Faults.Partitions = r.IntN(2)
	if r.IntN(4) == 0 {
		c.Faults.Restarts = 1
	}
	return c
}

// profileBeforeRestarts is Profile as it was before the driver restart
// fault: what the regression seeds found before it existed ran.
func profileBeforeRestarts(seed int64) Config {
	c := Profile(seed)
	c.Faults.Restarts = 0
	return c
}

// fineProfile is Profile as it was before the coarse backend and the
// knobs drawn after it: what the regression seeds found with fine ran.
func fineProfile(seed int64) Config {
	c := Profile(seed)
	c.Coarse, c.CoresMax, c.Faults.Partitions, c.Faults.Restarts = false, 0, 0, 0
	return c
}

// String is the configuration in one line, for a failure's report.
func (c Config) String() string {
	cpus := fmt.Sprint(c.AgentCPUs)
	if len(c.CPUChoices) > 0 {
		cpus = fmt.Sprint(c.CPUChoices)
	}
	be := "fine"
	if c.Coarse {
		be = "coarse"
	}
	return fmt.Sprintf("%s backend, %d agents × %s cpus (slow %.0f%% ×%.1f), cores.max %d, %d jobs × %d tasks of %s (%d at once, speculation %v), faults %+v",
		be, c.Agents, cpus, 100*c.SlowAgents, c.SlowFactor, c.CoresMax, c.Jobs, c.Tasks, c.MeanTask, max(c.Concurrent, 1), c.Speculate, c.Faults)
}

// Result is what one run did.
type Result struct {
	Seed       int64
	Config     Config
	Virtual    time.Duration // simulated time the run took
	Steps      int
	Attempts   int // task attempts launched
	Finished   int // jobs that ended with every partition's value correct
	Digest     uint64
	Violation  string   // "" when every invariant held
	Trace      []string // the last steps, for a violation's report
	AgentsLost int
	Restarts   int // driver processes that died and were replaced
	// TrackerBytes is the map-output tracker's memory for the largest
	// job's shuffle (Tracker.MapOutputBytes plus LocationBytes) as the
	// job ended, and TrackerOutputs that shuffle's map outputs.
	TrackerBytes, TrackerOutputs int
}

// Failed reports whether an invariant broke.
func (r *Result) Failed() bool { return r.Violation != "" }

// Report is a failed run in words: the seed to replay, the violation and
// the trace's tail.
func (r *Result) Report() string {
	return fmt.Sprintf("sim: seed %d: %s\n  replay: SIM_SEED=%d make simulate\n  cluster: %s\n  last steps:\n    %s",
		r.Seed, r.Violation, r.Seed, r.Config, strings.Join(r.Trace, "\n    "))
}

// errViolation stops a run at its first broken invariant.
var errViolation = errors.New("invariant violated")

// event is one scheduled input of the simulation.
type event struct {
	at  time.Time
	seq uint64
	fn  func()
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// Sim is one run. Only Run's goroutine touches it, except out, where the
// backend's owner goroutine records its calls during a Flush.
type Sim struct {
	cfg   Config
	seed  int64
	rng   *rand.Rand
	clk   *clock.Fake
	start time.Time
	q     events
	seq   uint64
	steps int

	trace []string // ring
	tpos  int
	hash  uint64

	violation string

	outMu sync.Mutex
	out   []func() // calls the backend made, in order, handled after its Flush

	b simBackend // the live driver's backend (nil while no driver runs)
	m *master
	d *simDriver // the live driver (or, while none runs, the dead one)
	// inc is the driver incarnation: 0 for the first driver process, one
	// more after each restart (restart.go).
	inc     int
	stops   []func()     // what ends each driver's goroutines, run's last
	drivers []*simDriver // every incarnation's, oldest first
}

// simBackend is the Mesos backend under simulation: fine's or coarse's,
// both stepped by Flush.
type simBackend interface {
	backend.Backend
	Flush()
}

// Run simulates one seed.
func Run(seed int64, cfg Config) (res Result) {
	s := &Sim{cfg: cfg, seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), clk: clock.NewFake(time.Time{})}
	s.start = s.clk.Now()
	res.Seed, res.Config = seed, cfg
	defer func() {
		res.Virtual = s.clk.Now().Sub(s.start)
		res.Steps = s.steps
		res.Violation = s.violation
		res.Digest = s.hash
		res.Restarts = s.inc
		res.Trace = s.tail()
		for _, d := range s.drivers {
			res.Attempts += len(d.attempts)
			res.Finished += d.finished
			if d.trackerOutputs >= res.TrackerOutputs {
				res.TrackerBytes, res.TrackerOutputs = d.trackerBytes, d.trackerOutputs
			}
		}
		if s.m != nil {
			res.AgentsLost = s.m.lost
		}
	}()
	if err := s.run(); err != nil && !errors.Is(err, errViolation) {
		s.violation = err.Error()
	}
	return res
}

func (s *Sim) run() error {
	cfg, err := s.config()
	if err != nil {
		return err
	}
	alloc, err := allocator.New(allocator.Config{}, rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())))
	if err != nil {
		return fmt.Errorf("sim: allocator: %w", err)
	}
	s.m = newMaster(s, alloc, cfg)
	defer func() {
		for _, stop := range slices.Backward(s.stops) {
			stop()
		}
	}()
	if err := s.startDriver(cfg); err != nil {
		return err
	}
	s.m.start()
	s.d.start()
	s.settle()
	limit := s.start.Add(s.cfg.MaxVirtual)
	for s.violation == "" {
		if s.d.done() && s.m.quiet() {
			break
		}
		if len(s.q) == 0 {
			s.fail("nothing left to happen, yet the run is not done: %s", s.d.state())
			break
		}
		e := heap.Pop(&s.q).(*event)
		if e.at.After(limit) {
			s.fail("not done after %s of virtual time: %s", s.cfg.MaxVirtual, s.d.state())
			break
		}
		if d := e.at.Sub(s.clk.Now()); d > 0 {
			s.clk.Advance(d) // the backend's own timers post into its inbox
		}
		s.steps++
		e.fn()
		s.settle()
		s.check()
	}
	if s.violation == "" {
		s.d.finalCheck()
		s.m.checkNoneLeft()
	}
	if s.violation != "" {
		return errViolation
	}
	return nil
}

// config is driver incarnation s.inc's configuration: a successor
// subscribes with its predecessor's framework id; with restarts on, every
// driver asks the master to keep its framework for a successor.
func (s *Sim) config() (*config.Config, error) {
	conf := []string{
		"flint.master=mesos://sim:5050", "flint.mesos.coarse=" + strconv.FormatBool(s.cfg.Coarse), "flint.driver.host=127.0.0.1",
		"flint.executor.uri=http://sim/flint-executor", "flint.executor.memory=512m",
		"flint.mesos.executor.memoryOverhead=128m", "flint.mesos.mesosExecutor.cores=0.5",
		"flint.mesos.fine.offerHoldTime=1s", "flint.mesos.fine.noFitTimeout=10min",
		"flint.mesos.coarse.noExecutorTimeout=10min",
	}
	if s.cfg.CoresMax > 0 {
		conf = append(conf, "flint.cores.max="+strconv.Itoa(s.cfg.CoresMax))
	}
	if s.cfg.Faults.Restarts > 0 {
		conf = append(conf, "flint.mesos.failoverTimeout=10min")
	}
	if s.inc > 0 && !s.cfg.untaggedSuccessor {
		conf = append(conf, "flint.mesos.driver.frameworkId="+frameworkID)
	}
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		return nil, fmt.Errorf("sim: config: %w", err)
	}
	return cfg, nil
}

// startDriver starts driver incarnation s.inc: the real driver and a real
// backend, whose Start dials the simulated master (the subscription is
// the master's to make).
func (s *Sim) startDriver(cfg *config.Config) error {
	mst, err := backend.ParseMaster(cfg.String("flint.master"))
	if err != nil {
		return fmt.Errorf("sim: master: %w", err)
	}
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	d, err := newDriver(s)
	if err != nil {
		return err
	}
	s.d = d
	s.drivers = append(s.drivers, d)
	s.stops = append(s.stops, d.stop)
	inc := &incarnation{n: s.inc}
	d.inc = inc
	p := backend.Params{Master: mst, Config: cfg, Logger: log}
	tag := "d" + strconv.Itoa(s.inc) // a successor's id tag (mesosbackend.TaskIDPrefix), the seed's
	var b simBackend
	if s.cfg.Coarse {
		b, err = coarse.NewBackend(p, coarse.WithDialer(s.m.dialer(inc)), coarse.WithClock(s.clk), coarse.WithIDTag(tag),
			coarse.WithStreams(s.m.newStreams(inc), "sim-driver:7077"))
	} else {
		b, err = fine.NewBackend(p, fine.WithDialer(s.m.dialer(inc)), fine.WithClock(s.clk), fine.WithIDTag(tag))
	}
	if err != nil {
		return fmt.Errorf("sim: backend: %w", err)
	}
	s.b = b
	d.d.SetBackend(backendSide{Backend: b, sd: d})
	if err := b.Start(context.Background(), d); err != nil {
		return fmt.Errorf("sim: start: %w", err)
	}
	var once sync.Once
	inc.stop = func() {
		once.Do(func() {
			// Cancelled: coarse's Stop waits for no executor's end on
			// the sim's clock (the run is over, or the driver died:
			// nothing it calls reaches the simulated cluster).
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = b.Stop(ctx)
		})
	}
	s.stops = append(s.stops, inc.stop)
	return nil
}

// at schedules fn after d of virtual time.
func (s *Sim) at(d time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, &event{at: s.clk.Now().Add(max(d, 0)), seq: s.seq, fn: fn})
}

// record queues a call the backend made (on its owner goroutine) for Run's.
func (s *Sim) record(fn func()) {
	s.outMu.Lock()
	s.out = append(s.out, fn)
	s.outMu.Unlock()
}

// settle lets the backend handle everything posted, then handles the
// calls it made, until neither side has anything left.
func (s *Sim) settle() {
	for {
		if s.b != nil {
			s.b.Flush()
		}
		s.outMu.Lock()
		out := s.out
		s.out = nil
		s.outMu.Unlock()
		if len(out) == 0 {
			if s.d.step() {
				continue
			}
			return
		}
		for _, f := range out {
			f()
		}
	}
}

// logf adds a line to the trace and the run's digest.
func (s *Sim) logf(format string, args ...any) {
	line := fmt.Sprintf("%9.3fs ", s.clk.Now().Sub(s.start).Seconds()) + fmt.Sprintf(format, args...)
	h := fnv.New64a()
	_, _ = h.Write([]byte(line))
	s.hash = s.hash*1099511628211 ^ h.Sum64()
	if s.cfg.OnTrace != nil {
		s.cfg.OnTrace(line)
	}
	n := max(s.cfg.TraceLines, 1)
	if len(s.trace) < n {
		s.trace = append(s.trace, line)
		return
	}
	s.trace[s.tpos] = line
	s.tpos = (s.tpos + 1) % n
}

func (s *Sim) tail() []string {
	return append(slices.Clone(s.trace[s.tpos:]), s.trace[:s.tpos]...)
}

// fail records the first violation.
func (s *Sim) fail(format string, args ...any) {
	if s.violation != "" {
		return
	}
	s.violation = fmt.Sprintf(format, args...)
	s.logf("VIOLATION %s", s.violation)
}

// check asserts the invariants that hold between steps.
func (s *Sim) check() {
	s.m.check()
	s.d.check()
}

// declineRefuse is the filter a decline installs (as mesosconn does).
func declineRefuse(cfg *config.Config, why mesosconn.DeclineReason) *time.Duration {
	var d time.Duration
	switch why {
	case mesosconn.DeclineNoDemand:
		d = cfg.Duration("flint.mesos.rejectOfferDuration")
	case mesosconn.DeclineUnmetConstraint:
		d = cfg.Duration("flint.mesos.rejectOfferDurationForUnmetConstraints")
	case mesosconn.DeclineReachedMaxCores:
		d = cfg.Duration("flint.mesos.rejectOfferDurationForReachedMaxCores")
	default:
		return nil
	}
	return &d
}
