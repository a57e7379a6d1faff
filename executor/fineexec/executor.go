package fineexec

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	mexec "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/logging"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/uuid"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrAgentLost: the agent connection broke and could not be recovered
	// (no checkpointing, or MESOS_RECOVERY_TIMEOUT passed).
	ErrAgentLost = errors.New("fine: agent connection lost")
	// ErrBadSettings: ExecutorInfo.data is not valid Settings.
	ErrBadSettings = errors.New("fine: invalid executor settings")
)

// runtimeCores sizes the runtime: the agent's resource accounting, not the
// executor, bounds how many tasks run at once.
const runtimeCores = 1 << 16

// Config configures an executor.
type Config struct {
	// Mesos is the agent-provided environment (config.FromEnv).
	Mesos config.Config
	// Registry holds the task functions; default task.Default().
	Registry *task.Registry
	// Senders is the number of concurrent update senders; default 8.
	Senders int
	// Logger is optional; nil logs to stderr at info.
	Logger logrus.FieldLogger
	// Clock is the executor's time (its idle and recovery timeouts, the
	// re-subscription backoff, its updates' timestamps); default
	// clock.Real.
	Clock clock.Clock
}

// Main is the fine-executor role: it reads the MESOS_* environment and
// runs the executor until it exits (SHUTDOWN, idle, or ctx).
func Main(ctx context.Context) error {
	if err := executor.VerifySelf(); err != nil {
		return err
	}
	mc, err := config.FromEnv()
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	log, err := logging.New(logging.Options{Level: cmpOr(os.Getenv(contract.EnvLogLevel), "info"), Format: cmpOr(os.Getenv(contract.EnvLogFormat), "auto"), Out: os.Stderr})
	if err != nil {
		return fmt.Errorf("fine: %s/%s: %w", contract.EnvLogLevel, contract.EnvLogFormat, err)
	}
	elog := log.WithField("executor", mc.ExecutorID)
	release, err := executor.HoldHeapFloor(elog)
	if err != nil {
		return fmt.Errorf("fine: %w", err)
	}
	defer release()
	err = Run(ctx, Config{Mesos: mc, Logger: elog})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// pending is an update not yet acknowledged by the agent.
type pending struct {
	seq uint64
	upd mexec.Call_Update
}

// taskEntry is a task the agent launched whose terminal update is not
// acknowledged yet.
type taskEntry struct {
	info     mesos.TaskInfo
	flintID  uint64
	inRT     bool   // running in the runtime
	terminal []byte // uuid of the terminal update once sent
}

// Executor is one running fine-grained executor.
type Executor struct {
	cfg  Config
	log  logrus.FieldLogger
	cli  calls.Sender // updates
	subs calls.Sender // SUBSCRIBE (its own connection, closed with the stream)

	senders    []chan *mexec.Call
	sendWG     sync.WaitGroup
	sendMu     sync.RWMutex
	sendClosed bool

	mu         sync.Mutex
	set        Settings
	rt         *executor.Runtime
	results    *resultServer
	shuffle    *shuffleenv.Env // the executor's shuffle outputs, if Settings.Shuffle
	env        *stagetask.Env  // the application's runtime state here (over shuffle), handed to tasks
	heldLogged bool            // the idle watcher said it stays for held outputs
	unacked    map[string]pending
	seq        uint64
	tasks      map[string]*taskEntry
	byFlint    map[uint64]string
	lastActive time.Time
	closing    bool          // no new task runs: launches are answered TASK_LOST
	quit       chan struct{} // closed once the executor should return
	quitErr    error
	quitOnce   sync.Once
	stream     io.Closer // the live subscription, closed to stop reading
	ackCh      chan struct{}
}

// Run runs an executor until SHUTDOWN (nil), the idle timeout (nil), ctx
// ends, or the agent is lost for good (ErrAgentLost). Tasks still running
// are killed and the runtime closed before it returns.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Senders <= 0 {
		cfg.Senders = 8
	}
	if cfg.Registry == nil {
		cfg.Registry = task.Default()
	}
	if cfg.Logger == nil {
		l := logrus.New()
		l.SetOutput(os.Stderr)
		cfg.Logger = l
	}
	if cfg.Mesos.AgentEndpoint == "" || cfg.Mesos.ExecutorID == "" || cfg.Mesos.FrameworkID == "" {
		return errors.New("fine: MESOS_AGENT_ENDPOINT, MESOS_EXECUTOR_ID and MESOS_FRAMEWORK_ID are required")
	}
	e := newExecutor(cfg)
	for i := range e.senders {
		e.sendWG.Add(1)
		go e.sender(e.senders[i])
	}
	err := e.run(ctx)
	e.shutdownRuntime(context.Background())
	e.sendMu.Lock()
	e.sendClosed = true
	for _, ch := range e.senders {
		close(ch)
	}
	e.sendMu.Unlock()
	e.sendWG.Wait()
	if e.results != nil {
		e.results.close()
	}
	if e.env != nil {
		if cerr := e.env.Close(); cerr != nil {
			e.log.WithError(cerr).Warn("fine: releasing the application's state")
		}
	}
	if e.shuffle != nil {
		if cerr := e.shuffle.Close(); cerr != nil {
			e.log.WithError(cerr).Warn("fine: removing shuffle files")
		}
	}
	return err
}

func newExecutor(cfg Config) *Executor {
	endpoint := httpcli.Endpoint("http://" + cfg.Mesos.AgentEndpoint + "/api/v1/executor")
	codec := httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf])
	opts := mexec.CallOptions{calls.Framework(cfg.Mesos.FrameworkID), calls.Executor(cfg.Mesos.ExecutorID)}
	upd := httpcli.New(endpoint, codec, httpcli.Do(httpcli.With(httpcli.Transport(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 4 * cfg.Senders
	}))))
	sub := httpcli.New(endpoint, codec, httpcli.Do(httpcli.With()))
	e := &Executor{
		cfg: cfg, log: cfg.Logger,
		cli:     calls.SenderWith(httpexec.NewSender(upd.Send), opts...),
		subs:    calls.SenderWith(httpexec.NewSender(sub.Send, httpcli.Close(true)), opts...),
		senders: make([]chan *mexec.Call, cfg.Senders),
		unacked: map[string]pending{}, tasks: map[string]*taskEntry{}, byFlint: map[uint64]string{},
		lastActive: cfg.Clock.Now(), quit: make(chan struct{}), ackCh: make(chan struct{}, 1),
	}
	for i := range e.senders {
		e.senders[i] = make(chan *mexec.Call, 1024)
	}
	return e
}

// run subscribes and re-subscribes until the executor should return.
func (e *Executor) run(ctx context.Context) error {
	stopWatch := context.AfterFunc(ctx, func() { e.finish(ctx.Err(), "the executor process is stopping") })
	defer stopWatch()
	backoff := 100 * time.Millisecond
	var lostSince time.Time
	for {
		tasks, updates := e.unackedState()
		resp, err := e.subs.Send(ctx, calls.NonStreaming(calls.Subscribe(tasks, updates)))
		if err == nil {
			lostSince, backoff = time.Time{}, 100*time.Millisecond
			e.setStream(resp)
			err = e.events(resp)
			e.setStream(nil)
			resp.Close()
		}
		e.mu.Lock()
		closing := e.closing
		e.mu.Unlock()
		if closing {
			<-e.quit
			return e.quitErr
		}
		if lostSince.IsZero() {
			lostSince = e.cfg.Clock.Now()
		}
		if !e.cfg.Mesos.Checkpoint || e.cfg.Clock.Now().Sub(lostSince) > e.cfg.Mesos.RecoveryTimeout {
			e.log.WithError(err).Error("fine: lost the agent; exiting")
			e.finish(fmt.Errorf("%w: %w", ErrAgentLost, errOr(err)), "")
			<-e.quit
			return e.quitErr
		}
		e.log.WithError(err).Warn("fine: agent connection lost; re-subscribing")
		select {
		case <-e.cfg.Clock.After(backoff):
		case <-e.quit:
			return e.quitErr
		}
		backoff = min(2*backoff, max(e.cfg.Mesos.SubscriptionBackoffMax, 100*time.Millisecond))
	}
}

func errOr(err error) error {
	if err == nil {
		return errors.New("stream ended")
	}
	return err
}

func (e *Executor) setStream(c io.Closer) {
	e.mu.Lock()
	e.stream = c
	closed := false
	select {
	case <-e.quit:
		closed = true
	default:
	}
	e.mu.Unlock()
	if closed && c != nil {
		c.Close()
	}
}

// unackedState is what SUBSCRIBE carries: tasks without an acknowledged
// terminal update and updates without acknowledgement, in send order.
func (e *Executor) unackedState() ([]mesos.TaskInfo, []mexec.Call_Update) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tasks := make([]mesos.TaskInfo, 0, len(e.tasks))
	for _, t := range e.tasks {
		tasks = append(tasks, t.info)
	}
	ps := make([]pending, 0, len(e.unacked))
	for _, p := range e.unacked {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].seq < ps[j].seq })
	ups := make([]mexec.Call_Update, len(ps))
	for i, p := range ps {
		ups[i] = p.upd
	}
	return tasks, ups
}

// finish ends the executor: new launches are refused, running tasks are
// killed, and once their terminal updates are acknowledged (or the grace
// period passed) the stream is closed and Run returns err.
func (e *Executor) finish(err error, why string) {
	e.quitOnce.Do(func() {
		e.mu.Lock()
		e.closing = true
		e.mu.Unlock()
		if why != "" {
			e.log.Infof("fine: exiting: %s", why)
		}
		go func() {
			grace := max(e.cfg.Mesos.ExecutorShutdownGracePeriod-time.Second, time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			e.shutdownRuntime(ctx)
			e.waitAcked(ctx)
			e.mu.Lock()
			e.quitErr = err
			close(e.quit)
			s := e.stream
			e.mu.Unlock()
			if s != nil {
				s.Close()
			}
		}()
	})
}

func (e *Executor) shutdownRuntime(ctx context.Context) {
	e.mu.Lock()
	rt := e.rt
	e.mu.Unlock()
	if rt != nil {
		_ = rt.Close(ctx)
	}
}

// waitAcked waits until every update is acknowledged or ctx ends.
func (e *Executor) waitAcked(ctx context.Context) {
	for {
		e.mu.Lock()
		n := len(e.unacked)
		e.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			e.log.Warnf("fine: exiting with %d unacknowledged update(s)", n)
			return
		case <-e.ackCh:
		case <-e.cfg.Clock.After(50 * time.Millisecond):
		}
	}
}

// sender sends the updates queued on ch, one at a time.
func (e *Executor) sender(ch chan *mexec.Call) {
	defer e.sendWG.Done()
	for call := range ch {
		resp, err := e.cli.Send(context.Background(), calls.NonStreaming(call))
		if resp != nil {
			resp.Close()
		}
		if err != nil {
			// Kept as unacknowledged: SUBSCRIBE resends it.
			e.log.WithError(err).Debugf("fine: send update for task %s", call.Update.Status.TaskID.Value)
		}
	}
}

// queue records an update as unacknowledged and hands it to the sender of
// its task.
func (e *Executor) queue(status mesos.TaskStatus) {
	status.UUID = uuid.New()
	status.Source = mesos.SOURCE_EXECUTOR.Enum()
	status.ExecutorID = &mesos.ExecutorID{Value: e.cfg.Mesos.ExecutorID}
	now := float64(e.cfg.Clock.Now().UnixNano()) / 1e9
	status.Timestamp = &now
	call := calls.Update(status)
	e.mu.Lock()
	e.seq++
	e.unacked[string(status.UUID)] = pending{seq: e.seq, upd: *call.Update}
	if t := e.tasks[status.TaskID.Value]; t != nil && terminal(status.GetState()) {
		t.terminal = status.UUID
	}
	e.mu.Unlock()
	h := fnv.New32a()
	h.Write([]byte(status.TaskID.Value))
	e.sendMu.RLock()
	defer e.sendMu.RUnlock()
	if e.sendClosed {
		return
	}
	e.senders[int(h.Sum32()%uint32(len(e.senders)))] <- call
}

func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_KILLING:
		return false
	}
	return true
}
