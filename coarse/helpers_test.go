package coarse_test

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
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
)

// TestMain makes this test binary a Flint binary: started by an agent with
// FLINT_ROLE set it becomes a coarse executor with the test's task
// functions registered, so the backend's default (serving the driver's own
// executable) is what the tests exercise.
func TestMain(m *testing.M) {
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(flint.Execute("coarse.test", nil, nil))
	}
	goleak.VerifyTestMain(m)
}

// Task functions, registered in driver and executors alike.
var (
	double = framework.Register("coarse_test.double", func(_ context.Context, n int) (int, error) { return 2 * n, nil })
	nap    = framework.Register("coarse_test.nap", func(ctx context.Context, n int) (int, error) {
		select {
		case <-time.After(150 * time.Millisecond):
			return 2 * n, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	flaky = framework.Register("coarse_test.flaky", flakyTask)
	fail  = framework.Register("coarse_test.fail", func(_ context.Context, n int) (int, error) {
		return 0, fmt.Errorf("task %d always fails", n)
	})
)

// flakyIn makes a task fail its first Fails attempts (counted with marker
// files in Dir, shared by every executor on this machine).
type flakyIn struct {
	Dir          string
	Index, Fails int
}

func flakyTask(_ context.Context, in flakyIn) (int, error) {
	for i := 0; i < in.Fails; i++ {
		f, err := os.OpenFile(filepath.Join(in.Dir, fmt.Sprintf("%d.%d", in.Index, i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return 0, fmt.Errorf("flaky task %d: planned failure %d", in.Index, i+1)
		}
	}
	return in.Index, nil
}

// logBuffer collects a test's logs; they are shown only when it fails.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func testLogger(t testing.TB) (*logrus.Logger, *logBuffer) {
	buf := &logBuffer{}
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

type clusterOpts struct {
	agents    int
	resources string
	master    func(*master.Config)
}

func startCluster(t testing.TB, o clusterOpts) *cluster.Cluster {
	t.Helper()
	if o.agents == 0 {
		o.agents = 2
	}
	if o.resources == "" {
		o.resources = "cpus:2;mem:1024;disk:1024;ports:[31000-31100]"
	}
	log, _ := testLogger(t)
	log.SetLevel(logrus.InfoLevel)
	mc := master.Config{AllocationInterval: 20 * time.Millisecond, AllocateOnRelease: true,
		AgentPingInterval: 200 * time.Millisecond, Logger: log}
	if o.master != nil {
		o.master(&mc)
	}
	c, err := cluster.Start(context.Background(), cluster.Config{
		Listen: "127.0.0.1:0", Master: mc, Agents: o.agents, FetchCacheBytes: 1 << 30,
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: o.resources, ShutdownGrace: time.Second, KillGrace: time.Second, Logger: log},
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

// baseConf keeps executors small and timeouts short.
func baseConf(mark string) []string {
	return []string{
		"flint.ui.showConsoleProgress=false",
		"flint.executor.memory=64m",
		"flint.mesos.executor.memoryOverhead=32m",
		"flint.network.timeout=10s",
		"flint.executor.heartbeatInterval=500ms",
		"flint.mesos.coarse.shutdownTimeout=5s",
		"flint.locality.wait=0s",
		"flint.executorEnv.FLINT_TEST_MARK=" + mark,
	}
}

func newMark() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// run is a driver for one test: a Context on master plus the marker its
// executors carry in their environment.
type run struct {
	fc   *framework.Context
	mark string
	logs *logBuffer
}

func newRun(t testing.TB, masterURL string, conf ...string) (*run, error) {
	t.Helper()
	mark := newMark()
	cfg, err := config.Load(config.LoadOptions{Conf: append(append(baseConf(mark), "flint.master="+masterURL), conf...)})
	if err != nil {
		t.Fatal(err)
	}
	log, buf := testLogger(t)
	fc, err := framework.NewContext(cfg, framework.WithLogger(log))
	if err != nil {
		return &run{mark: mark, logs: buf}, err
	}
	r := &run{fc: fc, mark: mark, logs: buf}
	t.Cleanup(func() {
		_ = fc.Stop()
		r.checkNoOrphans(t)
	})
	return r, nil
}

func mustRun(t testing.TB, masterURL string, conf ...string) *run {
	t.Helper()
	r, err := newRun(t, masterURL, conf...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// proc is an executor process found in /proc.
type proc struct {
	pid                 int
	executorID, agentID string
}

// executors scans /proc for processes whose environment carries the run's
// marker and the coarse-executor role.
func (r *run) executors() []proc {
	var out []proc
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
		if env["FLINT_TEST_MARK"] == r.mark && env[flint.EnvRole] == "coarse-executor" && !zombie(pid) {
			out = append(out, proc{pid: pid, executorID: env["FLINT_EXECUTOR_ID"], agentID: env["FLINT_AGENT_ID"]})
		}
	}
	return out
}

func zombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// checkNoOrphans fails when executor processes of the run are still alive
// shortly after Stop.
func (r *run) checkNoOrphans(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := r.executors()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			t.Errorf("orphan executor processes after Stop: %+v", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
