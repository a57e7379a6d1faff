package localip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// ErrNoOwnAddress: this host's name resolves to no address other hosts
// can reach (none, or loopback only).
var ErrNoOwnAddress = errors.New("localip: no address for this host's name")

// Reached is the host:port other hosts reach a server at that listens on
// bind:port in an executor's container (contract.EnvBindAddress and the
// container port), as libprocess decides it for Mesos' own executors:
//
//   - hostPort > 0: the agent maps that port of its host to the server
//     (Docker's bridge network): host:hostPort, host being the agent's
//     (LIBPROCESS_ADVERTISE_IP and LIBPROCESS_ADVERTISE_PORT);
//   - else, listening on every address (bind "0.0.0.0" or "::") of a
//     network of the container's own — a Docker user network, a CNI
//     network: one IP per container — the address the container's own
//     host name resolves to (Own), with port: libprocess bound to 0.0.0.0
//     advertises its host name's address, and Mesos' CNI isolator sets
//     LIBPROCESS_IP=0.0.0.0 for that reason (MESOS-3553);
//   - else "": the caller advertises what it listens on.
//
// port 0 (not in a container) is always "".
func Reached(host, bind string, port, hostPort int) (string, error) {
	return reached(host, bind, port, hostPort, Own)
}

func reached(host, bind string, port, hostPort int, own func() (string, error)) (string, error) {
	switch {
	case port <= 0:
		return "", nil
	case hostPort > 0 && host != "":
		return net.JoinHostPort(host, strconv.Itoa(hostPort)), nil
	case hostPort > 0:
		return "", fmt.Errorf("localip: host port %d is mapped but the agent's host is unknown", hostPort)
	case !unspecified(bind):
		return "", nil
	}
	ip, err := own()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ip, strconv.Itoa(port)), nil
}

func unspecified(bind string) bool {
	ip := net.ParseIP(bind)
	return ip != nil && ip.IsUnspecified()
}

// Own is the address this host's name resolves to (the first IPv4 one,
// else the first), loopback addresses left out: in a container with a
// network of its own, Docker (and Mesos' CNI isolator) map the
// container's host name to its address there in /etc/hosts. It is
// ErrNoOwnAddress when the name has no other address.
func Own() (string, error) {
	return own(os.Hostname, func(ctx context.Context, name string) ([]net.IP, error) {
		return net.DefaultResolver.LookupIP(ctx, "ip", name)
	})
}

func own(hostname func() (string, error), lookup func(context.Context, string) ([]net.IP, error)) (string, error) {
	name, err := hostname()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoOwnAddress, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ips, err := lookup(ctx, name)
	if err != nil {
		return "", fmt.Errorf("%w: resolving %q: %w", ErrNoOwnAddress, name, err)
	}
	var first net.IP
	for _, ip := range ips {
		switch {
		case ip.IsLoopback() || ip.IsUnspecified():
		case ip.To4() != nil:
			return ip.String(), nil
		case first == nil:
			first = ip
		}
	}
	if first == nil {
		return "", fmt.Errorf("%w: %q resolves to %v", ErrNoOwnAddress, name, ips)
	}
	return first.String(), nil
}
