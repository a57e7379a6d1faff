package shuffleservice

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/sirupsen/logrus"
)

// Config starts a Service.
type Config struct {
	// Dir is the service's directory (created if missing): its InfoFile
	// and the applications' stores.
	Dir string
	// Host is the name or IP reducers reach this agent at; Port the port
	// to listen on (0: any free one).
	Host string
	Port int
	// TLS serves HTTPS with a self-signed certificate pinned in the
	// address executors read (on unless turned off explicitly).
	TLS bool
	// AppTimeout removes an application not heard from for this long
	// (default 2 minutes).
	AppTimeout time.Duration
	// SweepEvery is how often the sweep runs (default AppTimeout/4);
	// negative: never on its own (tests call Sweep).
	SweepEvery time.Duration
	Clock      clock.Clock
	Log        logrus.FieldLogger
}

// Service is an agent's shuffle service.
type Service struct {
	cfg  Config
	srv  *http.Server
	addr shuffleserver.Address
	done chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	err  error

	mu   sync.Mutex
	seen map[string]time.Time // application dir name → last heard of
}

// APIPrefix starts the service's own requests (heartbeats, deletions).
const APIPrefix = shuffleconf.ServiceAPIPrefix

// certValidity outlasts any service run.
const certValidity = 5 * 365 * 24 * time.Hour

// Start listens, writes InfoFile and serves until Close.
func Start(cfg Config) (*Service, error) {
	if cfg.Dir == "" {
		return nil, errors.New("shuffleservice: a directory is required")
	}
	if cfg.AppTimeout <= 0 {
		cfg.AppTimeout = 2 * time.Minute
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = cfg.AppTimeout / 4
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("shuffleservice: %w", err)
	}
	// Executors of any user create their application's directory here.
	if err := os.MkdirAll(AppsDir(cfg.Dir), 0o755); err != nil {
		return nil, fmt.Errorf("shuffleservice: %w", err)
	}
	if err := os.Chmod(AppsDir(cfg.Dir), 0o777|os.ModeSticky); err != nil {
		return nil, fmt.Errorf("shuffleservice: %w", err)
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("shuffleservice: listen: %w", err)
	}
	s := &Service{cfg: cfg, done: make(chan struct{}), stop: make(chan struct{}), seen: map[string]time.Time{},
		addr: shuffleserver.Address{HostPort: lis.Addr().String()}}
	if cfg.TLS {
		tc, pin, err := tlspin.Server(cfg.Host, certValidity)
		if err != nil {
			lis.Close()
			return nil, fmt.Errorf("shuffleservice: %w", err)
		}
		lis, s.addr.Pin = tls.NewListener(lis, tc), pin
	}
	if err := writeInfo(cfg.Dir, s.addr); err != nil {
		lis.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: stdlog.New(debugWriter{cfg.Log}, "", 0)}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.WithError(err).Error("shuffleservice: stopped")
		}
	}()
	if cfg.SweepEvery > 0 {
		s.wg.Add(1)
		go s.sweepLoop()
	}
	return s, nil
}

// Address is where the service listens (executors read it from InfoFile).
func (s *Service) Address() shuffleserver.Address { return s.addr }

// Close stops serving and sweeping and removes InfoFile, so executors
// starting later are told no service runs; the applications' files stay
// for the next run of the service.
// A second Close does nothing.
func (s *Service) Close() error {
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		os.Remove(filepath.Join(s.cfg.Dir, InfoFile))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if s.err = s.srv.Shutdown(ctx); s.err != nil {
			s.err = s.srv.Close()
		}
		<-s.done
	})
	return s.err
}

func (s *Service) sweepLoop() {
	defer s.wg.Done()
	t := s.cfg.Clock.NewTicker(s.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C():
			s.Sweep()
		}
	}
}

// Sweep removes every application not heard from for AppTimeout; an
// application first seen now (registered since the last sweep, or found
// on disk after a restart) starts its wait now. It returns the
// applications removed.
func (s *Service) Sweep() []string {
	now := s.cfg.Clock.Now()
	entries, err := os.ReadDir(AppsDir(s.cfg.Dir))
	if err != nil {
		s.cfg.Log.WithError(err).Warn("shuffleservice: sweep")
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var removed []string
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		present[name] = true
		last, ok := s.seen[name]
		if !ok {
			s.seen[name] = now
			continue
		}
		if now.Sub(last) < s.cfg.AppTimeout {
			continue
		}
		if err := os.RemoveAll(filepath.Join(AppsDir(s.cfg.Dir), name)); err != nil {
			s.cfg.Log.WithError(err).Warnf("shuffleservice: remove application %s", name)
			continue
		}
		delete(s.seen, name)
		removed = append(removed, name)
		s.cfg.Log.Infof("shuffleservice: removed application %s: not heard from for %v", name, s.cfg.AppTimeout)
	}
	for name := range s.seen {
		if !present[name] {
			delete(s.seen, name)
		}
	}
	return removed
}

// LastHeard is when application app last made an authorized request (a
// block read or a heartbeat) by the service's clock; false when it has not
// since the service started or since the application was removed.
func (s *Service) LastHeard(app string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.seen[safe(app)]
	return t, ok
}

// ServeHTTP serves blocks (GET /shuffle/v1/…) and the service's own
// requests (APIPrefix…), each only with the application's token.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, shuffleserver.PathPrefix):
		s.serveBlock(w, r)
	case strings.HasPrefix(r.URL.Path, APIPrefix):
		s.serveAPI(w, r)
	default:
		http.NotFound(w, r)
	}
}

// authorized checks the request's Bearer token against application app's
// registered hash; every failure looks the same to the caller.
func (s *Service) authorized(w http.ResponseWriter, r *http.Request, app string) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	want, err := os.ReadFile(filepath.Join(AppDir(s.cfg.Dir, app), tokenFile))
	if !ok || tok == "" || err != nil || subtle.ConstantTimeCompare(tokenHash(tok), want) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flint-shuffle-service"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	}
	s.mu.Lock()
	s.seen[safe(app)] = s.cfg.Clock.Now()
	s.mu.Unlock()
	return true
}

func (s *Service) serveBlock(w http.ResponseWriter, r *http.Request) {
	app, ids, err := shuffleserver.ParseBlockRequest(r.URL.Path)
	if err != nil {
		http.Error(w, "shuffleservice: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !s.authorized(w, r, app) {
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	exec, ns := q.Get("exec"), q.Get("ns")
	if !shuffleserver.ValidID(exec) || (ns != "" && !shuffleserver.ValidID(ns)) {
		http.Error(w, "shuffleservice: a block request names its executor (exec=) and may name a namespace (ns=)", http.StatusBadRequest)
		return
	}
	root := StoreRoot(s.cfg.Dir, app, exec)
	if ns != "" {
		root = NamespaceRoot(s.cfg.Dir, app, exec, ns)
	}
	shuffleserver.ServeBlockAt(w, root, ids, s.cfg.Log)
}

// serveAPI: POST <app>/heartbeat, DELETE <app>, DELETE
// <app>/shuffles/<id>[?ns=<namespace>], DELETE <app>/namespaces/<ns>.
func (s *Service) serveAPI(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, APIPrefix), "/")
	app := parts[0]
	if app == "" {
		http.NotFound(w, r)
		return
	}
	if !s.authorized(w, r, app) {
		return
	}
	switch {
	case len(parts) == 2 && parts[1] == "heartbeat" && r.Method == http.MethodPost:
		w.WriteHeader(http.StatusNoContent)
	case len(parts) == 1 && r.Method == http.MethodDelete:
		s.removeApp(w, app)
	case len(parts) == 3 && parts[1] == "shuffles" && r.Method == http.MethodDelete:
		id, err := strconv.Atoi(parts[2])
		if err != nil || id < 0 {
			http.Error(w, "shuffleservice: bad shuffle id "+strconv.Quote(parts[2]), http.StatusBadRequest)
			return
		}
		ns := r.URL.Query().Get("ns")
		if ns != "" && !shuffleserver.ValidID(ns) {
			http.Error(w, "shuffleservice: bad namespace "+strconv.Quote(ns), http.StatusBadRequest)
			return
		}
		s.remove(w, app, shuffleDir(ns, id))
	case len(parts) == 3 && parts[1] == "namespaces" && r.Method == http.MethodDelete:
		if !shuffleserver.ValidID(parts[2]) {
			http.Error(w, "shuffleservice: bad namespace "+strconv.Quote(parts[2]), http.StatusBadRequest)
			return
		}
		s.remove(w, app, filepath.Join("ns", parts[2]))
	default:
		http.Error(w, "shuffleservice: unknown request "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

func (s *Service) removeApp(w http.ResponseWriter, app string) {
	if err := os.RemoveAll(AppDir(s.cfg.Dir, app)); err != nil {
		http.Error(w, "shuffleservice: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	delete(s.seen, safe(app))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// shuffleDir is shuffle id's directory in an executor's store: of its own
// ids (ns ""), or of namespace ns (the executor's layout: ns/<ns>/…).
func shuffleDir(ns string, id int) string {
	d := fmt.Sprintf("shuffle_%d", id)
	if ns != "" {
		d = filepath.Join("ns", ns, d)
	}
	return d
}

// remove deletes rel (a shuffle's or a namespace's directory) from every
// executor store of the application.
func (s *Service) remove(w http.ResponseWriter, app, rel string) {
	dirs, _ := filepath.Glob(filepath.Join(AppDir(s.cfg.Dir, app), "*", rel))
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			http.Error(w, "shuffleservice: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// debugWriter sends net/http's own messages (failed handshakes) to the
// log at debug level.
type debugWriter struct{ log logrus.FieldLogger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug("shuffleservice: " + strings.TrimSpace(string(p)))
	return len(p), nil
}
