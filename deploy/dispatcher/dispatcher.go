package dispatcher

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// Config configures a Dispatcher.
type Config struct {
	// Mesos is the dispatcher's own framework: master, name (default
	// "flint-dispatcher"), roles, principal, secret, failover timeout (default 1
	// week, Spark's dispatcher keeps its framework too). Its FrameworkID is
	// replaced by the store's when the store has one.
	Mesos mesosconn.Config
	// DriverMaster is the master URL drivers are given (default Mesos.Master).
	DriverMaster string
	Store        Store
	Binaries     *Binaries
	Sealer       *Sealer
	// Files serves uploaded binaries and the launcher to agents, each driver
	// with its own grant. The Dispatcher does not start or close it.
	Files *fileserver.Server
	// Launcher is the flint executable agents fetch to start a driver
	// (`flint dispatcher exec-driver`); default this process's executable.
	Launcher string
	Core     CoreConfig
	// Capacity returns the agents' total resources (default: the leading
	// master's /master/state); a driver no agent can hold is failed at once.
	Capacity func(ctx context.Context, master string) ([]AgentCapacity, error)
	// HistoryURL, if set, is linked from the page (a `flint history` serving
	// the drivers' event logs).
	HistoryURL string
	Clock      clock.Clock
	Logger     logrus.FieldLogger
}

// Dispatcher runs submitted drivers as Mesos tasks. Its state is the Core,
// guarded by one mutex: the Mesos connection's handler, the REST server and the
// relaunch timer each take it for one step, store every record the step
// changed, then make their Mesos calls.
type Dispatcher struct {
	cfg   Config
	log   logrus.FieldLogger
	clock clock.Clock

	ready chan struct{} // closed once conn is set
	conn  *mesosconn.Conn
	// early holds the Mesos events that came before conn was set (offers
	// right after SUBSCRIBED, before mesosconn.Start returned); Start
	// handles them in order once it is. A handler never waits for Start:
	// when Start fails, mesosconn's shutdown waits for its handlers.
	earlyMu sync.Mutex
	early   []func()
	started bool

	mu       sync.Mutex
	core     *Core
	timer    clock.Timer
	capAt    time.Time // when capacity was last asked
	capacity []AgentCapacity
	launcher fileserver.FileURL
	closed   bool
}

// New loads the store's records and returns a Dispatcher; Start connects it.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil || cfg.Binaries == nil || cfg.Sealer == nil || cfg.Files == nil {
		return nil, errors.New("dispatcher: Store, Binaries, Sealer and Files are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		cfg.Logger = l
	}
	if cfg.Capacity == nil {
		cfg.Capacity = MasterCapacity
	}
	if cfg.Mesos.Name == "" {
		cfg.Mesos.Name = "flint-dispatcher"
	}
	if cfg.Mesos.FailoverTimeout <= 0 {
		cfg.Mesos.FailoverTimeout = 7 * 24 * time.Hour
	}
	cfg.Mesos.Checkpoint = true
	if cfg.DriverMaster == "" {
		cfg.DriverMaster = cfg.Mesos.Master
	}
	d := &Dispatcher{cfg: cfg, log: cfg.Logger.WithField("component", "dispatcher"), clock: cfg.Clock,
		ready: make(chan struct{}), core: NewCore(cfg.Core)}
	recs, err := cfg.Store.LoadAll()
	if err != nil {
		return nil, err
	}
	d.core.Restore(recs)
	var launcher fileserver.FileURL
	if cfg.Launcher != "" {
		launcher, err = cfg.Files.AddFile(cfg.Launcher)
	} else {
		launcher, err = cfg.Files.AddExecutable()
	}
	if err != nil {
		return nil, fmt.Errorf("dispatcher: serving the launcher: %w", err)
	}
	d.launcher = launcher
	return d, nil
}

// Start subscribes to the master, with the stored framework id when there is
// one (a restart within the failover timeout keeps the running drivers' tasks),
// and reconciles the drivers the store says are launched or running.
func (d *Dispatcher) Start(ctx context.Context) error {
	fid, err := d.cfg.Store.FrameworkID()
	if err != nil {
		return err
	}
	mc := d.cfg.Mesos
	if fid != "" {
		mc.FrameworkID = fid
	}
	mc.Logger = d.cfg.Logger
	conn, err := mesosconn.Start(ctx, mc, d.handler())
	if err != nil {
		return fmt.Errorf("dispatcher: %w", err)
	}
	d.conn = conn
	close(d.ready)
	d.earlyMu.Lock()
	for _, f := range d.early {
		f()
	}
	d.early, d.started = nil, true
	d.earlyMu.Unlock()
	var tasks []mesosconn.ReconcileTask
	d.mu.Lock()
	for _, r := range d.core.Active() {
		var agent *mesos.AgentID
		if r.AgentID != "" {
			agent = &mesos.AgentID{Value: r.AgentID}
		}
		tasks = append(tasks, mesosconn.ReconcileTask{TaskID: mesos.TaskID{Value: r.TaskID}, AgentID: agent})
	}
	d.mu.Unlock()
	if len(tasks) > 0 {
		d.log.WithField("drivers", len(tasks)).Info("reconciling the drivers launched before the restart")
		if err := conn.Reconcile(tasks...); err != nil {
			d.log.WithError(err).Warn("reconciliation")
		}
	}
	d.demand()
	return nil
}

// Done is closed when the Mesos connection ended for good.
func (d *Dispatcher) Done() <-chan struct{} { <-d.ready; return d.conn.Done() }

// MasterAddr is the leading master's host:port ("" before Start).
func (d *Dispatcher) MasterAddr() string {
	select {
	case <-d.ready:
		return mesosconn.MasterAddr(d.conn.Master())
	default:
		return ""
	}
}

// FrameworkID is the dispatcher's framework id ("" before Start).
func (d *Dispatcher) FrameworkID() string {
	select {
	case <-d.ready:
		return d.conn.FrameworkID()
	default:
		return ""
	}
}

// Stop disconnects without tearing the framework down: its drivers keep
// running, and a dispatcher started on the same store takes them over.
func (d *Dispatcher) Stop(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	select {
	case <-d.ready:
		return d.conn.Stop(ctx, false)
	default:
		return nil
	}
}

func (d *Dispatcher) handler() mesosconn.Handler {
	return mesosconn.HandlerFuncs{
		OnSubscribed: func(id string, m mesos.MasterInfo, re bool) {
			if err := d.cfg.Store.SaveFrameworkID(id); err != nil {
				d.log.WithError(err).Error("storing the framework id")
			}
			d.log.WithFields(logrus.Fields{"framework": id, "master": mesosconn.MasterAddr(m), "resubscribed": re}).Info("dispatcher subscribed")
		},
		OnOffers: func(offers []mesos.Offer) { d.whenStarted(func() { d.offers(offers) }) },
		OnUpdate: func(st mesos.TaskStatus) { d.whenStarted(func() { d.update(st) }) },
		OnAborted: func(err error) {
			d.log.WithError(err).Error("the master ended the dispatcher's framework")
		},
	}
}

// whenStarted runs f now if Start has set the connection, else queues it
// for Start (in the order the events came).
func (d *Dispatcher) whenStarted(f func()) {
	d.earlyMu.Lock()
	if !d.started {
		d.early = append(d.early, f)
		d.earlyMu.Unlock()
		return
	}
	d.earlyMu.Unlock()
	f()
}

// NewID returns a submission id in Spark's form driver-<yyyyMMddHHmmss>-<4 hex>.
func NewID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("driver-%s-%s", now.UTC().Format("20060102150405"), hexOf(b[:]))
}

// Submit validates and queues a submission and returns its id.
func (d *Dispatcher) Submit(req CreateRequest) (string, error) {
	spec, err := req.Validate(d.cfg.Sealer.Seal)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(spec.Resource, "sha256:") {
		if _, err := d.cfg.Binaries.Path(spec.SHA256); err != nil {
			return "", err
		}
	}
	for _, f := range spec.Files {
		if _, err := d.cfg.Binaries.Path(strings.TrimPrefix(f.Resource, "sha256:")); err != nil {
			return "", fmt.Errorf("file %s: %w", f.Name, err)
		}
	}
	d.mu.Lock()
	now := d.clock.Now()
	id := NewID(now)
	for _, ok := d.core.Get(id); ok; _, ok = d.core.Get(id) {
		id = NewID(now)
	}
	r, err := d.core.Submit(id, spec, now)
	if err == nil {
		err = d.cfg.Store.Save(*r)
	}
	d.mu.Unlock()
	if err != nil {
		return "", err
	}
	d.log.WithFields(logrus.Fields{"submission": id, "resource": spec.Resource}).Info("driver queued")
	d.demand()
	return id, nil
}

// Status returns a driver's record.
func (d *Dispatcher) Status(id string) (Record, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Get(id)
}

// List returns every record in submission order.
func (d *Dispatcher) List() []Record {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.List()
}

// Kill ends a driver: a waiting one at once, a running one through Mesos.
func (d *Dispatcher) Kill(id string) (Record, error) {
	d.mu.Lock()
	r, taskID, err := d.core.Kill(id, d.clock.Now())
	if err == nil {
		err = d.cfg.Store.Save(*r)
	}
	var out Record
	var agent *mesos.AgentID
	if r != nil {
		out = *r
		if r.AgentID != "" {
			agent = &mesos.AgentID{Value: r.AgentID}
		}
	}
	d.mu.Unlock()
	if err != nil {
		return out, err
	}
	if taskID != "" {
		<-d.ready
		if err := d.conn.Kill(mesos.TaskID{Value: taskID}, agent); err != nil {
			return out, fmt.Errorf("dispatcher: kill %s: %w", id, err)
		}
	}
	return out, nil
}

// demand turns offers on while a driver waits, and arms the timer for the next
// relaunch back-off's end.
func (d *Dispatcher) demand() {
	select {
	case <-d.ready:
	default:
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.demandLocked()
}

func (d *Dispatcher) demandLocked() {
	if d.closed {
		return
	}
	now := d.clock.Now()
	d.conn.SetDemand(len(d.core.Launchable(now)) > 0)
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if t := d.core.NextRetry(); !t.IsZero() {
		d.timer = d.clock.AfterFunc(max(t.Sub(now), 0), d.demand)
	}
}

// offers launches the launchable drivers, in FIFO order, on the offers that
// fit them and declines the rest.
func (d *Dispatcher) offers(offers []mesos.Offer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	waiting := d.core.Launchable(now)
	placed := map[string]bool{}
	for _, o := range offers {
		rest := mesos.Resources(o.Resources)
		var tasks []mesos.TaskInfo
		for _, w := range waiting {
			if placed[w.ID] {
				continue
			}
			taken, left, ok := mesosconn.Take(rest, mesosconn.Want{CPUs: w.Spec.Cores, MemMB: w.Spec.MemMB})
			if !ok {
				continue
			}
			ti, err := d.launchLocked(w.ID, o, taken, now)
			if err != nil {
				d.log.WithError(err).WithField("submission", w.ID).Error("driver cannot be launched")
				continue
			}
			placed[w.ID], rest = true, left
			tasks = append(tasks, ti)
		}
		var err error
		switch {
		case len(tasks) > 0:
			err = d.conn.Launch([]mesos.OfferID{o.ID}, tasks)
		case len(waiting) == 0:
			err = d.conn.Decline([]mesos.OfferID{o.ID}, mesosconn.DeclineNoDemand)
		default:
			err = d.conn.Decline([]mesos.OfferID{o.ID}, mesosconn.DeclineUnfit)
		}
		if err != nil {
			d.log.WithError(err).Warn("answering an offer")
			for _, t := range tasks { // never launched: back in the queue
				if r := d.core.Requeue(t.TaskID.Value); r != nil {
					d.saveLocked(*r)
				}
			}
		}
	}
	var unplaced []Record
	for _, w := range waiting {
		if !placed[w.ID] {
			unplaced = append(unplaced, w)
		}
	}
	d.failUnplaceableLocked(unplaced, now)
	d.demandLocked()
}

// launchLocked records a driver's launch (stored before the task is sent, so a
// restart reconciles it instead of launching it again) and builds its task.
func (d *Dispatcher) launchLocked(id string, o mesos.Offer, res mesos.Resources, now time.Time) (mesos.TaskInfo, error) {
	r, ok := d.core.Get(id)
	if !ok {
		return mesos.TaskInfo{}, ErrUnknownDriver
	}
	if fid := d.driverFrameworkLocked(r); fid != r.DriverFrameworkID {
		d.core.SetDriverFramework(id, fid)
		r.DriverFrameworkID = fid
	}
	// The task id is the next attempt's; build the task before recording it.
	taskID := TaskID(id, r.Attempts+1)
	ti, err := d.taskInfo(r, taskID, o.AgentID, res)
	if err != nil {
		if f := d.core.Unplaceable(id, err.Error(), now); f != nil {
			d.saveLocked(*f)
		}
		return ti, err
	}
	rec, err := d.core.Launched(id, o.AgentID.Value, o.Hostname, now)
	if err != nil {
		return ti, err
	}
	if err := d.cfg.Store.Save(*rec); err != nil {
		d.core.Requeue(rec.TaskID)
		return ti, err
	}
	d.log.WithFields(logrus.Fields{"submission": id, "task": taskID, "agent": o.Hostname}).Info("driver launched")
	return ti, nil
}

// update records a driver task's status.
func (d *Dispatcher) update(st mesos.TaskStatus) {
	taskID := st.TaskID.Value
	end := taskEnd(st)
	msg := Reason(st)
	d.mu.Lock()
	defer d.mu.Unlock()
	rec, stale := d.core.Update(taskID, end, msg, d.clock.Now())
	if stale && !mesosconn.Terminal(st.GetState()) {
		d.log.WithField("task", taskID).Warn("killing a task no driver record holds")
		_ = d.conn.Kill(st.TaskID, st.AgentID)
	}
	if end != TaskStarting {
		d.cfg.Files.Revoke(grantOwner(taskID)) // fetched (running) or over
	}
	if rec != nil {
		d.saveLocked(*rec)
		d.log.WithFields(logrus.Fields{"submission": rec.ID, "task": taskID, "state": rec.State, "message": rec.Message}).Info("driver state")
	}
	d.demandLocked()
}

func (d *Dispatcher) saveLocked(r Record) {
	if err := d.cfg.Store.Save(r); err != nil {
		d.log.WithError(err).WithField("submission", r.ID).Error("storing the driver's record")
	}
}

// taskEnd maps a Mesos task state to the core's view. A task the master does
// not know on reconciliation (TASK_LOST/UNKNOWN/GONE with REASON_RECONCILIATION)
// is TaskUnknown: one stored as launched that never reached the master goes back
// to the queue.
func taskEnd(st mesos.TaskStatus) TaskEnd {
	switch st.GetState() {
	case mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_KILLING:
		return TaskStarting
	case mesos.TASK_RUNNING:
		return TaskRunning
	case mesos.TASK_FINISHED:
		return TaskSucceeded
	case mesos.TASK_FAILED, mesos.TASK_ERROR:
		return TaskFailed
	case mesos.TASK_KILLED:
		return TaskKilled
	}
	if st.GetReason() == mesos.REASON_RECONCILIATION {
		return TaskUnknown
	}
	return TaskLost
}
