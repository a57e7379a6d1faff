package cluster

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func slaves(t *testing.T, url string) []map[string]any {
	t.Helper()
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Slaves []map[string]any `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Slaves
}

func TestClusterWithLocalAndRemoteAgents(t *testing.T) {
	log := quiet()
	c, err := Start(context.Background(), Config{
		Listen: "127.0.0.1:0", AgentSecret: "agent-secret", Agents: 2,
		Master: master.Config{AllocationInterval: 50 * time.Millisecond, AgentPingInterval: 100 * time.Millisecond},
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: "cpus:2;mem:1024;disk:1024;ports:[31000-31009]"},
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if got := slaves(t, c.URL()); len(got) != 2 {
		t.Fatalf("/state lists %d agents, want 2: %v", len(got), got)
	}

	// A third agent joins over HTTP, as `flint mesos agent` does.
	fetch, err := NewFetch(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := agent.New(agent.Config{WorkDir: t.TempDir(), Hostname: "remote-host", Resources: "cpus:1;mem:512", Fetch: fetch, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	client := link.Dial(c.URL(), link.ClientConfig{Secret: "agent-secret", Logger: log})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := remote.Start(ctx, client); err != nil {
		t.Fatal(err)
	}
	got := slaves(t, c.URL())
	if len(got) != 3 {
		t.Fatalf("/state lists %d agents after the remote one joined, want 3", len(got))
	}
	found := false
	for _, s := range got {
		found = found || s["hostname"] == "remote-host"
	}
	if !found {
		t.Fatalf("remote agent missing from /state: %v", got)
	}
	if err := remote.Close(); err != nil {
		t.Fatal(err)
	}
	client.Close()

	// A wrong secret is refused.
	bad := link.Dial(c.URL(), link.ClientConfig{Secret: "wrong", Logger: log})
	defer bad.Close()
	if _, err := bad.RegisterAgent(ctx, link.Registration{}, link.AgentFunc(func(link.MasterMessage) error { return nil })); err == nil {
		t.Fatal("agent with a wrong secret registered")
	}
}

// A client connection that never sent a request (Go's transport dials
// spares) must not hold Close for http.Server.Shutdown's 5 s StateNew
// grace: Close closes it, and an idle keep-alive one, and waits until the
// servers saw them close, so every Shutdown finds nothing open at its
// first look. The close's context is cancelled as soon as a Shutdown
// starts: a Shutdown that had to wait for anything would fail and be
// forced, which Close logs.
func TestCloseDoesNotWaitForUnusedConnections(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	c, err := Start(context.Background(), Config{
		Listen: "127.0.0.1:0", Agents: 1,
		Master: master.Config{AllocationInterval: 50 * time.Millisecond, AgentPingInterval: 100 * time.Millisecond},
		Agent:  agent.Config{WorkDir: t.TempDir()},
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A keep-alive connection left idle after a request too.
	var keepAlive net.Addr
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			keepAlive = cn.LocalAddr()
		}
		return cn, err
	}}
	defer tr.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: tr}).Get(c.URL() + "/health"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	// Both are unused once the server has them so (the request's own
	// connection idle again): a request still being served is one Shutdown
	// rightly waits for.
	waitfor.True(t, 10*time.Second, "the server to hold both connections unused", func() bool {
		c.conns.mu.Lock()
		defer c.conns.mu.Unlock()
		found := 0
		for sc := range c.conns.unused {
			if a := sc.RemoteAddr().String(); a == conn.LocalAddr().String() || a == keepAlive.String() {
				found++
			}
		}
		return found == 2
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, s := range append([]*http.Server{c.masterSrv}, c.servers...) {
		s.RegisterOnShutdown(cancel)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "close deadline") {
			t.Fatalf("a Shutdown waited for a connection: %s", e.Message)
		}
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the unused connection is still open after Close")
	}
}

func TestRestartMasterKeepsAddressIDAndAgents(t *testing.T) {
	c, err := Start(context.Background(), Config{
		Listen: "127.0.0.1:0", Agents: 2,
		Master: master.Config{AllocationInterval: 50 * time.Millisecond, AgentPingInterval: 50 * time.Millisecond},
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: "cpus:1;mem:256;disk:64"},
		Logger: quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	id, url := c.Master.ID(), c.URL()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Master.ID() != id || c.URL() != url {
		t.Fatalf("restarted master is %s at %s, want %s at %s", c.Master.ID(), c.URL(), id, url)
	}
	waitfor.True(t, 10*time.Second, "both agents to re-register with the restarted master", func() bool { return len(slaves(t, url)) == 2 })
}
