package backend

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// MasterKind says which backend family serves a master string.
type MasterKind int

// Master kinds, in the order the master strings are documented
// (docs/configuration.md, flint.master).
const (
	// MasterLocal runs tasks in-process: local, local[N], local[*], local[N,F].
	MasterLocal MasterKind = iota + 1
	// MasterEmbedded runs an in-process minimesos master with agents.
	MasterEmbedded
	// MasterMesos talks to a Mesos master: mesos://host:port or mesos://zk://hosts/path.
	MasterMesos
)

func (k MasterKind) String() string {
	switch k {
	case MasterLocal:
		return "local"
	case MasterEmbedded:
		return "embedded"
	case MasterMesos:
		return "mesos"
	default:
		return "unknown"
	}
}

// ErrBadMaster is wrapped by every master-string parse error.
var ErrBadMaster = errors.New("framework: invalid master")

// Master is a parsed master string.
type Master struct {
	Raw  string
	Kind MasterKind
	// Threads is the number of task slots for local masters.
	Threads int
	// MaxFailures is the per-task attempt limit set by local[N,F]; 0 means "from config".
	MaxFailures int
	// Address is host:port for mesos://host:port.
	Address string
	// ZooKeeper holds the zk:// URL (hosts and path) for mesos://zk://… masters.
	ZooKeeper string
}

// ParseMaster parses the master strings Spark users know: local, local[N],
// local[*], local[N,F], embedded, mesos://host:port and mesos://zk://hosts/path.
func ParseMaster(s string) (Master, error) {
	m := Master{Raw: s}
	switch {
	case s == "local":
		m.Kind, m.Threads = MasterLocal, 1
		return m, nil
	case strings.HasPrefix(s, "local[") && strings.HasSuffix(s, "]"):
		return parseLocal(s)
	case s == "embedded":
		m.Kind = MasterEmbedded
		return m, nil
	case strings.HasPrefix(s, "mesos://zk://"):
		return parseZK(s)
	case strings.HasPrefix(s, "mesos://"):
		return parseMesosAddr(s)
	}
	return m, fmt.Errorf("%w %q: expected local, local[N], local[*], local[N,F], embedded, mesos://host:port or mesos://zk://host:2181/mesos", ErrBadMaster, s)
}

func parseLocal(s string) (Master, error) {
	m := Master{Raw: s, Kind: MasterLocal}
	inner := strings.TrimSuffix(strings.TrimPrefix(s, "local["), "]")
	threads, failures, hasF := strings.Cut(inner, ",")
	n, err := parseThreads(strings.TrimSpace(threads))
	if err != nil {
		return m, fmt.Errorf("%w %q: %w", ErrBadMaster, s, err)
	}
	m.Threads = n
	if hasF {
		f, err := strconv.Atoi(strings.TrimSpace(failures))
		if err != nil || f < 1 {
			return m, fmt.Errorf("%w %q: max failures %q must be a positive integer", ErrBadMaster, s, failures)
		}
		m.MaxFailures = f
	}
	return m, nil
}

func parseThreads(s string) (int, error) {
	if s == "*" {
		return runtime.NumCPU(), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("thread count %q must be a positive integer or *", s)
	}
	return n, nil
}

func parseZK(s string) (Master, error) {
	m := Master{Raw: s, Kind: MasterMesos}
	rest := strings.TrimPrefix(s, "mesos://")
	hosts, path, ok := strings.Cut(strings.TrimPrefix(rest, "zk://"), "/")
	if !ok || hosts == "" || path == "" {
		return m, fmt.Errorf("%w %q: expected mesos://zk://host:2181[,host2:2181]/path", ErrBadMaster, s)
	}
	for _, h := range strings.Split(hosts, ",") {
		if err := checkHostPort(h); err != nil {
			return m, fmt.Errorf("%w %q: %w", ErrBadMaster, s, err)
		}
	}
	m.ZooKeeper = rest
	return m, nil
}

func parseMesosAddr(s string) (Master, error) {
	m := Master{Raw: s, Kind: MasterMesos}
	addr := strings.TrimSuffix(strings.TrimPrefix(s, "mesos://"), "/")
	if err := checkHostPort(addr); err != nil {
		return m, fmt.Errorf("%w %q: %w", ErrBadMaster, s, err)
	}
	m.Address = addr
	return m, nil
}

func checkHostPort(hp string) error {
	host, port, ok := strings.Cut(hp, ":")
	if i := strings.LastIndex(hp, ":"); i >= 0 {
		host, port, ok = hp[:i], hp[i+1:], true
	}
	if !ok || host == "" {
		return fmt.Errorf("address %q must be host:port", hp)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("address %q has an invalid port", hp)
	}
	return nil
}
