package fileserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
)

// ErrClosed is returned by Server methods called after Close.
var ErrClosed = errors.New("uri: file server closed")

// Config configures a Server.
type Config struct {
	// Token is the bearer token clients present, as "Authorization: Bearer
	// <token>" or a "token" query parameter. Required unless AllowAnonymous;
	// at least 16 printable ASCII characters without spaces. NewToken makes
	// one.
	Token string
	// AllowAnonymous serves files to anyone who can reach the port. Token
	// must then be empty.
	AllowAnonymous bool
	// AdvertiseHost is the host written into file URLs. Default: the
	// listener's IP, or os.Hostname() when the listener is bound to an
	// unspecified address (0.0.0.0 or ::).
	AdvertiseHost string
	// Now is the clock grant deadlines are checked against; nil is
	// time.Now.
	Now func() time.Time
	// Logger is optional; nil discards logs. Each request is logged at
	// debug level (method, path, query with the token redacted, status,
	// bytes, duration); refusals of changed files at warning level. The
	// token is never logged.
	Logger logrus.FieldLogger
}

func (c Config) validate() error {
	var errs []error
	switch {
	case c.AllowAnonymous && c.Token != "":
		errs = append(errs, errors.New("uri: server: Token and AllowAnonymous are exclusive"))
	case !c.AllowAnonymous && c.Token == "":
		errs = append(errs, errors.New("uri: server: Token is required unless AllowAnonymous (use NewToken)"))
	case c.Token != "" && len(c.Token) < 16:
		errs = append(errs, errors.New("uri: server: Token must have at least 16 characters"))
	}
	for _, r := range c.Token {
		if r <= ' ' || r > '~' {
			errs = append(errs, errors.New("uri: server: Token must be printable ASCII without spaces"))
			break
		}
	}
	h := strings.TrimSuffix(strings.TrimPrefix(c.AdvertiseHost, "["), "]")
	if strings.ContainsAny(h, "/?#@%[] \t\r\n") || strings.Contains(h, ":") && net.ParseIP(h) == nil {
		errs = append(errs, fmt.Errorf("uri: server: AdvertiseHost %q is not a host name or IP (no port: the listener's is used)", c.AdvertiseHost))
	}
	return errors.Join(errs...)
}

// NewToken returns a random token for Config.Token: 32 bytes from
// crypto/rand, hex encoded.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b[:])
}

// FileURL is where a Server publishes a file.
type FileURL struct {
	// URL is http://host:port/files/<sha256>/<basename> (basename path
	// escaped). No credential is part of it: fetchers present the server's
	// token (TokenHeader) or a Grant's.
	URL    string
	Name   string // the basename, unescaped: the file name to fetch it as
	SHA256 string // hex
	Size   int64
	key    string // "<sha256>/<basename>", the key in Server.files
}

// Server is the driver's HTTP file server (Spark's HttpFileServer): it
// publishes local files such as the driver's own executable under
// content-addressed URLs for agents and executors to fetch.
//
// A file is hashed once, when added. It is served only while its size,
// modification time and identity (device and inode) are those it had then:
// a changed or replaced file is refused with 409 Conflict and a removed
// one with 410 Gone, never served under a hash it no longer has. Names are
// looked up in a table, never joined to a filesystem path, so nothing but
// added files can be reached.
//
// A Server is safe for concurrent use.
type Server struct {
	tokenSum [sha256.Size]byte // sha256 of the token, for constant-time comparison
	anon     bool
	cfg      Config
	log      logrus.FieldLogger
	srv      *http.Server
	hashed   atomic.Int64 // files hashed so far (tests)

	mu     sync.Mutex
	state  serverState
	base   string                       // "http://host:port"
	files  map[string]*served           // "<sha256>/<basename>" → file
	byPath map[pathKey]pathRec          // latest registration of each path
	gone   map[string]bool              // names removed (Remove) and not added again: 410
	grants map[[sha256.Size]byte]*grant // sha256 of a grant's token → grant
	owners map[string]string            // grant owner → its token

	hmu       sync.Mutex // guards stopped and inflight.Add
	stopped   bool
	inflight  sync.WaitGroup
	serveDone chan struct{}
	closeOnce sync.Once
}

type serverState int

const (
	stateNew serverState = iota
	stateServing
	stateClosed
)

// New validates cfg and returns a Server; call Serve to start it.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		tokenSum:  sha256.Sum256([]byte(cfg.Token)),
		anon:      cfg.AllowAnonymous,
		cfg:       cfg,
		files:     map[string]*served{},
		byPath:    map[pathKey]pathRec{},
		grants:    map[[sha256.Size]byte]*grant{},
		owners:    map[string]string{},
		serveDone: make(chan struct{}),
	}
	log := cfg.Logger
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	s.log = log.WithField("component", "fileserver")
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	return s, nil
}

// Serve starts serving on lis in the background and returns. The Server
// owns lis from then on (Close closes it; so does Serve when it fails).
// Serve may be called once.
func (s *Server) Serve(lis net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		lis.Close()
		if s.state == stateClosed {
			return ErrClosed
		}
		return errors.New("uri: server: Serve called twice")
	}
	base, err := s.baseURL(lis.Addr())
	if err != nil {
		lis.Close()
		return err
	}
	s.base, s.state = base, stateServing
	go func() {
		defer close(s.serveDone)
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.WithError(err).Error("file server stopped")
		}
	}()
	s.log.WithField("url", base).Debug("file server started")
	return nil
}

// Handler is the server's HTTP handler, the one Serve runs: it answers
// GET and HEAD of /files/<sha256>/<basename> as described on Server, so it
// can also be mounted on another server or driven with net/http/httptest.
// Files are still added to a serving Server (their URLs name Serve's
// listener); the paths are the same wherever the handler runs.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) baseURL(addr net.Addr) (string, error) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", fmt.Errorf("uri: server: listener address %q: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("uri: server: listener address %q has no TCP port", addr)
	}
	switch ip := net.ParseIP(host); {
	case s.cfg.AdvertiseHost != "":
		host = strings.TrimSuffix(strings.TrimPrefix(s.cfg.AdvertiseHost, "["), "]")
	case ip == nil || ip.IsUnspecified():
		if host, err = os.Hostname(); err != nil {
			return "", fmt.Errorf("uri: server: no AdvertiseHost and no host name: %w", err)
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// URL returns the server's base URL, http://host:port, or "" before Serve.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// Close stops the server gracefully: it stops accepting connections and
// waits for in-flight downloads to finish. When ctx ends first it closes
// the remaining connections and returns ctx's error; either way no request
// handler runs once Close returns. Later calls return nil.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		started := s.state == stateServing
		s.state = stateClosed
		s.mu.Unlock()
		if !started {
			return
		}
		if err = s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
			err = fmt.Errorf("uri: server close: %w", err)
		}
		s.hmu.Lock()
		s.stopped = true
		s.hmu.Unlock()
		s.inflight.Wait()
		<-s.serveDone
		s.log.Debug("file server stopped")
	})
	return err
}

// enter registers a request handler with Close; false once Close has
// stopped waiting for new ones.
func (s *Server) enter() bool {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.stopped {
		return false
	}
	s.inflight.Add(1)
	return true
}
