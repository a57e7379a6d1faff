package detector

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrBadURL is wrapped by every ParseMaster error.
var ErrBadURL = errors.New("detector: bad master URL")

// URL is a parsed master URL.
type URL struct {
	Raw string
	// Addr is the host:port of a single master (mesos://host:port); empty for ZooKeeper.
	Addr string
	// Scheme is "http" or "https": how to reach the master's HTTP API.
	Scheme string
	// ZKServers, ZKPath and ZKAuth are set for mesos://zk://[user:pass@]hosts/path.
	ZKServers []string
	ZKPath    string
	ZKAuth    string // "user:pass" for ZooKeeper digest authentication, or empty
}

// IsZK reports whether the URL names a ZooKeeper ensemble.
func (u URL) IsZK() bool { return len(u.ZKServers) > 0 }

// ParseMaster reads a Mesos master URL: mesos://host:port, mesos://zk://hosts/path, zk://hosts/path,
// http://host:port or https://host:port.
func ParseMaster(s string) (URL, error) {
	u := URL{Raw: s, Scheme: "http"}
	rest := strings.TrimPrefix(s, "mesos://")
	switch {
	case strings.HasPrefix(rest, "zk://"):
		return parseZK(u, strings.TrimPrefix(rest, "zk://"))
	case strings.HasPrefix(s, "mesos://"):
	case strings.HasPrefix(s, "http://"):
		rest = strings.TrimPrefix(s, "http://")
	case strings.HasPrefix(s, "https://"):
		rest, u.Scheme = strings.TrimPrefix(s, "https://"), "https"
	default:
		return URL{}, fmt.Errorf("%w %q: want mesos://host:port or mesos://zk://host:2181,host2:2181/path", ErrBadURL, s)
	}
	rest = strings.TrimSuffix(rest, "/")
	if err := checkHostPort(rest); err != nil {
		return URL{}, fmt.Errorf("%w %q: %v", ErrBadURL, s, err)
	}
	u.Addr = rest
	return u, nil
}

func parseZK(u URL, rest string) (URL, error) {
	hosts, path, ok := strings.Cut(rest, "/")
	if !ok || strings.Trim(path, "/") == "" {
		return URL{}, fmt.Errorf("%w %q: a ZooKeeper URL needs a znode path, e.g. mesos://zk://zk1:2181/mesos", ErrBadURL, u.Raw)
	}
	if auth, h, ok := strings.Cut(hosts, "@"); ok {
		if !strings.Contains(auth, ":") {
			return URL{}, fmt.Errorf("%w %q: ZooKeeper credentials must be user:password", ErrBadURL, u.Raw)
		}
		u.ZKAuth, hosts = auth, h
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if err := checkHostPort(h); err != nil {
			return URL{}, fmt.Errorf("%w %q: %v", ErrBadURL, u.Raw, err)
		}
		u.ZKServers = append(u.ZKServers, h)
	}
	u.ZKPath = "/" + strings.Trim(path, "/")
	return u, nil
}

func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return fmt.Errorf("want host:port, got %q", hp)
	}
	if host == "" || strings.ContainsAny(host, "/?#@ ,") {
		return fmt.Errorf("bad host in %q", hp)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("bad port in %q (want 1-65535)", hp)
	}
	return nil
}
