package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest/testexecutor"
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
	goleak.VerifyTestMain(m)
}

var (
	protobuf  = codecs.ByMediaType[codecs.MediaTypeProtobuf]
	jsonCodec = codecs.ByMediaType[codecs.MediaTypeJSON]
	allCodecs = []encoding.Codec{protobuf, jsonCodec}
)

func forCodecs(t *testing.T, f func(t *testing.T, codec encoding.Codec)) {
	for _, c := range allCodecs {
		t.Run(c.Name, func(t *testing.T) { f(t, c) })
	}
}

const waitTimeout = 15 * time.Second

func testLogger(t testing.TB) *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	if lvl, err := logrus.ParseLevel(os.Getenv("MINIMESOS_IT_LOG")); err == nil {
		l.SetLevel(lvl) // e.g. MINIMESOS_IT_LOG=debug when investigating a failure
	}
	l.SetOutput(testWriter{t})
	return l
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// masterConfig gives every test's master its own id, so that framework
// ids (<master id>-0000) differ between tests and between test binaries
// running at once: the orphan check finds processes by MESOS_FRAMEWORK_ID
// machine-wide, and a shared "it-0000" made one binary's live executors
// another's orphans.
//
// Pings go every 50 ms (agents notice a silent, restarted master after
// 250 ms), but the master removes an agent only after 100 missed pings
// (5 s): with 4 (200 ms), a loaded machine delayed pongs past it and the
// master removed a healthy agent mid-test (TestCommandTasks under make
// stress: its tasks went LOST, then RUNNING). The tests of the health
// check itself use fastHealthCheck.
func masterConfig() master.Config {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return master.Config{
		ID: "it-" + hex.EncodeToString(b), HeartbeatInterval: time.Second, AllocationInterval: 20 * time.Millisecond,
		AllocateOnRelease: true, AgentPingInterval: 50 * time.Millisecond, AgentMaxMissedPings: 100,
	}
}

// fastHealthCheck makes the master remove an agent after 4 missed pings
// (200 ms), for the tests of agent loss and partitions.
func fastHealthCheck(c *cluster.Config) { c.Master.AgentMaxMissedPings = 4 }

func agentConfig(workDir string) agent.Config {
	return agent.Config{
		WorkDir: workDir, Hostname: "127.0.0.1", Resources: "cpus:4;mem:2048;disk:1024;ports:[31000-31099]",
		RegistrationTimeout: 10 * time.Second, ReregistrationTimeout: 5 * time.Second,
		ShutdownGrace: time.Second, KillGrace: time.Second, GCDelay: time.Hour,
		UpdateRetryMin: 100 * time.Millisecond, UpdateRetryMax: 400 * time.Millisecond,
		ReregisterBackoff: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		RecoveryTimeout: 30 * time.Second, SubscriptionBackoffMax: 100 * time.Millisecond,
	}
}

// env is a running minimesos for one test.
type env struct {
	t       *testing.T
	c       *cluster.Cluster
	workDir string
	fwIDs   []string // frameworks whose processes must all be gone at the end
}

// startCluster starts a master with n in-process agents (cluster.Start).
// Cleanup closes everything and fails the test if a process of the
// test's frameworks or agents survived.
func startCluster(t *testing.T, n int, edit ...func(*cluster.Config)) *env {
	t.Helper()
	e := &env{t: t, workDir: t.TempDir()}
	log := testLogger(t)
	cfg := cluster.Config{Listen: "127.0.0.1:0", Master: masterConfig(), Agents: n, Agent: agentConfig(e.workDir), Logger: log}
	for _, f := range edit {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() {
		if t.Failed() {
			dumpSandboxes(t, e.workDir)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("cluster close: %v", err)
		}
		if procs := e.orphans(); len(procs) > 0 {
			t.Errorf("processes outlived the agents: %v", procs)
			// Reported; now kill those of this test (working under its work
			// dir) so that they do not outlive it and fail the next tests
			// (-count=N reuses the framework ids). A test failing between an
			// agent's Stop and its restart leaves such executors.
			killUnder(e.workDir)
		}
	})
	return e
}

func (e *env) schedulerURL() string { return e.c.URL() + "/api/v1/scheduler" }

// orphans lists live processes started for this test: working directory
// under the work dir (every sandbox process) or MESOS_FRAMEWORK_ID of one
// of its frameworks in the environment. It retries for a short while so
// that processes being reaped are not reported.
func (e *env) orphans() []string {
	var out []string
	if waitfor.Poll(2*time.Second, func() bool { out = liveProcesses(e.workDir, e.fwIDs); return len(out) == 0 }) {
		return nil
	}
	return out
}

// liveProcesses lists live processes working under dir (if not empty) or
// with one of fwIDs as MESOS_FRAMEWORK_ID.
func liveProcesses(dir string, fwIDs []string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid := ent.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		mine := dir != "" && cwd != "" && strings.HasPrefix(cwd, dir)
		if environ, err := os.ReadFile(filepath.Join("/proc", pid, "environ")); err == nil {
			for _, v := range bytes.Split(environ, []byte{0}) {
				for _, id := range fwIDs {
					mine = mine || string(v) == "MESOS_FRAMEWORK_ID="+id
				}
			}
		}
		if mine {
			cmd, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
			out = append(out, pid+":"+strings.ReplaceAll(string(cmd), "\x00", " ")+" cwd="+cwd+" stat="+string(st[bytes.LastIndexByte(st, ')')+1:][:12]))
		}
	}
	return out
}

// killUnder kills the process group, and the process, of every live
// process working under dir.
func killUnder(dir string) {
	for _, p := range liveProcesses(dir, nil) {
		pidStr, _, _ := strings.Cut(p, ":")
		if pid, err := strconv.Atoi(pidStr); err == nil && pid > 1 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// dumpSandboxes logs the stdout/stderr of every sandbox under dir.
func dumpSandboxes(t *testing.T, dir string) {
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && (fi.Name() == "stderr" || fi.Name() == "stdout") && fi.Size() > 0 {
			b, _ := os.ReadFile(p)
			t.Logf("%s:\n%s", p, b)
		}
		return nil
	})
}

// localAgent is an agent started by a test (not by cluster.Start), with
// its own HTTP server, so that it can be stopped and restarted in place.
type localAgent struct {
	*agent.Agent
	cfg  agent.Config
	srv  *http.Server
	done chan struct{}
}

// startAgent starts an agent on cfg.Endpoint (or a fresh port) registered
// with m. Cleanup closes it.
func startAgent(t *testing.T, m link.Master, cfg agent.Config) *localAgent {
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
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	if cfg.Fetch == nil {
		if cfg.Fetch, err = cluster.NewFetch(filepath.Join(cfg.WorkDir, "fetch-cache"), 0); err != nil {
			t.Fatal(err)
		}
	}
	a, err := agent.New(cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	la := &localAgent{Agent: a, cfg: cfg, srv: &http.Server{Handler: a.Handler()}, done: make(chan struct{})}
	go func() {
		defer close(la.done)
		_ = la.srv.Serve(ln)
	}()
	t.Cleanup(la.close)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := a.Start(ctx, m); err != nil {
		t.Fatal(err)
	}
	return la
}

func (la *localAgent) close() {
	la.Agent.Close()
	la.srv.Close()
	<-la.done
}

// stop stops the agent leaving its executors running, and frees its port.
func (la *localAgent) stop() {
	la.Agent.Stop()
	la.srv.Close()
	<-la.done
}

// sched is a framework built with mesos-go's httpcli + httpsched. It
// records every event and, with autoAck, explicitly acknowledges every
// update carrying a uuid unless hold says not to.
type sched struct {
	t      *testing.T
	caller calls.Caller
	info   *mesos.FrameworkInfo
	id     string
	cancel context.CancelFunc
	resp   mesos.Response
	done   chan struct{}

	mu       sync.Mutex
	events   []*scheduler.Event
	ended    error
	usedOffr map[string]bool
	autoAck  bool
	hold     func(mesos.TaskStatus) bool
	ackErrs  []error
	closing  bool
	barriers int
	acked    []mesos.TaskStatus // updates acknowledged, in order
}

func newCaller(url string, codec encoding.Codec) calls.Caller {
	cli := httpcli.New(httpcli.Endpoint(url), httpcli.Codec(codec), httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))))
	return httpsched.NewCaller(cli, httpsched.AllowReconnection(true))
}

func fwInfo(name string, checkpoint bool, caps ...mesos.FrameworkInfo_Capability_Type) *mesos.FrameworkInfo {
	fi := &mesos.FrameworkInfo{User: "", Name: name, Checkpoint: &checkpoint}
	for _, c := range caps {
		fi.Capabilities = append(fi.Capabilities, mesos.FrameworkInfo_Capability{Type: c})
	}
	return fi
}

// subscribe subscribes a framework and waits for SUBSCRIBED.
func (e *env) subscribe(codec encoding.Codec, fi *mesos.FrameworkInfo) *sched {
	e.t.Helper()
	s := subscribeTo(e.t, e.schedulerURL(), codec, fi)
	e.fwIDs = append(e.fwIDs, s.id)
	return s
}

func subscribeTo(t *testing.T, url string, codec encoding.Codec, fi *mesos.FrameworkInfo) *sched {
	t.Helper()
	return subscribeHolding(t, url, codec, fi, nil)
}

// subscribeHolding is subscribeTo with hold set from the start.
func subscribeHolding(t *testing.T, url string, codec encoding.Codec, fi *mesos.FrameworkInfo, hold func(mesos.TaskStatus) bool) *sched {
	t.Helper()
	s := &sched{t: t, caller: newCaller(url, codec), info: fi, done: make(chan struct{}), usedOffr: map[string]bool{}, autoAck: true, hold: hold}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	resp, err := s.caller.Call(ctx, calls.Subscribe(fi))
	if err != nil {
		cancel()
		t.Fatalf("subscribe: %v", err)
	}
	s.resp = resp
	go s.read()
	t.Cleanup(s.close)
	ev := s.waitEvent("SUBSCRIBED", func(e *scheduler.Event) bool { return e.GetType() == scheduler.Event_SUBSCRIBED })
	s.id = ev.Subscribed.FrameworkID.Value
	if fi.ID == nil {
		fi.ID = &mesos.FrameworkID{Value: s.id}
	}
	return s
}

func (s *sched) read() {
	defer close(s.done)
	for {
		var ev scheduler.Event
		err := s.resp.Decode(&ev)
		s.mu.Lock()
		if err != nil {
			s.ended = err
			s.mu.Unlock()
			return
		}
		s.events = append(s.events, &ev)
		ack := s.autoAck && ev.GetType() == scheduler.Event_UPDATE && len(ev.Update.Status.UUID) > 0 &&
			(s.hold == nil || !s.hold(ev.Update.Status))
		s.mu.Unlock()
		if ack {
			st := ev.Update.Status
			err := s.call(calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID))
			s.mu.Lock()
			switch {
			case err == nil:
				s.acked = append(s.acked, st)
			case !s.closing: // else the framework may be gone already
				s.ackErrs = append(s.ackErrs, err)
			}
			s.mu.Unlock()
		}
	}
}

func (s *sched) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.cancel()
	if s.resp != nil {
		s.resp.Close()
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.ackErrs {
		s.t.Errorf("framework %s: ACKNOWLEDGE failed: %v", s.id, err)
	}
	s.ackErrs = nil
}

func (s *sched) call(c *scheduler.Call) error {
	if c.GetType() != scheduler.Call_SUBSCRIBE {
		c = c.With(calls.Framework(s.id))
	}
	resp, err := s.caller.Call(context.Background(), c)
	if resp != nil {
		resp.Close()
	}
	return err
}

func (s *sched) mustCall(c *scheduler.Call) {
	s.t.Helper()
	if err := s.call(c); err != nil {
		s.t.Fatalf("%v: %v", c.GetType(), err)
	}
}

func (s *sched) snapshot() []*scheduler.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*scheduler.Event(nil), s.events...)
}

// waitEvent waits for an event matching f (in the whole history).
func (s *sched) waitEvent(what string, f func(*scheduler.Event) bool) *scheduler.Event {
	s.t.Helper()
	var found *scheduler.Event
	var ended error
	waitfor.Poll(waitTimeout, func() bool {
		for _, ev := range s.snapshot() {
			if f(ev) {
				found = ev
				return true
			}
		}
		s.mu.Lock()
		ended = s.ended
		s.mu.Unlock()
		return ended != nil
	})
	if found == nil {
		s.t.Fatalf("framework %s: no %s (stream ended: %v); events: %s", s.id, what, ended, s.describe())
	}
	return found
}

// waitAcked waits until this subscription has acknowledged an update of
// taskID to state (a failover must not overtake the acknowledgement: the
// master refuses one on the old stream).
func (s *sched) waitAcked(taskID string, state mesos.TaskState) {
	s.t.Helper()
	waitfor.True(s.t, waitTimeout, fmt.Sprintf("the acknowledgement of %v for %s", state, taskID), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, st := range s.acked {
			if st.TaskID.Value == taskID && st.GetState() == state {
				return true
			}
		}
		return false
	})
}

// barrier reconciles a task unknown to the master and waits for the
// answer: every event the master sent before it has arrived then (one
// stream, in order).
func (s *sched) barrier() {
	s.t.Helper()
	s.mu.Lock()
	s.barriers++
	id := fmt.Sprintf("barrier-%d", s.barriers)
	s.mu.Unlock()
	s.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{id: ""})))
	s.waitEvent("the answer to reconciling "+id, func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == id
	})
}

func (s *sched) describe() string {
	var b strings.Builder
	for _, ev := range s.snapshot() {
		switch ev.GetType() {
		case scheduler.Event_HEARTBEAT:
			continue
		case scheduler.Event_UPDATE:
			st := ev.Update.Status
			fmt.Fprintf(&b, "\n  UPDATE %s %v %v %q uuid=%t", st.TaskID.Value, st.GetState(), st.GetReason(), st.GetMessage(), len(st.UUID) > 0)
		case scheduler.Event_OFFERS:
			fmt.Fprintf(&b, "\n  OFFERS %d", len(ev.Offers.Offers))
		default:
			fmt.Fprintf(&b, "\n  %v", ev.GetType())
		}
	}
	return b.String()
}

// offer returns an offer not used yet (from agentID if not empty) that has
// not been rescinded.
func (s *sched) offer(agentID string) mesos.Offer {
	s.t.Helper()
	var got mesos.Offer
	s.waitEvent("offer from agent "+agentID, func(ev *scheduler.Event) bool {
		if ev.GetType() != scheduler.Event_OFFERS {
			return false
		}
		for _, o := range ev.Offers.Offers {
			if (agentID == "" || o.AgentID.Value == agentID) && !s.isUsed(o.ID.Value) && !s.rescinded(o.ID.Value) {
				got = o
				return true
			}
		}
		return false
	})
	s.mu.Lock()
	s.usedOffr[got.ID.Value] = true
	s.mu.Unlock()
	return got
}

// declineAll suppresses offers and declines every outstanding offer.
func (s *sched) declineAll() {
	s.t.Helper()
	s.mustCall(calls.Suppress())
	s.barrier() // offers already on their way have arrived
	for _, ev := range s.snapshot() {
		if ev.GetType() != scheduler.Event_OFFERS {
			continue
		}
		for _, o := range ev.Offers.Offers {
			if !s.isUsed(o.ID.Value) && !s.rescinded(o.ID.Value) {
				s.mu.Lock()
				s.usedOffr[o.ID.Value] = true
				s.mu.Unlock()
				s.mustCall(calls.Decline(o.ID).With(calls.RefuseSeconds(time.Hour)))
			}
		}
	}
}

// outstanding returns an unused, unrescinded offer of agentID if any.
func (s *sched) outstanding(agentID string) (mesos.Offer, bool) {
	for _, ev := range s.snapshot() {
		if ev.GetType() != scheduler.Event_OFFERS {
			continue
		}
		for _, o := range ev.Offers.Offers {
			if o.AgentID.Value == agentID && !s.isUsed(o.ID.Value) && !s.rescinded(o.ID.Value) {
				return o, true
			}
		}
	}
	return mesos.Offer{}, false
}

func (s *sched) isUsed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usedOffr[id]
}

func (s *sched) rescinded(id string) bool {
	for _, ev := range s.snapshot() {
		if ev.GetType() == scheduler.Event_RESCIND && ev.Rescind.OfferID.Value == id {
			return true
		}
	}
	return false
}

// launch accepts o with tasks, declining what is left for a moment only.
func (s *sched) launch(o mesos.Offer, tasks ...mesos.TaskInfo) {
	s.t.Helper()
	for i := range tasks {
		tasks[i].AgentID = o.AgentID
	}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(tasks...)}.WithOffers(o.ID)).With(calls.RefuseSeconds(10 * time.Millisecond)))
}

// updates returns a task's UPDATEs in arrival order; agent updates are
// deduplicated by uuid (retries), master ones (no uuid) kept.
func (s *sched) updates(taskID string) []mesos.TaskStatus {
	seen := map[string]bool{}
	var out []mesos.TaskStatus
	for _, ev := range s.snapshot() {
		if ev.GetType() != scheduler.Event_UPDATE || ev.Update.Status.TaskID.Value != taskID {
			continue
		}
		st := ev.Update.Status
		if len(st.UUID) > 0 {
			if seen[string(st.UUID)] {
				continue
			}
			seen[string(st.UUID)] = true
		}
		out = append(out, st)
	}
	return out
}

func stateNames(sts []mesos.TaskStatus) string {
	var n []string
	for _, st := range sts {
		n = append(n, strings.TrimPrefix(st.GetState().String(), "TASK_"))
	}
	return strings.Join(n, ",")
}

// waitState waits for an update of taskID to state and returns it.
func (s *sched) waitState(taskID string, state mesos.TaskState) mesos.TaskStatus {
	s.t.Helper()
	ev := s.waitEvent(fmt.Sprintf("%v for %s", state, taskID), func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == taskID && ev.Update.Status.GetState() == state
	})
	return ev.Update.Status
}

// expectUpdates checks the distinct updates of a task, in order, and that
// each carries the agent id and (agent updates) a uuid.
func (s *sched) expectUpdates(taskID, agentID, want string) []mesos.TaskStatus {
	s.t.Helper()
	sts := s.updates(taskID)
	if got := stateNames(sts); got != want {
		s.t.Fatalf("task %s: updates %s, want %s; events: %s", taskID, got, want, s.describe())
	}
	for _, st := range sts {
		if st.GetAgentID().GetValue() != agentID {
			s.t.Fatalf("task %s: update %v has agent_id %q, want %q", taskID, st.GetState(), st.GetAgentID().GetValue(), agentID)
		}
		if len(st.UUID) != 16 {
			s.t.Fatalf("task %s: agent update %v without uuid", taskID, st.GetState())
		}
	}
	return sts
}

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func smallResources() mesos.Resources { return mesos.Resources{scalar("cpus", 0.1), scalar("mem", 32)} }

func commandTask(id, cmd string) mesos.TaskInfo {
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Resources: smallResources(),
		Command: &mesos.CommandInfo{Value: &cmd}}
}

// executorInfo is the test executor, speaking codec to the agent.
func executorInfo(id string, codec encoding.Codec) *mesos.ExecutorInfo {
	bin := testExecutor
	no := false
	js, child := "0", "1"
	if codec.Type == codecs.MediaTypeJSON {
		js = "1"
	}
	return &mesos.ExecutorInfo{
		ExecutorID: mesos.ExecutorID{Value: id}, Resources: smallResources(),
		Command: &mesos.CommandInfo{Value: &bin, Shell: &no, Arguments: []string{"executor"},
			Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "TESTEXEC_JSON", Value: &js}, {Name: testexecutor.Env, Value: &child}}}},
	}
}

func executorTask(id, data string, ex *mesos.ExecutorInfo) mesos.TaskInfo {
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, Resources: smallResources(), Executor: ex, Data: []byte(data)}
}

// stateTasks reads /state and returns task id → state of every live and
// completed task, by framework id.
func stateTasks(t *testing.T, url string) map[string]map[string]string {
	t.Helper()
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Frameworks []struct {
			ID             string      `json:"id"`
			Tasks          []stateTask `json:"tasks"`
			CompletedTasks []stateTask `json:"completed_tasks"`
		} `json:"frameworks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, f := range doc.Frameworks {
		m := map[string]string{}
		for _, tk := range append(f.Tasks, f.CompletedTasks...) {
			m[tk.ID] = tk.State + "@" + tk.SlaveID
		}
		out[f.ID] = m
	}
	return out
}

// completedFramework returns "task=state ..." of a completed framework
// in /state ("" if it is not completed).
func completedFramework(t *testing.T, url, id string) string {
	t.Helper()
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Completed []struct {
			ID             string      `json:"id"`
			Tasks          []stateTask `json:"tasks"`
			CompletedTasks []stateTask `json:"completed_tasks"`
		} `json:"completed_frameworks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range doc.Completed {
		if f.ID == id {
			for _, tk := range append(f.Tasks, f.CompletedTasks...) {
				out = append(out, tk.ID+"="+tk.State)
			}
		}
	}
	return strings.Join(out, " ")
}

type stateTask struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	SlaveID string `json:"slave_id"`
}

// eventually polls f until it returns "" or the deadline passes.
func eventually(t *testing.T, f func() string) {
	t.Helper()
	waitfor.Msg(t, waitTimeout, f)
}
