package agent

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func byName(t *testing.T, spec string, p hostProbe) map[string]string {
	t.Helper()
	rs, err := detectResources(spec, t.TempDir(), p, func(err error) { t.Log(err) })
	if err != nil {
		t.Fatal(err)
	}
	return resourceStrings(rs)
}

func TestDetectResourcesMergeAndReserve(t *testing.T) {
	fake := func(cpus int, mem, disk uint64) hostProbe {
		return hostProbe{
			cpus:      func() int { return cpus },
			memTotal:  func() (uint64, error) { return mem, nil },
			diskTotal: func(string) (uint64, error) { return disk, nil },
		}
	}
	for _, c := range []struct {
		name, spec string
		probe      hostProbe
		want       map[string]string
	}{
		{"all detected, large host", "", fake(16, 64*gib, 500*gib),
			map[string]string{"cpus": "16", "mem": "64512", "disk": "506880", "ports": "[31000-32000]"}},
		{"small host keeps half", "", fake(1, 1536*mib, 4*gib),
			map[string]string{"cpus": "1", "mem": "768", "disk": "2048", "ports": "[31000-32000]"}},
		{"2 GiB and 10 GiB boundaries", "", fake(2, 2*gib, 10*gib),
			map[string]string{"cpus": "2", "mem": "1024", "disk": "5120", "ports": "[31000-32000]"}},
		{"explicit values override per resource", "cpus:3;ports:[5000-5001];gpus:1", fake(16, 64*gib, 500*gib),
			map[string]string{"cpus": "3", "mem": "64512", "disk": "506880", "ports": "[5000-5001]", "gpus": "1"}},
		{"a role still counts as given", "mem(web):100;disk:7", fake(16, 64*gib, 500*gib),
			map[string]string{"cpus": "16", "mem": "100", "disk": "7", "ports": "[31000-32000]"}},
		{"detection failure falls back to Mesos' defaults", "", hostProbe{
			cpus:      func() int { return 0 },
			memTotal:  func() (uint64, error) { return 0, errors.New("no meminfo") },
			diskTotal: func(string) (uint64, error) { return 0, errors.New("no statfs") },
		}, map[string]string{"cpus": "1", "mem": "1024", "disk": "10240", "ports": "[31000-32000]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := byName(t, c.spec, c.probe)
			if len(got) != len(c.want) {
				t.Fatalf("resources %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
	if _, err := detectResources("cpus:x", t.TempDir(), fake(1, gib, gib), nil); err == nil {
		t.Fatal("malformed spec accepted")
	}
}

// The real probes give plausible values on this host, and New uses them.
func TestDetectResourcesOnHost(t *testing.T) {
	memBytes, err := memTotal()
	if err != nil || memBytes < 64*mib {
		t.Fatalf("MemTotal %d, %v", memBytes, err)
	}
	diskBytes, err := diskTotal(t.TempDir())
	if err != nil || diskBytes == 0 {
		t.Fatalf("disk %d, %v", diskBytes, err)
	}
	if _, err := diskTotal("/no/such/dir"); err == nil {
		t.Fatal("statfs of a missing dir succeeded")
	}
	var warned []error
	rs, err := DetectResources("", t.TempDir(), func(err error) { warned = append(warned, err) })
	if err != nil || len(warned) > 0 {
		t.Fatalf("%v, warnings %v", err, warned)
	}
	got := map[string]float64{}
	for _, r := range rs {
		if r.Scalar != nil {
			got[r.Name] = r.Scalar.Value
		}
	}
	if got["cpus"] != float64(runtime.NumCPU()) {
		t.Fatalf("cpus %v, NumCPU %d", got["cpus"], runtime.NumCPU())
	}
	if got["mem"] <= 0 || got["mem"] > float64(memBytes/mib) || got["mem"] < float64(memBytes/mib)/2-1 {
		t.Fatalf("mem %v MB of %d MB", got["mem"], memBytes/mib)
	}
	if got["disk"] <= 0 || got["disk"] > float64(diskBytes/mib) {
		t.Fatalf("disk %v MB of %d MB", got["disk"], diskBytes/mib)
	}

	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.Resources = "cpus:3"
	ta := startAgent(t, m, cfg)
	regd := resourceStrings(m.registrations()[0].AgentInfo.Resources)
	if regd["cpus"] != "3" || regd["mem"] == "" || regd["disk"] == "" || regd["ports"] != "[31000-32000]" {
		t.Fatalf("registered resources %v", regd)
	}
	if len(ta.Resources()) != 4 {
		t.Fatalf("agent resources %v", ta.Resources())
	}
}

// resourceStrings sums resources by name into "3", "[1-2,5-6]" or "{a,b}".
func resourceStrings(rs []mesos.Resource) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		switch {
		case r.Scalar != nil:
			v, _ := strconv.ParseFloat(out[r.Name], 64)
			out[r.Name] = strconv.FormatFloat(v+r.Scalar.Value, 'f', -1, 64)
		case r.Ranges != nil:
			var s []string
			for _, rg := range r.Ranges.Range {
				s = append(s, fmt.Sprintf("%d-%d", rg.Begin, rg.End))
			}
			out[r.Name] = "[" + strings.Join(s, ",") + "]"
		case r.Set != nil:
			out[r.Name] = "{" + strings.Join(r.Set.Item, ",") + "}"
		}
	}
	return out
}
