package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

var localMaster = regexp.MustCompile(`^local(?:\[(\*|[1-9][0-9]{0,5})(?:,([1-9][0-9]{0,5}))?\])?$`)

// ValidateMaster checks a master URL: "local", "local[N]", "local[*]", "local[N,F]",
// "local[*,F]" (N threads, F task attempts), "embedded" (in-process minimesos),
// "mesos://host:port" or "mesos://zk://host:2181,host2:2181/path".
func ValidateMaster(s string) error {
	switch {
	case s == "embedded":
		return nil
	case strings.HasPrefix(s, "local"):
		if !localMaster.MatchString(s) {
			return fmt.Errorf("master %q: %w: want local, local[N], local[*], local[N,F] or local[*,F] with N, F >= 1", s, ErrSyntax)
		}
		return nil
	case strings.HasPrefix(s, "mesos://zk://"):
		return validateZK(s, strings.TrimPrefix(s, "mesos://zk://"))
	case strings.HasPrefix(s, "mesos://"):
		if err := validateHostPort(strings.TrimPrefix(s, "mesos://")); err != nil {
			return fmt.Errorf("master %q: %w", s, err)
		}
		return nil
	}
	return fmt.Errorf("master %q: %w: want local[...], embedded, mesos://host:port or mesos://zk://hosts/path", s, ErrSyntax)
}

func validateZK(s, rest string) error {
	hosts, path, ok := strings.Cut(rest, "/")
	if !ok || path == "" {
		return fmt.Errorf("master %q: %w: ZooKeeper URL needs a znode path, e.g. mesos://zk://zk1:2181/mesos", s, ErrSyntax)
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if err := validateHostPort(h); err != nil {
			return fmt.Errorf("master %q: %w", s, err)
		}
	}
	return nil
}

func validateHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return fmt.Errorf("%w: want host:port, got %q", ErrSyntax, hp)
	}
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return fmt.Errorf("%w: bad host in %q", ErrSyntax, hp)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%w: bad port in %q (want 1-65535)", ErrSyntax, hp)
	}
	return nil
}
