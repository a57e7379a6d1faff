package agent

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest/testexecutor"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// testExecutor is this test binary, which is minimesostest/testexecutor
// when started with testexecutor.Env=1 (executorInfo sets it).
var testExecutor string

func TestMain(m *testing.M) {
	testexecutor.RunIfChild()
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	testExecutor = exe
	os.Exit(m.Run())
}

// fakeMaster is an in-process link.Master recording what the agent sends;
// with autoAck it acknowledges every status update once.
type fakeMaster struct {
	mu      sync.Mutex
	regs    []link.Registration
	agent   link.Agent
	updates []link.StatusUpdate
	exited  []link.ExecutorExited
	msgs    []link.ExecutorMessage
	acked   map[string]bool
	autoAck bool
	// hold, if set, keeps autoAck from acknowledging the updates it selects.
	hold    func(link.StatusUpdate) bool
	unknown int // answer this many FromAgent calls with ErrUnknownAgent
	// onUpdate, if set, sees every forwarded update (under f.mu).
	onUpdate func(link.StatusUpdate)
	nextID   string
	// pingInterval is announced at registration (0: the agent's watchdog
	// is off); regAt records when each registration arrived, pongs the
	// sequence numbers of the agent's Pongs.
	pingInterval time.Duration
	// pingTimeout is the total ping timeout announced (0: the agent's
	// default of five intervals).
	pingTimeout time.Duration
	regAt       []time.Time
	pongs       []uint64
	// clk, if set, is the agent's clock, which regAt reads.
	clk *clock.Fake
}

func newFakeMaster() *fakeMaster {
	return &fakeMaster{acked: map[string]bool{}, autoAck: true, nextID: "S1"}
}

func (f *fakeMaster) RegisterAgent(_ context.Context, r link.Registration, to link.Agent) (link.Registered, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.regs = append(f.regs, r)
	at := time.Now()
	if f.clk != nil {
		at = f.clk.Now()
	}
	f.regAt = append(f.regAt, at)
	f.agent = to
	id := f.nextID
	if r.AgentInfo.ID != nil {
		id = r.AgentInfo.ID.Value
	}
	return link.Registered{AgentID: mesos.AgentID{Value: id}, PingInterval: f.pingInterval, PingTimeout: f.pingTimeout}, nil
}

func (f *fakeMaster) FromAgent(_ context.Context, _ string, m link.AgentMessage) error {
	f.mu.Lock()
	if f.unknown > 0 {
		f.unknown--
		f.mu.Unlock()
		return link.ErrUnknownAgent
	}
	var ack *link.Acknowledge
	switch {
	case m.StatusUpdate != nil:
		u := *m.StatusUpdate
		f.updates = append(f.updates, u)
		if f.onUpdate != nil {
			f.onUpdate(u)
		}
		if f.autoAck && !f.acked[string(u.Status.UUID)] && (f.hold == nil || !f.hold(u)) {
			f.acked[string(u.Status.UUID)] = true
			ack = &link.Acknowledge{FrameworkID: u.FrameworkID, TaskID: u.Status.TaskID, UUID: u.Status.UUID}
		}
	case m.ExecutorExited != nil:
		f.exited = append(f.exited, *m.ExecutorExited)
	case m.ExecutorMessage != nil:
		f.msgs = append(f.msgs, *m.ExecutorMessage)
	case m.Pong != nil:
		f.pongs = append(f.pongs, m.Pong.Seq)
	}
	agent := f.agent
	f.mu.Unlock()
	if ack != nil {
		_ = agent.Deliver(link.MasterMessage{Acknowledge: ack})
	}
	return nil
}

func (f *fakeMaster) registrations() []link.Registration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]link.Registration(nil), f.regs...)
}

func (f *fakeMaster) AgentDisconnected(string, link.Agent) {}

func (f *fakeMaster) deliver(t testing.TB, m link.MasterMessage) {
	t.Helper()
	f.mu.Lock()
	a := f.agent
	f.mu.Unlock()
	if err := a.Deliver(m); err != nil {
		t.Fatal(err)
	}
}

// deliveries counts the updates of task to state received, retries
// included.
func (f *fakeMaster) deliveries(task string, state mesos.TaskState) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, u := range f.updates {
		if u.Status.TaskID.Value == task && u.Status.GetState() == state {
			n++
		}
	}
	return n
}

// states returns the distinct updates (by uuid) of a task, in order.
func (f *fakeMaster) states(task string) []mesos.TaskStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []mesos.TaskStatus
	for _, u := range f.updates {
		if u.Status.TaskID.Value == task && !seen[string(u.Status.UUID)] {
			seen[string(u.Status.UUID)] = true
			out = append(out, u.Status)
		}
	}
	return out
}

func stateNames(sts []mesos.TaskStatus) string {
	var s []string
	for _, st := range sts {
		s = append(s, st.State.String())
	}
	return strings.Join(s, ",")
}

// waitState waits until task's last update is want and returns it.
func (f *fakeMaster) waitState(t *testing.T, task string, want mesos.TaskState) mesos.TaskStatus {
	t.Helper()
	var got mesos.TaskStatus
	waitfor.Msg(t, 20*time.Second, func() string {
		sts := f.states(task)
		for _, st := range sts {
			if *st.State == want {
				got = st
				return ""
			}
		}
		return fmt.Sprintf("task %s: updates %s, never %v", task, stateNames(sts), want)
	})
	return got
}

func (f *fakeMaster) waitExited(t *testing.T, ex string) link.ExecutorExited {
	t.Helper()
	var got link.ExecutorExited
	waitfor.True(t, 20*time.Second, "executor "+ex+" to report it exited", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range f.exited {
			if e.ExecutorID.Value == ex {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

type testAgent struct {
	*Agent
	master  *fakeMaster
	workDir string
	srv     *http.Server
}

func fastConfig(t testing.TB, workDir string) Config {
	log := logrus.New()
	log.SetOutput(testWriter{t})
	log.SetLevel(logrus.WarnLevel)
	return Config{
		WorkDir: workDir, Hostname: "test-host",
		RegistrationTimeout: 10 * time.Second, ReregistrationTimeout: 5 * time.Second,
		ShutdownGrace: 2 * time.Second, KillGrace: time.Second, GCDelay: time.Hour,
		UpdateRetryMin: 20 * time.Millisecond, UpdateRetryMax: 200 * time.Millisecond,
		ReregisterBackoff: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		RecoveryTimeout: 30 * time.Second, SubscriptionBackoffMax: 100 * time.Millisecond,
		Logger: log,
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// startAgent runs an agent with an HTTP server on loopback, registered
// with m. Cleanup closes it and checks that no process is left in its
// sandboxes.
func startAgent(t testing.TB, m *fakeMaster, cfg Config) *testAgent {
	t.Helper()
	addr := cfg.Endpoint
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint = ln.Addr().String()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: a.Handler()}
	go srv.Serve(ln)
	ta := &testAgent{Agent: a, master: m, workDir: cfg.WorkDir, srv: srv}
	t.Cleanup(func() {
		a.Close()
		srv.Close()
		if procs := processesIn(cfg.WorkDir); len(procs) > 0 {
			t.Errorf("processes left after Close: %v", procs)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Start(ctx, m); err != nil {
		t.Fatal(err)
	}
	return ta
}

// processesIn scans /proc for live processes whose working directory is
// under dir (every sandbox process is), re-scanning for up to a second
// while processes being reaped are still listed.
func processesIn(dir string) []string {
	var out []string
	waitfor.Poll(time.Second, func() bool {
		out = out[:0]
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil || !strings.HasPrefix(cwd, dir) {
				continue
			}
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
				continue
			}
			out = append(out, e.Name()+":"+cwd)
		}
		return len(out) == 0
	})
	return out
}

func fwInfo(id string, checkpoint bool) mesos.FrameworkInfo {
	return mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: id}, Name: "test", User: "", Checkpoint: &checkpoint}
}

func cmdTask(id, cmd string) *mesos.TaskInfo {
	return &mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Command: &mesos.CommandInfo{Value: &cmd},
		Resources: []mesos.Resource{{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 0.1}}}}
}

func executorInfo(id string, env ...string) *mesos.ExecutorInfo {
	bin := testExecutor
	no := false
	child := "1"
	vars := []mesos.Environment_Variable{{Name: testexecutor.Env, Value: &child}}
	for i := 0; i+1 < len(env); i += 2 {
		v := env[i+1]
		vars = append(vars, mesos.Environment_Variable{Name: env[i], Value: &v})
	}
	return &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: id},
		Command: &mesos.CommandInfo{Value: &bin, Shell: &no, Environment: &mesos.Environment{Variables: vars}}}
}

func executorTask(id, data string, ex *mesos.ExecutorInfo) *mesos.TaskInfo {
	return &mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Executor: ex, Data: []byte(data)}
}

func runTask(t *testing.T, ta *testAgent, fw mesos.FrameworkInfo, task *mesos.TaskInfo) {
	t.Helper()
	ta.master.deliver(t, link.MasterMessage{RunTask: &link.RunTask{Framework: fw, Task: task}})
}
