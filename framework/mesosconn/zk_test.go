package mesosconn

import (
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return h, port
}

// A mesos://zk:// master URL: the Conn follows Mesos' leader election in a real ZooKeeper.
func TestZooKeeperMasterFailover(t *testing.T) {
	zkAddr := zktest.Start(t)
	zc := zktest.Client(t, zkAddr)
	clock := newFakeClock()
	m1 := newFakeMaster(t, clock, "m1")
	m2 := newFakeMaster(t, clock, "m2")
	h1, p1 := hostPort(t, m1.addr())
	h2, p2 := hostPort(t, m2.addr())
	leader := zktest.Elect(t, zc, "/mesos", "m1", h1, p1)
	zktest.Elect(t, zc, "/mesos", "m2", h2, p2)

	cfg := testConfig(m1, clock)
	cfg.Master = "mesos://zk://" + zkAddr + "/mesos"
	rec := &recorder{}
	c := start(t, cfg, rec)
	if c.Master().ID != "m1" || len(m2.callsOf(scheduler.Call_SUBSCRIBE)) != 0 {
		t.Fatalf("subscribed to %q, want the elected m1", c.Master().ID)
	}
	// m1 loses leadership: its znode goes away and m2 leads.
	if err := zc.Delete(leader, -1); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "disconnected")
	rec.wait(t, "subscribed m1-0000 re=true")
	if c.Master().ID != "m2" {
		t.Errorf("master after failover %q, want m2", c.Master().ID)
	}
	if id := m2.callsOf(scheduler.Call_SUBSCRIBE)[0].Call.GetFrameworkID().GetValue(); id != "m1-0000" {
		t.Errorf("SUBSCRIBE to m2 with framework id %q, want m1-0000", id)
	}
	rec.mu.Lock()
	err := rec.errs[0]
	rec.mu.Unlock()
	if !errors.Is(err, ErrLeaderChanged) {
		t.Errorf("Disconnected(%v), want ErrLeaderChanged", err)
	}
}
