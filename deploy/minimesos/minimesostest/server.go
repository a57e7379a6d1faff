package minimesostest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

// AgentStarter starts one agent against m and returns how to stop it.
type AgentStarter func(m link.Master) (stop func(), err error)

type options struct {
	cfg    master.Config
	agents []AgentStarter
	fakes  int
	res    mesos.Resources
}

// Option configures NewServer.
type Option func(*options)

// WithConfig edits the master's Config (after the test defaults are set).
func WithConfig(f func(*master.Config)) Option { return func(o *options) { f(&o.cfg) } }

// WithAgents starts agents (e.g. real in-process agents) with the master.
func WithAgents(starters ...AgentStarter) Option {
	return func(o *options) { o.agents = append(o.agents, starters...) }
}

// WithFakeAgents registers n FakeAgents with res each (default
// cpus:4;mem:4096;disk:10000;ports:[31000-32000]).
func WithFakeAgents(n int, res mesos.Resources) Option {
	return func(o *options) { o.fakes, o.res = n, res }
}

// Server is a master on loopback with its agents.
type Server struct {
	URL string // http://127.0.0.1:port
	// Master is the running master (a new one after RestartMaster).
	Master *master.Master
	Fakes  []*FakeAgent

	t     testing.TB
	cfg   master.Config
	link  *masterLink
	srv   *http.Server
	stops []func()
	once  sync.Once
	done  chan struct{}
}

// masterLink is the link.Master the Server's agents talk to: it forwards
// to the current master, so agents follow RestartMaster.
type masterLink struct {
	mu sync.RWMutex
	m  *master.Master
}

func (l *masterLink) get() *master.Master {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.m
}

func (l *masterLink) set(m *master.Master) {
	l.mu.Lock()
	l.m = m
	l.mu.Unlock()
}

func (l *masterLink) RegisterAgent(ctx context.Context, r link.Registration, to link.Agent) (link.Registered, error) {
	return l.get().RegisterAgent(ctx, r, to)
}

func (l *masterLink) FromAgent(ctx context.Context, agentID string, m link.AgentMessage) error {
	return l.get().FromAgent(ctx, agentID, m)
}

func (l *masterLink) AgentDisconnected(agentID string, to link.Agent) {
	l.get().AgentDisconnected(agentID, to)
}

// DefaultResources of fake agents.
func DefaultResources() mesos.Resources {
	return mesos.Resources{
		{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4}},
		{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
		{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 10000}},
		{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 32000}}}},
	}
}

// NewServer starts a master with test defaults; t.Cleanup closes it.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := &options{cfg: master.Config{
		ID: "test", HeartbeatInterval: time.Second, AllocationInterval: 50 * time.Millisecond,
		AgentPingInterval: 100 * time.Millisecond, AgentMaxMissedPings: 5, Hostname: "127.0.0.1",
	}}
	for _, opt := range opts {
		opt(o)
	}
	if o.cfg.Logger == nil {
		l := logrus.New()
		l.SetLevel(logrus.WarnLevel)
		l.SetOutput(testWriter{t})
		o.cfg.Logger = l
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("minimesostest: %v", err)
	}
	o.cfg.Port = uint32(ln.Addr().(*net.TCPAddr).Port)
	m, err := master.New(o.cfg)
	if err != nil {
		ln.Close()
		t.Fatalf("minimesostest: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Master: m, t: t, cfg: o.cfg, link: &masterLink{m: m}}
	s.serve(ln)
	t.Cleanup(s.Close)
	if o.res == nil {
		o.res = DefaultResources()
	}
	for i := 0; i < o.fakes; i++ {
		a := NewFakeAgent("fake-agent-"+string(rune('a'+i%26)), o.res)
		if err := a.Register(s.link); err != nil {
			t.Fatalf("minimesostest: registering fake agent: %v", err)
		}
		s.Fakes = append(s.Fakes, a)
	}
	for _, start := range o.agents {
		stop, err := start(s.link)
		if err != nil {
			t.Fatalf("minimesostest: starting agent: %v", err)
		}
		s.stops = append(s.stops, stop)
	}
	return s
}

func (s *Server) serve(ln net.Listener) {
	s.srv = &http.Server{Handler: s.Master.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	srv, done := s.srv, s.done
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
}

// Link is the link.Master agents of this Server use: it forwards to the
// current master, so agents registered through it follow RestartMaster.
func (s *Server) Link() link.Master { return s.link }

// RestartMaster is the fault "the master restarts, agents keep running":
// it closes the master (every framework stream ends) and its HTTP
// server, then starts a new master with the same Config (same ID, same
// address, same Clock) on the same address. Fake agents re-register at
// once reporting the frameworks, executors and tasks they track (see
// FakeAgent.Registration); agents started with WithAgents talk through
// Link and re-register on their own once they miss the new master's
// pings. The new master knows nothing else: frameworks re-subscribe with
// their id and find their tasks, as after a Mesos master failover.
func (s *Server) RestartMaster() {
	s.t.Helper()
	s.Master.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
	<-s.done
	addr := s.URL[len("http://"):]
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		s.t.Fatalf("minimesostest: restart: listening on %s again: %v", addr, err)
	}
	m, err := master.New(s.cfg)
	if err != nil {
		ln.Close()
		s.t.Fatalf("minimesostest: restart: %v", err)
	}
	s.Master = m
	s.link.set(m)
	s.serve(ln)
	for _, a := range s.Fakes {
		if err := a.RegisterWith(s.link, a.Registration()); err != nil {
			s.t.Fatalf("minimesostest: restart: re-registering fake agent %s: %v", a.ID(), err)
		}
	}
}

// SchedulerURL is the scheduler API endpoint.
func (s *Server) SchedulerURL() string { return s.URL + "/api/v1/scheduler" }

// Faults returns the master's fault hooks.
func (s *Server) Faults() master.Faults { return s.Master.Faults() }

// Close stops agents, the master and the HTTP server, and waits.
func (s *Server) Close() {
	s.once.Do(func() {
		for i := len(s.stops) - 1; i >= 0; i-- {
			s.stops[i]()
		}
		for _, a := range s.Fakes {
			a.Stop()
		}
		s.Master.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		_ = s.srv.Close()
		<-s.done
	})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
