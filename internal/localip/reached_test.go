package localip

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func fixedOwn(ip string) func() (string, error) {
	return func() (string, error) { return ip, nil }
}

// Where a containerised server is reached: the agent's host and the
// mapped host port; else, bound to every address of its own network,
// its own address and the container port; else nothing (what it listens
// on). Not in a container (port 0): nothing.
func TestReached(t *testing.T) {
	for _, c := range []struct {
		host, bind     string
		port, hostPort int
		want           string
	}{
		{"agent1", "0.0.0.0", 31000, 31000, "agent1:31000"}, // Docker's bridge
		{"agent1", "0.0.0.0", 31000, 0, "172.20.0.9:31000"}, // a network of its own
		{"agent1", "::", 31001, 0, "172.20.0.9:31001"},
		{"agent1", "10.0.0.5", 31000, 0, ""}, // bound to one address: advertised as listened on
		{"agent1", "", 31000, 0, ""},
		{"agent1", "0.0.0.0", 0, 0, ""}, // a bare process
		{"agent1", "", 0, 31000, ""},
	} {
		got, err := reached(c.host, c.bind, c.port, c.hostPort, fixedOwn("172.20.0.9"))
		if err != nil || got != c.want {
			t.Errorf("reached(%q, %q, %d, %d) = %q, %v; want %q", c.host, c.bind, c.port, c.hostPort, got, err, c.want)
		}
	}
	if _, err := reached("", "0.0.0.0", 31000, 31000, fixedOwn("x")); err == nil {
		t.Error("a mapped host port without the agent's host is reached somewhere")
	}
	boom := errors.New("boom")
	if _, err := reached("agent1", "0.0.0.0", 31000, 0, func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("own address failing: %v, want it wrapped", err)
	}
}

// Own is the host name's first non-loopback address, IPv4 first;
// loopback only, or no answer, is ErrNoOwnAddress naming the host name.
func TestOwn(t *testing.T) {
	name := func() (string, error) { return "c0ffee", nil }
	answer := func(ips ...string) func(context.Context, string) ([]net.IP, error) {
		return func(_ context.Context, host string) ([]net.IP, error) {
			if host != "c0ffee" {
				t.Errorf("looked up %q, want the host name", host)
			}
			var out []net.IP
			for _, s := range ips {
				out = append(out, net.ParseIP(s))
			}
			return out, nil
		}
	}
	for _, c := range []struct {
		ips  []string
		want string
	}{
		{[]string{"127.0.1.1", "fd00::7", "172.20.0.9"}, "172.20.0.9"},
		{[]string{"::1", "fd00::7"}, "fd00::7"},
		{[]string{"10.1.2.3", "10.9.9.9"}, "10.1.2.3"},
	} {
		got, err := own(name, answer(c.ips...))
		if err != nil || got != c.want {
			t.Errorf("own with %v = %q, %v; want %q", c.ips, got, err, c.want)
		}
	}
	for _, ips := range [][]string{{"127.0.0.1", "::1"}, nil} {
		_, err := own(name, answer(ips...))
		if !errors.Is(err, ErrNoOwnAddress) || !strings.Contains(err.Error(), `"c0ffee"`) {
			t.Errorf("own with %v: %v, want ErrNoOwnAddress naming the host name", ips, err)
		}
	}
	nx := errors.New("no such host")
	if _, err := own(name, func(context.Context, string) ([]net.IP, error) { return nil, nx }); !errors.Is(err, ErrNoOwnAddress) || !errors.Is(err, nx) {
		t.Errorf("unresolvable: %v", err)
	}
}
