// Package zktest starts a real ZooKeeper server for tests (Debian's zookeeperd: a JRE and
// /usr/share/java/zookeeper.jar) and plays a Mesos master's part in leader election by writing
// json.info_ znodes. Tests using it fail, never skip, when ZooKeeper cannot start.
package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkJar is where Debian's zookeeper package (zookeeperd pulls it in) installs the server.
const zkJar = "/usr/share/java/zookeeper.jar"

// Start runs a standalone ZooKeeper server on a loopback port for the test and returns
// its host:port. It fails the test when Java or ZooKeeper is missing: install Debian's
// zookeeperd (which brings a JRE).
func Start(t testing.TB) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("ZooKeeper tests need java on PATH (apt-get install zookeeperd): %v", err)
	}
	if _, err := os.Stat(zkJar); err != nil {
		t.Fatalf("ZooKeeper tests need %s (apt-get install zookeeperd): %v", zkJar, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	var logs bytes.Buffer
	cmd := exec.Command(java, "-cp", "/etc/zookeeper/conf:"+zkJar,
		"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=*",
		"org.apache.zookeeper.server.ZooKeeperServerMain", strconv.Itoa(port), filepath.Join(dir, "data"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ruok(addr) {
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("ZooKeeper exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ZooKeeper did not answer on %s within 60s\n%s", addr, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ruok(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("ruok")); err != nil {
		return false
	}
	buf := make([]byte, 4)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "imok"
}

// Client connects a plain client for the test to create and delete znodes; it returns once
// the client has a session.
func Client(t testing.TB, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discard{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		for range events {
		}
	})
	deadline := time.After(30 * time.Second)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			t.Fatalf("no ZooKeeper session with %s within 30s (state %s)", addr, conn.State())
		}
	}
	return conn
}

type discard struct{}

func (discard) Printf(string, ...any) {}

// MasterJSON is what a Mesos master writes into its json.info_ znode.
func MasterJSON(id, host string, port int) []byte {
	return fmt.Appendf(nil, `{"address":{"hostname":%q,"ip":"127.0.0.1","port":%d},"hostname":%q,"id":%q,"ip":16777343,"pid":"master@127.0.0.1:%d","port":%d,"version":"1.11.0","capabilities":[{"type":"AGENT_UPDATE"},{"type":"QUOTA_V2"}]}`,
		host, port, host, id, port, port)
}

// Elect adds a contender for master id at host:port under path (created when missing) as an
// ephemeral sequential json.info_ node, and returns the node's path (delete it to make the
// master lose leadership).
func Elect(t testing.TB, c *zk.Conn, path, id, host string, port int) string {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.Create(path, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	node, err := c.Create(path+"/json.info_", MasterJSON(id, host, port), int32(zk.FlagEphemeral|zk.FlagSequence), acl)
	if err != nil {
		t.Fatal(err)
	}
	return node
}
