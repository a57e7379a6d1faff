package zktest

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestElect(t *testing.T) {
	addr := Start(t)
	c := Client(t, addr)
	node := Elect(t, c, "/mesos", "m-1", "127.0.0.1", 5050)
	data, _, err := c.Get(node)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(MasterJSON("m-1", "127.0.0.1", 5050)); string(data) != want {
		t.Errorf("node data %s, want %s", data, want)
	}
	if second := Elect(t, c, "/mesos", "m-2", "127.0.0.1", 5051); second <= node {
		t.Errorf("second contender %s does not sort after %s", second, node)
	}
}
