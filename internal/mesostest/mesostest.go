package mesostest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

// LogBuffer collects a test's logs; they are shown only when it fails.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger is a debug-level logger into a LogBuffer, logged by t if it fails.
func Logger(t testing.TB) (*logrus.Logger, *LogBuffer) {
	buf := &LogBuffer{}
	log := logrus.New()
	log.SetOutput(buf)
	log.SetLevel(logrus.DebugLevel)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", buf.String())
		}
	})
	return log, buf
}

// Cluster says what StartCluster starts.
type Cluster struct {
	Agents        int
	Resources     string        // every agent's resources
	ShutdownGrace time.Duration // agent.Config.ShutdownGrace
	Master        func(*master.Config)
}

// StartCluster starts an in-process Mesos master with o.Agents agents on
// 127.0.0.1, closed when the test ends.
func StartCluster(t testing.TB, o Cluster) *cluster.Cluster {
	t.Helper()
	log, _ := Logger(t)
	log.SetLevel(logrus.InfoLevel)
	mc := master.Config{AllocationInterval: 20 * time.Millisecond, AllocateOnRelease: true,
		AgentPingInterval: 200 * time.Millisecond, Logger: log}
	if o.Master != nil {
		o.Master(&mc)
	}
	c, err := cluster.Start(context.Background(), cluster.Config{
		Listen: "127.0.0.1:0", Master: mc, Agents: o.Agents, FetchCacheBytes: 1 << 30,
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: o.Resources, ShutdownGrace: o.ShutdownGrace, KillGrace: time.Second, Logger: log},
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("cluster close: %v", err)
		}
	})
	return c
}

// NewMark is a random marker for a test's executors to carry in their
// environment.
func NewMark() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Proc is a live process found in /proc.
type Proc struct {
	PID int
	Env map[string]string
}

// Procs scans /proc for live (not zombie) processes other than this one
// whose environment match accepts.
func Procs(match func(env map[string]string) bool) []Proc {
	var out []Proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env := map[string]string{}
		for kv := range strings.SplitSeq(string(data), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		if match(env) && !Zombie(pid) {
			out = append(out, Proc{PID: pid, Env: env})
		}
	}
	return out
}

// Zombie reports whether process pid is gone or a zombie.
func Zombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// CheckGone waits up to d for find to return nothing; if processes are
// still left then, it kills them (SIGKILL) and fails t with msg and the list.
func CheckGone[P any](t testing.TB, d time.Duration, find func() []P, pid func(P) int, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := find()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(pid(p), syscall.SIGKILL)
			}
			t.Errorf("%s: %+v", msg, left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitFor polls cond until it holds, failing t after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ints is 0, 1, …, n-1.
func Ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
