package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

// fakeAddrs answers os.Hostname with host (an error if empty) and
// resolves names from hosts (an error for others), recording lookups.
func fakeAddrs(host string, hosts map[string][]string, lookups *[]string) addrs {
	return addrs{
		hostname: func() (string, error) {
			if host == "" {
				return "", errors.New("no host name")
			}
			return host, nil
		},
		lookupIP: func(name string) ([]net.IP, error) {
			*lookups = append(*lookups, name)
			ss, ok := hosts[name]
			if !ok {
				return nil, errors.New("no such host")
			}
			var ips []net.IP
			for _, s := range ss {
				ips = append(ips, net.ParseIP(s))
			}
			return ips, nil
		},
	}
}

func TestMasterAddressChoice(t *testing.T) {
	hosts := map[string][]string{
		"node1":     {"fe80::1", "127.0.1.1", "10.0.0.7", "10.0.0.8"},
		"master":    {"172.18.0.2"},
		"loopy":     {"::1", "127.0.1.1"},
		"localhost": {"::1", "127.0.0.1"},
		"v6only":    {"2001:db8::1"},
	}
	for _, tc := range []struct {
		name             string
		listen, hostname string // listen "" is a nil IP
		osHost           string
		wantHost, wantIP string
		wantLookups      int
	}{
		{name: "concrete IPv4 listen, no hostname: its reverse lookup", listen: "127.0.0.1", osHost: "node1", wantHost: "localhost", wantIP: "127.0.0.1"},
		{name: "concrete IPv4 listen, no name for it", listen: "10.1.2.4", osHost: "node1", wantHost: "10.1.2.4", wantIP: "10.1.2.4"},
		{name: "concrete IPv4 listen, hostname", listen: "10.1.2.3", hostname: "master", osHost: "node1", wantHost: "master", wantIP: "10.1.2.3"},
		{name: "IPv6 wildcard (--listen 0.0.0.0:5050)", listen: "::", osHost: "node1", wantHost: "node1", wantIP: "10.0.0.7", wantLookups: 1},
		{name: "IPv4 wildcard", listen: "0.0.0.0", osHost: "node1", wantHost: "node1", wantIP: "10.0.0.7", wantLookups: 1},
		{name: "unknown listen IP", listen: "", osHost: "node1", wantHost: "node1", wantIP: "10.0.0.7", wantLookups: 1},
		{name: "wildcard, configured hostname", listen: "::", hostname: "master", osHost: "node1", wantHost: "master", wantIP: "172.18.0.2", wantLookups: 1},
		{name: "wildcard, IPv4 literal hostname", listen: "::", hostname: "10.9.8.7", osHost: "node1", wantHost: "10.9.8.7", wantIP: "10.9.8.7"},
		{name: "wildcard, hostname resolving to loopback only", listen: "::", osHost: "loopy", wantHost: "loopy", wantIP: "127.0.1.1", wantLookups: 1},
		{name: "wildcard, hostname not resolving", listen: "::", osHost: "nowhere", wantHost: "nowhere", wantIP: "127.0.0.1", wantLookups: 1},
		{name: "wildcard, hostname with IPv6 only", listen: "::", osHost: "v6only", wantHost: "v6only", wantIP: "127.0.0.1", wantLookups: 1},
		{name: "wildcard, no host name", listen: "::", osHost: "", wantHost: "localhost", wantIP: "127.0.0.1", wantLookups: 1},
		{name: "concrete IPv6 listen", listen: "::1", osHost: "node1", wantHost: "::1", wantIP: "127.0.0.1"},
		{name: "concrete IPv6 listen, hostname", listen: "2001:db8::5", hostname: "node1", osHost: "node1", wantHost: "node1", wantIP: "10.0.0.7", wantLookups: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lookups []string
			s := fakeAddrs(tc.osHost, hosts, &lookups)
			s.lookupAddr = func(ip string) ([]string, error) {
				if ip == "127.0.0.1" {
					return []string{"localhost."}, nil
				}
				return nil, errors.New("no name for " + ip)
			}
			host, ip := s.masterAddress(net.ParseIP(tc.listen), tc.hostname)
			if host != tc.wantHost || ip.String() != tc.wantIP || len(ip) != net.IPv4len {
				t.Fatalf("masterAddress(%q, %q) = %q, %v (%d bytes), want %q, %s", tc.listen, tc.hostname, host, ip, len(ip), tc.wantHost, tc.wantIP)
			}
			if len(lookups) != tc.wantLookups {
				t.Fatalf("lookups %v, want %d", lookups, tc.wantLookups)
			}
		})
	}
}

func TestAgentEndpointChoice(t *testing.T) {
	var lookups []string
	s := fakeAddrs("node1", nil, &lookups)
	for _, tc := range []struct{ listen, hostname, want string }{
		{"127.0.0.1:0", "", "127.0.0.1:"},
		{"[::1]:0", "", "[::1]:"},
		{"0.0.0.0:0", "", "node1:"},
		{"0.0.0.0:0", "agent7", "agent7:"},
	} {
		lis, err := net.Listen("tcp", tc.listen)
		if err != nil {
			t.Logf("listen %s: %v (skipped)", tc.listen, err)
			continue
		}
		_, port := listenAddr(lis)
		got := s.agentEndpoint(lis, tc.hostname)
		lis.Close()
		if want := tc.want + strconv.Itoa(port); got != want {
			t.Errorf("agentEndpoint(%s, %q) = %q, want %q", tc.listen, tc.hostname, got, want)
		}
	}
	if len(lookups) != 0 {
		t.Errorf("lookups %v", lookups)
	}
}

// A master listening on all interfaces without a configured hostname
// advertises the machine's host name (not "::" or "0.0.0.0") and an IPv4
// address it answers on, in MasterInfo (ip packed as Mesos packs it), in
// its pid and in /state.
func TestWildcardListenAdvertisesHostname(t *testing.T) {
	c, err := Start(context.Background(), Config{
		Listen: "0.0.0.0:0", Agents: 1,
		Master: master.Config{AllocationInterval: 50 * time.Millisecond},
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: "cpus:1;mem:256;disk:64"},
		Logger: quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	info := c.Master.Info()
	osHost, _ := os.Hostname()
	if h := info.GetHostname(); h == "" || h == "::" || h == "0.0.0.0" || h != osHost || info.Address.GetHostname() != h {
		t.Fatalf("MasterInfo hostname %q (address %q), want the host name %q", h, info.Address.GetHostname(), osHost)
	}
	ip := net.ParseIP(info.Address.GetIP()).To4()
	if ip == nil || ip.IsUnspecified() {
		t.Fatalf("MasterInfo address.ip %q", info.Address.GetIP())
	}
	if want := uint32(ip[0]) | uint32(ip[1])<<8 | uint32(ip[2])<<16 | uint32(ip[3])<<24; info.IP != want {
		t.Fatalf("MasterInfo ip %#x, want %#x (%s in network order as a little-endian uint32)", info.IP, want, ip)
	}
	port := strconv.Itoa(int(info.GetPort()))
	pid := "master@" + net.JoinHostPort(ip.String(), port)
	if info.GetPID() != pid {
		t.Fatalf("pid %q, want %q", info.GetPID(), pid)
	}
	// The advertised address reaches the master, and /state says the same.
	resp, err := http.Get("http://" + net.JoinHostPort(ip.String(), port) + "/state")
	if err != nil {
		t.Fatalf("master unreachable at its advertised address: %v", err)
	}
	defer resp.Body.Close()
	var st struct {
		PID, Hostname string
		Slaves        []struct{ PID string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.Hostname != osHost {
		t.Fatalf("/state pid %q hostname %q, want %q %q", st.PID, st.Hostname, pid, osHost)
	}
	if len(st.Slaves) != 1 || st.Slaves[0].PID == "" {
		t.Fatalf("/state slaves %+v", st.Slaves)
	}
}

// A concrete IPv4 listen address is the advertised IP: 127.0.0.1 packs
// to 0x0100007f, as a Mesos master on loopback sends it; the advertised
// host name is the address' reverse lookup.
func TestLoopbackListenMasterInfo(t *testing.T) {
	c, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	info := c.Master.Info()
	_, port, _ := net.SplitHostPort(c.addr)
	// The host name is what 127.0.0.1's reverse lookup gives, as a Mesos
	// master on loopback advertises it ("localhost" with the usual /etc/hosts).
	names, err := net.LookupAddr("127.0.0.1")
	if err != nil || len(names) == 0 {
		t.Fatalf("this machine has no name for 127.0.0.1 (%v)", err)
	}
	if info.IP != 0x0100007f || info.GetHostname() != strings.TrimSuffix(names[0], ".") || info.GetPID() != "master@127.0.0.1:"+port || info.Address.GetIP() != "127.0.0.1" {
		t.Fatalf("MasterInfo %+v", info)
	}
}
