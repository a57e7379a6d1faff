package fileserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/uri"
)

// serveHTTP answers GET and HEAD of /files/<sha256>/<basename>: token
// first (401), then method (405), then name (404), then the file's state
// (409, 410).
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		// Close has stopped waiting for handlers; the connection is being
		// closed, but never answer with an empty 200.
		w.Header().Set("Connection", "close")
		http.Error(w, "file server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.inflight.Done()
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	status := s.respond(rec, r)
	fields := logrus.Fields{
		"method": r.Method, "path": r.URL.Path, "status": rec.code(), "bytes": rec.bytes,
		"remote": r.RemoteAddr, "duration": time.Since(start).Round(time.Microsecond).String(),
	}
	if r.URL.RawQuery != "" {
		fields["query"] = redact.Query(r.URL.RawQuery)
	}
	if status == http.StatusConflict || status == http.StatusGone {
		s.log.WithFields(fields).Warn("file changed or removed since it was added; refused")
		return
	}
	s.log.WithFields(fields).Debug("request")
}

// respond writes the response and returns the status of a refusal
// decided here (0 when http.ServeContent decided).
func (s *Server) respond(w http.ResponseWriter, r *http.Request) int {
	name, isFile := strings.CutPrefix(r.URL.Path, "/files/")
	if presented, ok := s.authorized(r, name); !ok {
		challenge := `Bearer realm="flint"`
		if presented {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return http.StatusUnauthorized
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	var e *served
	var sources []*fileSource
	if isFile {
		e, sources = s.lookup(name)
	}
	if e == nil && isFile && s.removed(name) {
		http.Error(w, "file removed by the driver", http.StatusGone)
		return http.StatusGone
	}
	if e == nil {
		http.NotFound(w, r)
		return http.StatusNotFound
	}
	f, src, status := open(sources)
	switch status {
	case http.StatusConflict:
		http.Error(w, "file changed since it was published", status)
		return status
	case http.StatusGone:
		http.Error(w, "file removed since it was published", status)
		return status
	case http.StatusInternalServerError:
		http.Error(w, "file unreadable", status)
		return status
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+e.sha+`"`)
	http.ServeContent(w, r, "", src.info.ModTime(), f)
	return 0
}

// authorized checks the bearer token of r (header or query): the server's
// token, compared in constant time, or a live grant for the served file
// name; presented reports whether r carried any token.
func (s *Server) authorized(r *http.Request, name string) (presented, ok bool) {
	if s.anon {
		return false, true
	}
	var candidates []string
	if scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		candidates = append(candidates, strings.TrimSpace(tok))
	} else if r.Header.Get("Authorization") != "" {
		presented = true
	}
	if r.URL.RawQuery != "" {
		q, _ := url.ParseQuery(r.URL.RawQuery)
		candidates = append(candidates, q["token"]...)
	}
	for _, c := range candidates {
		presented = true
		sum := sha256.Sum256([]byte(c))
		if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1 || s.granted(c, name) {
			ok = true
		}
	}
	return presented, ok
}

// recorder notes the status and size of a response for the request log.
// It keeps io.ReaderFrom so file bodies still go out with sendfile.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(struct{ io.Writer }{r.ResponseWriter}, src)
	}
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// TokenHeader returns a Config.Header hook that presents token as
// "Authorization: Bearer <token>" to the file server at serverURL (as
// returned by Server.URL) and to nothing else: a URL matches only with
// the same scheme, host and port (default ports filled in). For every
// other URL the hook returns an empty Authorization entry, which removes
// the token Go's client would otherwise copy onto a redirect to the same
// host name on another port.
func TokenHeader(serverURL, token string) (func(u *url.URL) http.Header, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("uri: token header: %w: %v", uri.ErrInvalidURI, err)
	}
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" {
		return nil, fmt.Errorf("uri: token header: %w: %q is not an http(s) server URL", uri.ErrInvalidURI, serverURL)
	}
	if token == "" {
		return nil, fmt.Errorf("uri: token header: empty token")
	}
	want := origin(u)
	bearer := "Bearer " + token
	return func(target *url.URL) http.Header {
		if target != nil && origin(target) == want {
			return http.Header{"Authorization": {bearer}}
		}
		return http.Header{"Authorization": nil}
	}, nil
}

// origin is u's scheme://host:port in lower case with the default port
// made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return scheme + "://" + net.JoinHostPort(host, port)
}
