package cluster

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// leaderZnode is the id in the lowest json.info_ znode under /mesos.
func leaderZnode(t *testing.T, zkAddr string) string {
	t.Helper()
	zc := zktest.Client(t, zkAddr)
	children, _, err := zc.Children("/mesos")
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := zc.Get("/mesos/" + lowestZnode(children))
	if err != nil {
		t.Fatal(err)
	}
	var j mastersJSON
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// In ZooKeeper mode the master elects itself as a ZooKeeper-backed Mesos
// master does; restarted, it comes back under a new id, and until the dead
// master's session expires it answers frameworks 307 towards the master
// ZooKeeper still names and refuses agents; then it leads and the agents
// re-register.
func TestZooKeeperModeRestart(t *testing.T) {
	zkAddr := zktest.Start(t)
	c, err := Start(context.Background(), Config{
		Listen: "127.0.0.1:0", Agents: 1,
		Master:    master.Config{AllocationInterval: 50 * time.Millisecond, AgentPingInterval: 50 * time.Millisecond},
		Agent:     agent.Config{WorkDir: t.TempDir(), Resources: "cpus:1;mem:256;disk:64"},
		ZooKeeper: &ZooKeeper{Servers: []string{zkAddr}, Path: "/mesos", SessionTimeout: 3 * time.Second},
		Logger:    quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	old, url := c.Master.ID(), c.URL()
	if got := leaderZnode(t, zkAddr); got != old {
		t.Fatalf("ZooKeeper names master %q, want %q", got, old)
	}
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Master.ID() == old {
		t.Fatal("the restarted master kept its id; a Mesos master comes back with a new one")
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Post(url+"/api/v1/scheduler", "application/json", strings.NewReader(`{"type":"SUBSCRIBE"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The dead master's advertised address (its reverse-looked-up name).
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	info := c.Master.Info()
	host := net.JoinHostPort(info.GetHostname(), port)
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "//"+host+"/api/v1/scheduler" {
		t.Fatalf("SUBSCRIBE while ZooKeeper names the dead master: %d Location %q, want 307 to //%s/api/v1/scheduler", resp.StatusCode, resp.Header.Get("Location"), host)
	}
	if got := leaderZnode(t, zkAddr); got != old {
		t.Fatalf("before the old session expires ZooKeeper names %q, want the old master %q", got, old)
	}
	waitfor.True(t, 20*time.Second, "the restarted master to lead and its agent to re-register", func() bool {
		r, err := http.Get(url + "/state")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK && len(slaves(t, url)) == 1
	})
	if got := leaderZnode(t, zkAddr); got != c.Master.ID() {
		t.Fatalf("ZooKeeper names %q, want the new master %q", got, c.Master.ID())
	}
}
