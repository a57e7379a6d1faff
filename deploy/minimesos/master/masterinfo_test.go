package master_test

import (
	"errors"
	"net"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.PanicLevel)
	return l
}

// MasterInfo carries the configured hostname, and the IP in ip (packed as
// Mesos packs it: s_addr read on a little-endian host), address.ip and
// the pid master@ip:port.
func TestMasterInfoAddress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      master.Config
		host, ip string
		packed   uint32
		pid      string
	}{
		{"defaults", master.Config{}, "localhost", "127.0.0.1", 0x0100007f, "master@127.0.0.1:5050"},
		{"hostname and IP", master.Config{Hostname: "master", IP: net.ParseIP("10.1.2.3"), Port: 5051},
			"master", "10.1.2.3", 0x0302010a, "master@10.1.2.3:5051"},
		{"IPv4 hostname", master.Config{Hostname: "192.168.7.9"}, "192.168.7.9", "192.168.7.9", 0x0907a8c0, "master@192.168.7.9:5050"},
		{"IPv6 hostname", master.Config{Hostname: "::1"}, "::1", "127.0.0.1", 0x0100007f, "master@127.0.0.1:5050"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quietLogger()
			m, err := master.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			info := m.Info()
			if info.GetHostname() != tc.host || info.Address.GetHostname() != tc.host || info.Address.GetIP() != tc.ip ||
				info.IP != tc.packed || info.GetPID() != tc.pid {
				t.Fatalf("MasterInfo hostname %q / %q, ip %#x / %q, pid %q; want %q, %#x / %q, %q",
					info.GetHostname(), info.Address.GetHostname(), info.IP, info.Address.GetIP(), info.GetPID(),
					tc.host, tc.packed, tc.ip, tc.pid)
			}
		})
	}
	if _, err := master.New(master.Config{IP: net.ParseIP("2001:db8::1"), Logger: quietLogger()}); !errors.Is(err, master.ErrInvalidConfig) {
		t.Fatalf("IPv6 IP: %v", err)
	}
	if got := master.PackIPv4(net.IPv4(1, 2, 3, 4)); got != 0x04030201 {
		t.Fatalf("PackIPv4(1.2.3.4) = %#x", got)
	}
}
