package master

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// Master is a minimesos master. All state is guarded by one mutex; the
// allocator is driven from it. Create with New, serve Handler, end with Close.
type Master struct {
	cfg  Config
	log  logrus.FieldLogger
	info mesos.MasterInfo

	mu        sync.Mutex
	closed    bool
	alloc     *allocator.Allocator
	fws       map[string]*framework
	removedFw *removedIDs
	completed []*framework
	agents    map[string]*agent
	// unreachable and gone agents (removed by health check or by operator).
	unreachable map[string]time.Time
	gone        map[string]bool
	offers      map[string]*offer
	nextFw      int
	nextOffer   int
	nextAgent   int
	pingSeq     uint64
	metrics     map[string]float64
	started     time.Time
	elected     time.Time // when it began to lead (started, unless Elected says later)
	recovered   time.Time // when its registry recovery ends (elected + RecoveryTime)

	wg      sync.WaitGroup // timers' callbacks and streams
	timers  map[*loop]struct{}
	streams map[*subscription]struct{}
}

var _ link.Master = (*Master)(nil)

// New returns a running master (its allocation, heartbeat and ping loops
// started).
func New(cfg Config) (*Master, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	al, err := allocator.New(allocator.Config{
		Weights:              cfg.Weights,
		MaxOutstandingOffers: cfg.MaxOutstandingOffers,
	}, rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)))
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	m := &Master{
		cfg:         cfg,
		log:         cfg.Logger.WithField("component", "minimesos-master"),
		alloc:       al,
		fws:         map[string]*framework{},
		removedFw:   newRemovedIDs(maxRemembered),
		agents:      map[string]*agent{},
		unreachable: map[string]time.Time{},
		gone:        map[string]bool{},
		offers:      map[string]*offer{},
		metrics:     map[string]float64{},
		started:     cfg.Clock.Now(),
		elected:     cfg.Clock.Now(),
		recovered:   cfg.Clock.Now().Add(cfg.RecoveryTime),
		timers:      map[*loop]struct{}{},
		streams:     map[*subscription]struct{}{},
	}
	hn, port, ip := cfg.Hostname, cfg.Port, cfg.IP.String()
	pid := "master@" + net.JoinHostPort(ip, strconv.FormatUint(uint64(port), 10))
	m.info = mesos.MasterInfo{
		ID: cfg.ID, IP: PackIPv4(cfg.IP), Port: &port, PID: &pid, Hostname: &hn,
		Version: proto(Version),
		Address: &mesos.Address{Hostname: &hn, IP: &ip, Port: int32(port)},
	}
	m.log.WithFields(logrus.Fields{"id": cfg.ID, "seed": cfg.Seed}).Info("master started")
	m.mu.Lock()
	m.every(cfg.AllocationInterval, m.allocateLocked)
	m.every(cfg.HeartbeatInterval, m.heartbeatLocked)
	m.every(cfg.AgentPingInterval, m.pingLocked)
	m.mu.Unlock()
	return m, nil
}

func proto[T any](v T) *T { return &v }

// PackIPv4 encodes an IPv4 address as MasterInfo.ip: Mesos stores the
// in_addr's s_addr there, the four bytes in network order read as a
// native integer, and its readers take ntohl(ip). On the little-endian
// hosts Mesos runs on that is the little-endian reading of the bytes
// (127.0.0.1 is 0x0100007f), which this returns on any host, as Flint's
// ZooKeeper detector expects. (mesos-go's v0 detector reads it big-endian;
// see MESOS-1201.) It returns 0 for a non-IPv4 address.
func PackIPv4(ip net.IP) uint32 {
	ip4 := ip.To4()
	if ip4 == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(ip4)
}

// ID is the master's id.
func (m *Master) ID() string { return m.cfg.ID }

// Elected records that the master has just won a leader election (a
// ZooKeeper-backed master serves nobody before): agents of the cluster
// have AgentReregisterTimeout from now on to re-register, and frameworks
// get 503 for RecoveryTime, as a Mesos master's registry recovery starts
// once it is elected.
func (m *Master) Elected() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.elected = m.cfg.Clock.Now()
	m.recovered = m.elected.Add(m.cfg.RecoveryTime)
}

// RecoveredAt is when the master's registry recovery ends (or ended):
// from then on it serves frameworks.
func (m *Master) RecoveredAt() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recovered
}

// recovering reports whether the master still recovers its registry.
func (m *Master) recovering() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg.Clock.Now().Before(m.recovered)
}

// Info is the MasterInfo sent to frameworks and agents.
func (m *Master) Info() mesos.MasterInfo { return m.info }

// Handler serves /api/v1/scheduler, /state, /master/state, /health,
// /teardown, /master/teardown, /metrics/snapshot and
// /master/metrics/snapshot.
func (m *Master) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", m.serveScheduler)
	mux.HandleFunc("/master/api/v1/scheduler", m.serveScheduler)
	mux.HandleFunc("/state", m.serveState)
	mux.HandleFunc("/master/state", m.serveState)
	mux.HandleFunc("/state.json", m.serveState)
	mux.HandleFunc("/master/state.json", m.serveState)
	mux.HandleFunc("/health", m.serveHealth)
	mux.HandleFunc("/master/health", m.serveHealth)
	mux.HandleFunc("/teardown", m.serveTeardown)
	mux.HandleFunc("/master/teardown", m.serveTeardown)
	mux.HandleFunc("/metrics/snapshot", m.serveMetrics)
	mux.HandleFunc("/master/metrics/snapshot", m.serveMetrics)
	return m.logRequests(mux)
}

func (m *Master) logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "remote": r.RemoteAddr}).Debug("http request")
		h.ServeHTTP(w, r)
	})
}

// Close ends every stream, stops the loops and timers and waits for them.
// Agents are not told anything. Close is idempotent.
func (m *Master) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return
	}
	m.closed = true
	for l := range m.timers {
		m.cancel(l)
	}
	for s := range m.streams {
		s.end(nil)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// loop is a periodic callback on the injected clock.
type loop struct {
	t       Timer
	stopped bool
}

// every runs f (with m.mu held) every d until Close. Callers hold m.mu.
func (m *Master) every(d time.Duration, f func(now time.Time)) {
	if d <= 0 {
		return
	}
	l := &loop{}
	if m.closed { // nothing runs after Close (and Close must not wait for it)
		l.stopped = true
		return
	}
	m.timers[l] = struct{}{}
	var arm func()
	arm = func() {
		m.wg.Add(1)
		l.t = m.cfg.Clock.AfterFunc(d, func() {
			defer m.wg.Done()
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.closed || l.stopped {
				return
			}
			f(m.cfg.Clock.Now())
			arm()
		})
	}
	arm()
}

// after runs f (with m.mu held) once after d unless stopped or closed.
// Callers hold m.mu.
func (m *Master) after(d time.Duration, f func(now time.Time)) *loop {
	l := &loop{}
	if m.closed { // e.g. a stream ending during Close must not arm a failover timer Close would wait for
		l.stopped = true
		return l
	}
	m.timers[l] = struct{}{}
	m.wg.Add(1)
	l.t = m.cfg.Clock.AfterFunc(d, func() {
		defer m.wg.Done()
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed || l.stopped {
			return
		}
		l.stopped = true
		delete(m.timers, l)
		f(m.cfg.Clock.Now())
	})
	return l
}

func (m *Master) inc(name string, by float64) { m.metrics[name] += by }

// heartbeatLocked sends HEARTBEAT on every stream.
func (m *Master) heartbeatLocked(time.Time) {
	for _, f := range m.fws {
		if f.sub != nil {
			f.send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
		}
	}
}

// cancel stops a loop or an after() timer. A callback already started
// returns at once (it sees stopped); a timer stopped before firing never
// runs, so its wg count is released here. Callers hold m.mu.
func (m *Master) cancel(l *loop) {
	if l == nil || l.stopped {
		return
	}
	l.stopped = true
	delete(m.timers, l)
	if l.t != nil && l.t.Stop() {
		m.wg.Done()
	}
}
