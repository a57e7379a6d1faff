package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/uri"
)

// Config describes a cluster to start.
type Config struct {
	// Listen is the master's host:port ("127.0.0.1:0" picks a port).
	Listen string
	// Master configures the master; Hostname, IP and Port are filled from
	// the listener when empty (for a wildcard listener: the machine's host
	// name and its IPv4 address, see masterAddress).
	Master master.Config
	// AgentSecret, when set, is the bearer secret remote agents must present.
	AgentSecret string
	// Agents is the number of in-process agents; Agent is their template.
	// Each gets WorkDir/agent-<i> and its own listener on AgentListen.
	Agents      int
	Agent       agent.Config
	AgentListen string // default "127.0.0.1:0"
	// FetchCacheBytes bounds each agent's fetcher cache (0: no cache).
	FetchCacheBytes int64
	// ZooKeeper, when set, makes the master elect itself in ZooKeeper as
	// a ZooKeeper-backed Mesos master does (see ZooKeeper); frameworks
	// then find it through mesos://zk://servers/path.
	ZooKeeper *ZooKeeper
	Logger    logrus.FieldLogger
}

// Cluster is a running master with its in-process agents.
type Cluster struct {
	// Master is the running master (replaced by RestartMaster).
	Master *master.Master
	Agents []*agent.Agent

	url       string
	addr      string
	mcfg      master.Config
	secret    string
	log       logrus.FieldLogger
	ref       *masterRef
	masterSrv *http.Server
	// endMaster cancels the contexts of the master server's requests: a
	// closed master's long-lived streams (remote agents' registrations)
	// end at once, as a Mesos master's exit closes its sockets, instead of
	// holding Shutdown until its deadline.
	endMaster context.CancelFunc
	servers   []*http.Server // agents' servers
	conns     connTracker
	zk        *ZooKeeper
	zkMu      sync.Mutex
	cont      *contender    // the current master's candidacy (ZooKeeper mode)
	stopZK    chan struct{} // ends replaced masters' candidacies at once (Close)
	wg        sync.WaitGroup
	cancel    context.CancelFunc
	once      sync.Once
	err       error
}

// Start starts the master and the agents, and returns once every agent has
// registered (or ctx ends).
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Logger == nil {
		cfg.Logger = logrus.StandardLogger()
	}
	cfg.Listen = cmp.Or(cfg.Listen, "127.0.0.1:5050")
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster: master listen: %w", err)
	}
	c := &Cluster{ref: &masterRef{}, secret: cfg.AgentSecret, log: cfg.Logger, zk: cfg.ZooKeeper, stopZK: make(chan struct{})}
	c.ref.gate = c.leading
	if err := c.startMaster(cfg, lis); err != nil {
		lis.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for i := 0; i < cfg.Agents; i++ {
		if err := c.startAgent(ctx, runCtx, cfg, i); err != nil {
			c.Close(context.Background())
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) startMaster(cfg Config, lis net.Listener) error {
	listen, port := listenAddr(lis)
	mc := cfg.Master
	hostname, ip := system.masterAddress(listen, mc.Hostname)
	mc.Hostname = hostname
	if mc.IP == nil {
		mc.IP = ip
	}
	if mc.Port == 0 {
		mc.Port = uint32(port)
	}
	if mc.Logger == nil {
		mc.Logger = cfg.Logger
	}
	m, err := master.New(mc)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	mc.ID = m.ID() // a restarted master keeps the id, as a Mesos master failover keeps the cluster's
	c.mcfg, c.addr, c.url = mc, lis.Addr().String(), "http://"+lis.Addr().String()
	if err := c.contend(m); err != nil {
		m.Close()
		return err
	}
	c.runMaster(m, lis)
	return nil
}

// contend makes m a candidate in ZooKeeper (ZooKeeper mode only).
func (c *Cluster) contend(m *master.Master) error {
	if c.zk == nil {
		return nil
	}
	elected := func() {
		m.Elected()
		c.zkMu.Lock()
		agents := append([]*agent.Agent(nil), c.Agents...)
		c.zkMu.Unlock()
		for _, a := range agents {
			a.MasterDetected()
		}
	}
	cont, err := contend(*c.zk, m.Info(), elected, c.log)
	if err != nil {
		return err
	}
	c.zkMu.Lock()
	c.cont = cont
	c.zkMu.Unlock()
	return nil
}

func (c *Cluster) contender() *contender {
	c.zkMu.Lock()
	defer c.zkMu.Unlock()
	return c.cont
}

// leading reports whether the current master may serve agents.
func (c *Cluster) leading() bool {
	cont := c.contender()
	if cont == nil {
		return true
	}
	l, _ := cont.state()
	return l
}

// runMaster makes m the master agents and frameworks reach, serving it on lis.
func (c *Cluster) runMaster(m *master.Master, lis net.Listener) {
	c.Master = m
	c.ref.set(m)
	mux := http.NewServeMux()
	mux.Handle("/internal/agent/", link.Handler(c.ref, link.HandlerConfig{Secret: c.secret, Logger: c.log}))
	mux.Handle("/", gate(c.contender, m.Handler()))
	c.masterSrv = c.newServer(mux)
	base, end := context.WithCancel(context.Background())
	c.masterSrv.BaseContext = func(net.Listener) context.Context { return base }
	c.endMaster = end
	c.run(c.masterSrv, lis)
}

// RestartMaster is the fault "the master fails over, agents keep running":
// it closes the master (framework streams end, in-process and remote agents
// lose it) and starts a new one with the same id on the same address. The
// new master knows nothing: agents re-register with what they run and
// frameworks re-subscribe with their ids and find their tasks.
func (c *Cluster) RestartMaster(ctx context.Context) error {
	c.Master.Close()
	c.endMaster()
	c.conns.closeUnusedAndWait(ctx)
	if err := c.masterSrv.Shutdown(ctx); err != nil {
		c.masterSrv.Close()
	}
	var lis net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if lis, err = net.Listen("tcp", c.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("cluster: restart master: listen on %s again: %w", c.addr, err)
	}
	mc := c.mcfg
	if c.zk != nil {
		mc.ID = "" // a restarted Mesos master has a new id
	}
	m, err := master.New(mc)
	if err != nil {
		lis.Close()
		return fmt.Errorf("cluster: restart master: %w", err)
	}
	c.expire(c.contender())
	if err := c.contend(m); err != nil {
		lis.Close()
		m.Close()
		return fmt.Errorf("cluster: restart master: %w", err)
	}
	c.runMaster(m, lis)
	c.log.Infof("cluster: master %s restarted on %s", m.ID(), c.addr)
	return nil
}

// expire ends a replaced master's candidacy once its ZooKeeper session
// would have expired, had its process crashed: until then ZooKeeper still
// names it and the new master answers 307 towards it.
func (c *Cluster) expire(old *contender) {
	if old == nil {
		return
	}
	timeout := c.zk.SessionTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-time.After(timeout):
		case <-c.stopZK:
		}
		old.close()
	}()
}

func (c *Cluster) newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, ConnState: c.conns.track}
}

func (c *Cluster) serve(lis net.Listener, h http.Handler) {
	srv := c.newServer(h)
	c.servers = append(c.servers, srv)
	c.run(srv, lis)
}

func (c *Cluster) run(srv *http.Server, lis net.Listener) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Errorf("cluster: serve %s: %v", lis.Addr(), err)
		}
	}()
}

func (c *Cluster) startAgent(ctx, runCtx context.Context, cfg Config, i int) error {
	listen := cfg.AgentListen
	listen = cmp.Or(listen, "127.0.0.1:0")
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("cluster: agent %d listen: %w", i, err)
	}
	ac := cfg.Agent
	ac.WorkDir = filepath.Join(cfg.Agent.WorkDir, fmt.Sprintf("agent-%d", i))
	ac.Endpoint = system.agentEndpoint(lis, ac.Hostname)
	if ac.Logger == nil {
		ac.Logger = cfg.Logger.WithField("agent", i)
	}
	if ac.Fetch == nil {
		f, err := NewFetch(filepath.Join(ac.WorkDir, "fetch-cache"), cfg.FetchCacheBytes)
		if err != nil {
			lis.Close()
			return err
		}
		ac.Fetch = f
	}
	a, err := agent.New(ac)
	if err != nil {
		lis.Close()
		return fmt.Errorf("cluster: agent %d: %w", i, err)
	}
	c.zkMu.Lock()
	c.Agents = append(c.Agents, a)
	c.zkMu.Unlock()
	c.serve(lis, a.Handler())
	if err := a.Start(runCtx, c.ref); err != nil {
		return fmt.Errorf("cluster: start agent %d: %w", i, err)
	}
	return nil
}

// addrs is what the cluster asks the system to choose the addresses it
// advertises (tests inject their own).
type addrs struct {
	hostname   func() (string, error)         // os.Hostname
	lookupIP   func(string) ([]net.IP, error) // net.LookupIP
	lookupAddr func(string) ([]string, error) // net.LookupAddr (reverse lookup)
}

var system = addrs{hostname: os.Hostname, lookupIP: net.LookupIP, lookupAddr: net.LookupAddr}

// listenAddr is the IP (nil if unknown) and port a listener is bound to.
func listenAddr(lis net.Listener) (net.IP, int) {
	if a, ok := lis.Addr().(*net.TCPAddr); ok {
		return a.IP, a.Port
	}
	_, p, _ := net.SplitHostPort(lis.Addr().String())
	port, _ := strconv.Atoi(p)
	return nil, port
}

// masterAddress chooses the hostname and IPv4 address a master listening
// on listen advertises (MasterInfo hostname, ip and address, its pid), as
// Mesos does: the hostname is the configured one, else the reverse lookup
// of the listen address when it is a concrete one (the address itself when
// that finds no name), else the machine's host name — never the
// wildcard ("::" for --listen 0.0.0.0:5050) that reaches nothing. The IP
// is the listen address when it is a concrete IPv4 one, else the
// hostname's IPv4 address (a non-loopback one preferred: the others reach
// only this machine), else 127.0.0.1.
func (s addrs) masterAddress(listen net.IP, hostname string) (string, net.IP) {
	concrete := listen != nil && !listen.IsUnspecified()
	if hostname == "" {
		hostname = s.hostFor(listen)
	}
	if ip := listen.To4(); ip != nil && concrete {
		return hostname, ip
	}
	return hostname, s.ipv4Of(hostname)
}

// hostFor names the host for a listener on listen: for a concrete
// address the name its reverse lookup gives, as a Mesos master with
// --hostname_lookup (the default) does — 127.0.0.1 advertises
// "localhost" — else the address itself; for a wildcard the machine's
// host name (else "localhost").
func (s addrs) hostFor(listen net.IP) string {
	if listen != nil && !listen.IsUnspecified() {
		if s.lookupAddr != nil {
			if names, err := s.lookupAddr(listen.String()); err == nil && len(names) > 0 {
				if name := strings.TrimSuffix(names[0], "."); name != "" {
					return name
				}
			}
		}
		return listen.String()
	}
	if h, err := s.hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// ipv4Of resolves host (an IP literal is its own answer) to an IPv4
// address, a non-loopback one preferred, else 127.0.0.1.
func (s addrs) ipv4Of(host string) net.IP {
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		ips, _ = s.lookupIP(host)
	}
	var loopback net.IP
	for _, ip := range ips {
		ip4 := ip.To4()
		switch {
		case ip4 == nil || ip4.IsUnspecified():
		case !ip4.IsLoopback():
			return ip4
		case loopback == nil:
			loopback = ip4
		}
	}
	if loopback != nil {
		return loopback
	}
	return net.IPv4(127, 0, 0, 1).To4()
}

// agentEndpoint is the host:port an in-process agent listening on lis
// advertises (MESOS_AGENT_ENDPOINT, its pid in the master's /state): the
// listen address, or for a wildcard one the agent's hostname (default:
// the machine's), as `flint mesos agent` does.
func (s addrs) agentEndpoint(lis net.Listener, hostname string) string {
	ip, port := listenAddr(lis)
	if ip != nil && !ip.IsUnspecified() {
		return lis.Addr().String()
	}
	if hostname == "" {
		hostname = s.hostFor(nil)
	}
	return net.JoinHostPort(hostname, strconv.Itoa(port))
}

// NewFetch returns an agent fetch function backed by the uri fetcher, with a
// cache of cacheBytes in dir (no cache when cacheBytes is 0).
func NewFetch(dir string, cacheBytes int64) (agent.FetchFunc, error) {
	var cache *uri.Cache
	if cacheBytes > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cluster: fetch cache: %w", err)
		}
		var err error
		if cache, err = uri.NewCache(dir, cacheBytes); err != nil {
			return nil, fmt.Errorf("cluster: fetch cache: %w", err)
		}
	}
	f := uri.New(uri.Config{Cache: cache})
	return func(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) error {
		_, err := f.Fetch(ctx, uris, sandbox)
		return err
	}, nil
}

// URL is the master's base URL (http://host:port).
func (c *Cluster) URL() string { return c.url }

// Close stops the agents (killing what they run), the master and every
// server, and waits for them.
func (c *Cluster) Close(ctx context.Context) error {
	c.once.Do(func() {
		var errs []error
		for _, a := range c.Agents {
			errs = append(errs, a.Close())
		}
		if c.cancel != nil {
			c.cancel()
		}
		c.Master.Close()
		if c.endMaster != nil {
			c.endMaster()
		}
		close(c.stopZK)
		if cont := c.contender(); cont != nil {
			cont.close()
		}
		// http.Server.Shutdown waits 5 s for connections that never sent a
		// request (clients dial spares); nothing is served any more, so
		// close those at once.
		servers := append([]*http.Server{c.masterSrv}, c.servers...)
		for _, s := range servers {
			s.SetKeepAlivesEnabled(false)
		}
		c.conns.closeUnusedAndWait(ctx)
		for _, s := range servers {
			if err := s.Shutdown(ctx); err != nil {
				c.log.Warnf("cluster: connections still open when the close deadline passed (%v): closing them", err)
				errs = append(errs, s.Close())
			}
		}
		c.wg.Wait()
		c.err = errors.Join(errs...)
	})
	return c.err
}

// connTracker records the servers' connections that have not yet carried
// a request (http.StateNew) or sit idle between requests, and those it
// closed that the servers have not yet seen close.
type connTracker struct {
	mu      sync.Mutex
	unused  map[net.Conn]bool
	closing map[net.Conn]bool
	gone    chan struct{} // closed once closing is empty
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unused == nil {
		t.unused = map[net.Conn]bool{}
	}
	switch st {
	case http.StateNew, http.StateIdle:
		t.unused[c] = true
	default:
		delete(t.unused, c)
	}
	if (st == http.StateClosed || st == http.StateHijacked) && t.closing[c] {
		delete(t.closing, c)
		if len(t.closing) == 0 && t.gone != nil {
			close(t.gone)
			t.gone = nil
		}
	}
}

// closeUnusedAndWait closes the unused connections and waits (until ctx
// ends) for their servers to see them close. http.Server.Shutdown takes a
// connection that never sent a request for busy for 5 s, and counts one
// it has not yet seen close: once they are gone from its books, its first
// look finds nothing open and it returns at once.
func (t *connTracker) closeUnusedAndWait(ctx context.Context) {
	t.mu.Lock()
	if t.closing == nil {
		t.closing = map[net.Conn]bool{}
	}
	for c := range t.unused {
		c.Close()
		t.closing[c] = true
	}
	t.unused = nil
	if len(t.closing) == 0 {
		t.mu.Unlock()
		return
	}
	if t.gone == nil {
		t.gone = make(chan struct{})
	}
	gone := t.gone
	t.mu.Unlock()
	// Bounded by Shutdown's own grace too, in case a server never reports
	// a close: Shutdown then polls as it would have.
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	select {
	case <-gone:
	case <-ctx.Done():
	case <-grace.C:
	}
}

// masterRef is the link.Master agents hold: it forwards to the current
// master, so in-process agents reach a restarted one.
type masterRef struct {
	mu   sync.RWMutex
	m    *master.Master
	gate func() bool // whether the master may serve agents (it leads)
}

var _ link.Master = (*masterRef)(nil)

func (r *masterRef) set(m *master.Master) {
	r.mu.Lock()
	r.m = m
	r.mu.Unlock()
}

func (r *masterRef) get() *master.Master {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m
}

func (r *masterRef) RegisterAgent(ctx context.Context, reg link.Registration, to link.Agent) (link.Registered, error) {
	if r.gate != nil && !r.gate() {
		return link.Registered{}, errNotLeading
	}
	return r.get().RegisterAgent(ctx, reg, to)
}

func (r *masterRef) FromAgent(ctx context.Context, agentID string, m link.AgentMessage) error {
	return r.get().FromAgent(ctx, agentID, m)
}

func (r *masterRef) AgentDisconnected(agentID string, to link.Agent) {
	r.get().AgentDisconnected(agentID, to)
}
