package mesosconn

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestMasterAddr(t *testing.T) {
	host := func(s string) *string { return &s }
	port := func(p uint32) *uint32 { return &p }
	for _, c := range []struct {
		m    mesos.MasterInfo
		want string
	}{
		{mesos.MasterInfo{Hostname: host("master"), Port: port(5050)}, "master:5050"},
		{mesos.MasterInfo{Hostname: host("fe80::1"), Port: port(5050)}, "[fe80::1]:5050"},
		// 10.1.2.3 in network byte order, as Mesos encodes MasterInfo.ip.
		{mesos.MasterInfo{IP: 10 | 1<<8 | 2<<16 | 3<<24, Port: port(5051)}, "10.1.2.3:5051"},
	} {
		if got := MasterAddr(c.m); got != c.want {
			t.Errorf("MasterAddr(%v) = %q, want %q", c.m, got, c.want)
		}
	}
}
