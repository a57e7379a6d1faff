package shuffleserver

import (
	"cmp"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/sirupsen/logrus"
)

// Handler serves store's blocks of application appID to requests bearing
// token.
func Handler(store *shuffle.Store, appID, token string, log logrus.FieldLogger) http.Handler {
	return handler(func(ns string) *shuffle.Store {
		if ns == "" {
			return store
		}
		return nil
	}, appID, token, log)
}

// handler serves the store that lookup names for a request's namespace.
func handler(lookup func(ns string) *shuffle.Store, appID, token string, log logrus.FieldLogger) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flint-shuffle"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		app, ids, err := parseBlockPath(r.URL.Path)
		if err != nil {
			http.Error(w, "shuffleserver: "+err.Error(), http.StatusBadRequest)
			return
		}
		if app != appID {
			http.Error(w, "shuffleserver: this server holds another application's blocks", http.StatusForbidden)
			return
		}
		store := lookup(r.URL.Query().Get("ns"))
		if store == nil {
			http.Error(w, "shuffleserver: no such namespace", http.StatusNotFound)
			return
		}
		serveBlock(w, store, ids, log)
	})
}

// ServeBlockAt answers a block request from the store whose directory is
// root, without opening (or creating) a Store: how an agent's shuffle
// service serves executors' files.
func ServeBlockAt(w http.ResponseWriter, root string, ids [3]int, log logrus.FieldLogger) {
	index, data := shuffle.OutputPaths(root, ids[0], ids[1])
	b, err := shuffle.OpenBlockAt(index, data, ids[2])
	sendBlock(w, b, err, ids, log)
}

func serveBlock(w http.ResponseWriter, store *shuffle.Store, ids [3]int, log logrus.FieldLogger) {
	b, err := store.OpenBlock(ids[0], ids[1], ids[2])
	sendBlock(w, b, err, ids, log)
}

// sendBlock answers with an opened block's bytes (sendfile over
// plaintext), 404 when the output is not there, 500 otherwise.
func sendBlock(w http.ResponseWriter, b *shuffle.Block, err error, ids [3]int, log logrus.FieldLogger) {
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, shuffle.ErrNoOutput) {
			code = http.StatusNotFound
		}
		log.WithError(err).Warnf("shuffleserver: block %v", ids)
		http.Error(w, err.Error(), code)
		return
	}
	defer b.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(b.Length, 10))
	if _, err := b.File.Seek(b.Offset, io.SeekStart); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// An io.LimitedReader over the *os.File is what net/http and the TCP
	// connection turn into sendfile(2).
	if _, err := io.Copy(w, io.LimitReader(b.File, b.Length)); err != nil {
		log.WithError(err).Debugf("shuffleserver: sending block %v", ids)
	}
}

// Config starts a Server.
type Config struct {
	Store *shuffle.Store
	AppID string
	Token string
	// Host is the name or IP reducers reach this executor at; the server
	// listens on it (port 0: any free one).
	Host string
	// TLS serves HTTPS with a certificate pinned in the Address
	// (flint.network.tls.enabled, the default).
	TLS bool
	Log logrus.FieldLogger
	// Port is the port the server listens on; 0: any free one.
	Port int
	// Advertise is the host:port reducers reach the server at when it is
	// not where it listens (a container's port mapping: the agent's host
	// and port); "": the listening address.
	Advertise string
	// NoDir leaves the store's directory out of the addresses: reducers
	// on the same host cannot read it (it is in a container's own file
	// system), so they fetch through the server.
	NoDir bool
}

// Server is an executor's shuffle server.
type Server struct {
	srv  *http.Server
	addr Address
	done chan struct{}
	main *shuffle.Store
	mu   sync.RWMutex
	ns   map[string]*shuffle.Store
	// noDir: addresses carry no directory (Config.NoDir).
	noDir bool
}

// certValidity outlasts any executor.
const certValidity = 5 * 365 * 24 * time.Hour

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Token == "" || cfg.AppID == "" {
		return nil, errors.New("shuffleserver: a store, an application id and a token are required")
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("shuffleserver: listen: %w", err)
	}
	s := &Server{done: make(chan struct{}), addr: Address{HostPort: cmp.Or(cfg.Advertise, lis.Addr().String()), Dir: cfg.Store.Root()},
		main: cfg.Store, ns: map[string]*shuffle.Store{}, noDir: cfg.NoDir}
	if cfg.NoDir {
		s.addr.Dir = ""
	}
	if cfg.TLS {
		tc, pin, err := tlspin.Server(host, certValidity)
		if err != nil {
			lis.Close()
			return nil, fmt.Errorf("shuffleserver: %w", err)
		}
		lis, s.addr.Pin = tls.NewListener(lis, tc), pin
	}
	s.srv = &http.Server{Handler: handler(s.store, cfg.AppID, cfg.Token, cfg.Log), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: stdlog.New(debugWriter{cfg.Log}, "", 0)}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.WithError(err).Error("shuffleserver: stopped")
		}
	}()
	return s, nil
}

// Address is what map statuses carry as their location's address.
func (s *Server) Address() Address { return s.addr }

func (s *Server) store(ns string) *shuffle.Store {
	if ns == "" {
		return s.main
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ns[ns]
}

// Serve serves store as namespace ns too (a store per dataset run) and
// returns the address of its blocks.
func (s *Server) Serve(ns string, store *shuffle.Store) (Address, error) {
	if !validNamespace(ns) {
		return Address{}, fmt.Errorf("shuffleserver: bad namespace %q", ns)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns[ns] = store
	a := s.addr
	a.Dir, a.Namespace = store.Root(), ns
	if s.noDir {
		a.Dir = ""
	}
	return a, nil
}

// Unserve stops serving namespace ns (its shuffles were released);
// requests for it are then answered as for an unknown namespace.
func (s *Server) Unserve(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ns, ns)
}

// Close stops serving: in-flight requests get up to a second to finish.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}

// debugWriter sends net/http's own messages (failed handshakes: a peer
// that does not pin this server) to the log at debug level.
type debugWriter struct{ log logrus.FieldLogger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug("shuffleserver: " + strings.TrimSpace(string(p)))
	return len(p), nil
}
