package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/scheduler"
)

// A URL's split prefers the URL's host; a loopback URL and a file on a
// local-disk file system prefer the driver's host.
func TestSplitHosts(t *testing.T) {
	me, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"http://datanode-7.example:50075/webhdfs/v1/in.txt", []string{"datanode-7.example"}},
		{"https://10.1.2.3/in.txt", []string{"10.1.2.3"}},
		{"http://127.0.0.1:8000/in.txt", []string{me}},
		{"http://localhost/in.txt", []string{me}},
		{"https://[::1]:443/in.txt", []string{me}},
	} {
		if got := splitHosts(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("splitHosts(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	dir := t.TempDir()
	want := []string(nil)
	if onLocalDisk(dir) {
		want = []string{me}
	}
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := splitHosts(in); !slices.Equal(got, want) {
		t.Errorf("a file in %s (local disk: %v): %v, want %v", dir, onLocalDisk(dir), got, want)
	}
	if onLocalDisk("/proc/self/net/nfs-not-there") {
		t.Error("a path that does not exist counted as on a local disk")
	}
}

// TextFile's partitions carry their splits' hosts to the DAG core as
// preferred locations, one list per partition.
func TestTextFileSplitsPreferTheirHost(t *testing.T) {
	dir := t.TempDir()
	if !onLocalDisk(dir) {
		t.Skip(dir, "is on a network file system: no host preference")
	}
	me, _ := os.Hostname()
	p := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("a line of text\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newDriverBuilder("test.split-hosts", nil, nil, nil)
	b.settings.MaxPartitionBytes = 500
	lines := TextFile(b, p)
	spec := b.jobSpec(lines.n, nil, "run/")
	if len(spec.Nodes) != 1 || spec.Nodes[0].Partitions != 3 {
		t.Fatalf("spec %+v, want one node of 3 partitions (1500 bytes, 500 per split)", spec.Nodes)
	}
	want := []scheduler.Location{{Host: me}}
	for i, pref := range spec.Nodes[0].Preferred {
		if !slices.Equal(pref, want) {
			t.Errorf("partition %d prefers %v, want %v", i, pref, want)
		}
	}
	if len(spec.Nodes[0].Preferred) != 3 {
		t.Errorf("%d preference lists for 3 partitions", len(spec.Nodes[0].Preferred))
	}
}
