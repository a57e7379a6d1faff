package localip

import (
	"errors"
	"fmt"
	"net"
)

// ErrNoHost is returned for an empty host.
var ErrNoHost = errors.New("localip: no host")

// Towards returns the local IP this host uses to reach host: a name, an IP
// or a host:port (the port is ignored). A name is resolved first, so an
// unknown name fails here.
func Towards(host string) (string, error) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" {
		return "", ErrNoHost
	}
	// Port 9 (discard): no packet is sent, the port only makes an address.
	c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
	if err != nil {
		return "", fmt.Errorf("localip: no route to %s: %w", host, err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// TowardsOrEmpty is Towards with "" for any failure, for callers to whom
// an unknown address means "listen everywhere".
func TowardsOrEmpty(host string) string {
	ip, err := Towards(host)
	if err != nil {
		return ""
	}
	return ip
}
