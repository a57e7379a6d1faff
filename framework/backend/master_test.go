package backend

import (
	"errors"
	"runtime"
	"testing"
)

func TestParseMaster(t *testing.T) {
	cases := []struct {
		in   string
		want Master
	}{
		{"local", Master{Raw: "local", Kind: MasterLocal, Threads: 1}},
		{"local[4]", Master{Raw: "local[4]", Kind: MasterLocal, Threads: 4}},
		{"local[*]", Master{Raw: "local[*]", Kind: MasterLocal, Threads: runtime.NumCPU()}},
		{"local[2,3]", Master{Raw: "local[2,3]", Kind: MasterLocal, Threads: 2, MaxFailures: 3}},
		{"local[*, 5]", Master{Raw: "local[*, 5]", Kind: MasterLocal, Threads: runtime.NumCPU(), MaxFailures: 5}},
		{"embedded", Master{Raw: "embedded", Kind: MasterEmbedded}},
		{"mesos://m1:5050", Master{Raw: "mesos://m1:5050", Kind: MasterMesos, Address: "m1:5050"}},
		{"mesos://zk://z1:2181,z2:2181/mesos", Master{Raw: "mesos://zk://z1:2181,z2:2181/mesos", Kind: MasterMesos, ZooKeeper: "zk://z1:2181,z2:2181/mesos"}},
	}
	for _, c := range cases {
		got, err := ParseMaster(c.in)
		if err != nil {
			t.Errorf("ParseMaster(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseMaster(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseMasterRejects(t *testing.T) {
	for _, in := range []string{"", "yarn", "local[0]", "local[-1]", "local[x]", "local[2,0]", "local[2,x]", "local[2",
		"mesos://", "mesos://host", "mesos://host:0", "mesos://host:99999", "mesos://zk://", "mesos://zk://z1:2181", "mesos://zk://z1/mesos", "spark://h:7077"} {
		_, err := ParseMaster(in)
		if !errors.Is(err, ErrBadMaster) {
			t.Errorf("ParseMaster(%q) error = %v, want ErrBadMaster", in, err)
		}
	}
}

func FuzzParseMaster(f *testing.F) {
	for _, s := range []string{"local", "local[4]", "local[*,3]", "mesos://h:5050", "mesos://zk://a:1,b:2/m", "embedded"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMaster(s)
		if err != nil {
			if !errors.Is(err, ErrBadMaster) {
				t.Fatalf("error %v does not wrap ErrBadMaster", err)
			}
			return
		}
		if m.Kind == MasterLocal && m.Threads < 1 {
			t.Fatalf("%q parsed with %d threads", s, m.Threads)
		}
	})
}
