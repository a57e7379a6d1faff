package shuffleserver

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/flint-mesos/flint/framework/config/shuffleconf"
)

// Address is where a shuffle server is and how to trust it; its String
// form is mapoutput.Location.Address.
type Address struct {
	HostPort string // host:port
	Pin      string // hex SHA-256 of the server's certificate; "" is plaintext
	Dir      string // the store's directory, for same-host reads
	// Namespace names one of the server's stores other than its main one
	// (a dataset run's); "" is the main store.
	Namespace string
	// Executor names the executor whose store a shared server (an
	// agent's shuffle service, package shuffleservice) reads; "" for an
	// executor's own server.
	Executor string
}

// String is https://host:port/?pin=...&dir=... (http:// without TLS), or
// file:///dir for a store that is not served (local mode).
func (a Address) String() string {
	if a.HostPort == "" {
		return (&url.URL{Scheme: "file", Path: a.Dir}).String()
	}
	u := url.URL{Scheme: "https", Host: a.HostPort, Path: "/"}
	if a.Pin == "" {
		u.Scheme = "http"
	}
	q := url.Values{}
	if a.Pin != "" {
		q.Set("pin", a.Pin)
	}
	if a.Dir != "" {
		q.Set("dir", a.Dir)
	}
	if a.Namespace != "" {
		q.Set("ns", a.Namespace)
	}
	if a.Executor != "" {
		q.Set("exec", a.Executor)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ParseAddress reads an Address's String form.
func ParseAddress(s string) (Address, error) {
	u, err := url.Parse(s)
	if err == nil && u.Scheme == "file" && u.Host == "" && u.Path != "" {
		return Address{Dir: u.Path}, nil
	}
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return Address{}, fmt.Errorf("shuffleserver: %q is not a shuffle server address", s)
	}
	q := u.Query()
	a := Address{HostPort: u.Host, Pin: q.Get("pin"), Dir: q.Get("dir"), Namespace: q.Get("ns"), Executor: q.Get("exec")}
	if a.Namespace != "" && !validNamespace(a.Namespace) {
		return Address{}, fmt.Errorf("shuffleserver: %q: bad namespace %q", s, a.Namespace)
	}
	if a.Executor != "" && !validNamespace(a.Executor) {
		return Address{}, fmt.Errorf("shuffleserver: %q: bad executor id %q", s, a.Executor)
	}
	if (u.Scheme == "https") != (a.Pin != "") {
		return Address{}, fmt.Errorf("shuffleserver: %q: https needs a pin, http has none", s)
	}
	return a, nil
}

// BaseURL is the scheme and host of the server.
func (a Address) BaseURL() string {
	if a.Pin == "" {
		return "http://" + a.HostPort
	}
	return "https://" + a.HostPort
}

// Token is what every executor of the application presents to read
// shuffle blocks (shuffleconf.Token: an HMAC-SHA256 of the application id
// under the application secret).
func Token(secret, appID string) string { return shuffleconf.Token(secret, appID) }

// PathPrefix starts every block request's path.
const PathPrefix = "/shuffle/v1/"

// BlockPath is the request path of one block of the main store.
func BlockPath(appID string, shuffleID, mapIndex, reduce int) string {
	return fmt.Sprintf("%s%s/%d/%d/%d", PathPrefix, url.PathEscape(appID), shuffleID, mapIndex, reduce)
}

// NamespacePath is the request path of one block of namespace ns's store;
// ns "" is BlockPath.
func NamespacePath(appID, ns string, shuffleID, mapIndex, reduce int) string {
	return Address{Namespace: ns}.RequestPath(appID, shuffleID, mapIndex, reduce)
}

// RequestPath is the path and query that ask the server at a for one
// block: BlockPath with the namespace and executor a names.
func (a Address) RequestPath(appID string, shuffleID, mapIndex, reduce int) string {
	q := url.Values{}
	if a.Namespace != "" {
		q.Set("ns", a.Namespace)
	}
	if a.Executor != "" {
		q.Set("exec", a.Executor)
	}
	p := BlockPath(appID, shuffleID, mapIndex, reduce)
	if len(q) == 0 {
		return p
	}
	return p + "?" + q.Encode()
}

// ParseBlockRequest reads a block request's path: the application and
// (shuffle, map, reduce).
func ParseBlockRequest(path string) (app string, ids [3]int, err error) { return parseBlockPath(path) }

// ValidID says whether an executor id or namespace may appear in a request
// (letters, digits, '.', '_' and '-', at most 128, not "." or "..").
func ValidID(s string) bool { return validNamespace(s) }

// validNamespace: letters, digits, '.', '_' and '-', at most 128.
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 128 {
		return false
	}
	for _, c := range ns {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return ns != "." && ns != ".."
}

func parseBlockPath(p string) (app string, ids [3]int, err error) {
	rest, ok := strings.CutPrefix(p, PathPrefix)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 4 {
		return "", ids, fmt.Errorf("not a block path")
	}
	if app, err = url.PathUnescape(parts[0]); err != nil {
		return "", ids, err
	}
	for i, s := range parts[1:] {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 0 || fmt.Sprint(n) != s {
			return "", ids, fmt.Errorf("bad number %q", s)
		}
		ids[i] = n
	}
	return app, ids, nil
}
