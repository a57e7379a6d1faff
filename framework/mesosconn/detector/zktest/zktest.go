// Package zktest starts a real ZooKeeper server for tests (Debian's zookeeperd: a JRE and
// /usr/share/java/zookeeper.jar) and plays a Mesos master's part in leader election by writing
// json.info_ znodes. Tests using it fail, never skip, when ZooKeeper cannot start.
package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkJar is where Debian's zookeeper package (zookeeperd pulls it in) installs the server.
const zkJar = "/usr/share/java/zookeeper.jar"

// Start runs a standalone ZooKeeper server on a loopback port for the test and returns
// its host:port once that server serves requests. It fails the test when Java or
// ZooKeeper is missing: install Debian's zookeeperd (which brings a JRE).
//
// "Serves" is checked with the srvr and conf four-letter words, not ruok: ZooKeeper
// answers ruok with imok as soon as it listens, a second or more (under load, many)
// before it serves, and a client connecting in between has its connections closed
// until then (go-zookeeper retries every second; under load one was seen to sit in
// StateConnected for 30 s and fail TestElect). conf must name this server's data
// directory, so a server another test started on the same port is never taken for
// ours; when the port was taken between picking it and ZooKeeper binding it (the JVM
// takes seconds to start), Start tries again on a new port.
func Start(t testing.TB) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("ZooKeeper tests need java on PATH (apt-get install zookeeperd): %v", err)
	}
	if _, err := os.Stat(zkJar); err != nil {
		t.Fatalf("ZooKeeper tests need %s (apt-get install zookeeperd): %v", zkJar, err)
	}
	for attempt := 1; ; attempt++ {
		addr, logs, portTaken := start(t, java)
		if addr != "" {
			return addr
		}
		if !portTaken || attempt == 3 {
			t.Fatalf("ZooKeeper did not start (attempt %d): %s", attempt, logs)
		}
	}
}

// start runs one server; it returns its address once it serves, or its logs and whether
// it failed because its port was taken.
func start(t testing.TB, java string) (addr, logs string, portTaken bool) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dataDir := filepath.Join(t.TempDir(), "data")
	var out syncBuffer
	cmd := exec.Command(java, "-cp", "/etc/zookeeper/conf:"+zkJar,
		"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=*",
		// No fsync per transaction: a test server's data dies with the test, and on a
		// loaded machine fsync made session creation take over 30 s (seen in CI runs).
		"-Dzookeeper.forceSync=no",
		"org.apache.zookeeper.server.ZooKeeperServerMain", strconv.Itoa(port), dataDir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !serving(addr, dataDir) {
		select {
		case err := <-exited:
			logs := out.String()
			return "", fmt.Sprintf("exited: %v\n%s", err, logs), strings.Contains(logs, "Address already in use")
		case <-deadline.C:
			stop()
			return "", fmt.Sprintf("not serving on %s within 60s\n%s", addr, out.String()), false
		case <-tick.C:
		}
	}
	t.Cleanup(stop)
	return addr, "", false
}

// serving reports whether the ZooKeeper server with dataDir serves requests at addr.
func serving(addr, dataDir string) bool {
	return strings.Contains(fourLetter(addr, "srvr"), "Mode: standalone") &&
		strings.Contains(fourLetter(addr, "conf"), "dataDir="+dataDir+string(filepath.Separator))
}

// fourLetter sends a four-letter-word command and returns the answer ("" on error).
func fourLetter(addr, cmd string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// syncBuffer is a bytes.Buffer safe for the process's writers and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Client connects a plain client for the test to create and delete znodes; it returns once
// the client has a session. A connection that has no session after 10 s is closed and
// made again, up to three times (a safety net: the stalls once seen here came from
// connecting before the server served, which Start now waits for).
func Client(t testing.TB, addr string) *zk.Conn {
	t.Helper()
	var states []string
	for range 3 {
		conn, state := connect(t, addr, 10*time.Second)
		if conn != nil {
			return conn
		}
		states = append(states, state)
	}
	t.Fatalf("no ZooKeeper session with %s in 3 connections of 10 s each (states %v)", addr, states)
	return nil
}

// connect returns a client with a session, or nil and the state it was left in after d.
func connect(t testing.TB, addr string, d time.Duration) (*zk.Conn, string) {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discard{}))
	if err != nil {
		t.Fatal(err)
	}
	closeConn := func() {
		conn.Close()
		for range events {
		}
	}
	deadline := time.After(d)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			state := conn.State().String()
			closeConn()
			return nil, state
		}
	}
	t.Cleanup(closeConn)
	return conn, ""
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
