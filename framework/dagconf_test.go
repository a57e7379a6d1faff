package framework

import (
	"testing"

	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

func TestDAGConfig(t *testing.T) {
	c := NewConfig()
	if d := dagConfig(c); d.MaxConsecutiveStageAttempts != 4 || d.DisableReduceLocality || d.UnregisterOutputOnHost {
		t.Fatalf("defaults: %+v", d)
	}
	for k, v := range map[string]string{"flint.stage.maxConsecutiveAttempts": "2",
		"flint.shuffle.reduceLocality.enabled": "false", "flint.files.fetchFailure.unRegisterOutputOnHost": "true"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if d := dagConfig(c); d.MaxConsecutiveStageAttempts != 2 || !d.DisableReduceLocality || !d.UnregisterOutputOnHost {
		t.Fatalf("set: %+v", d)
	}
}

// The DAG core's ServerOf names a shuffle server by its base URL and pin:
// the outputs an agent's service holds for several executors, stores and
// namespaces are one server; a service restarted at a new port, or with a
// new certificate, is another; an executor's own server is its own.
func TestShuffleServerOfAnAddress(t *testing.T) {
	svc := func(port, pin, exec, ns string) string {
		return shuffleserver.Address{HostPort: "10.0.0.1:" + port, Pin: pin, Dir: "/srv/apps/app/" + exec, Namespace: ns, Executor: exec}.String()
	}
	same := [][2]string{
		{svc("7337", "aa", "e1", ""), svc("7337", "aa", "e2", "")},
		{svc("7337", "aa", "e1", ""), svc("7337", "aa", "e1", "run-1")},
		{shuffleserver.Address{Dir: "/tmp/a"}.String(), shuffleserver.Address{Dir: "/tmp/b"}.String()},
	}
	for _, p := range same {
		if shuffleServer(p[0]) != shuffleServer(p[1]) {
			t.Errorf("%s and %s: servers %q, %q; want one", p[0], p[1], shuffleServer(p[0]), shuffleServer(p[1]))
		}
	}
	differ := [][2]string{
		{svc("7337", "aa", "e1", ""), svc("7338", "aa", "e1", "")},
		{svc("7337", "aa", "e1", ""), svc("7337", "bb", "e1", "")},
		{svc("7337", "", "e1", ""), svc("7337", "aa", "e1", "")},
		{shuffleserver.Address{HostPort: "10.0.0.1:40001", Pin: "aa"}.String(), shuffleserver.Address{HostPort: "10.0.0.1:40002", Pin: "cc"}.String()},
	}
	for _, p := range differ {
		if shuffleServer(p[0]) == shuffleServer(p[1]) {
			t.Errorf("%s and %s: one server %q; want two", p[0], p[1], shuffleServer(p[0]))
		}
	}
}
