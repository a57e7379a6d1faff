package fine_test

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
	fineexec "github.com/flint-mesos/flint/executor/fine"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
)

// TestMain makes this test binary a Flint binary: started by an agent with
// FLINT_ROLE set it becomes a fine executor with the test's task functions
// registered, so the backend's default (serving the driver's own
// executable) is what the tests exercise. With envDriver set it is a driver
// process (for the driver-gone test).
func TestMain(m *testing.M) {
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(flint.Execute("fine.test", nil, nil))
	}
	if os.Getenv(envDriver) != "" {
		os.Exit(driverProcess())
	}
	goleak.VerifyTestMain(m)
}

// Task functions, registered in driver and executors alike.
var (
	double = framework.Register("fine_test.double", func(_ context.Context, n int) (int, error) { return 2 * n, nil })
	sleepy = framework.Register("fine_test.sleepy", func(ctx context.Context, ms int) (int, error) {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return ms, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	big = framework.Register("fine_test.big", func(_ context.Context, n int) ([]byte, error) {
		return bytes.Repeat([]byte{byte(n)}, 3<<20), nil
	})
	// stall blocks until its marker file exists, recording its pid.
	stall = framework.Register("fine_test.stall", func(ctx context.Context, in stallIn) (int, error) {
		_ = os.WriteFile(filepath.Join(in.Dir, fmt.Sprintf("pid.%d.%d", in.Index, os.Getpid())), nil, 0o644)
		for {
			if _, err := os.Stat(filepath.Join(in.Dir, "go")); err == nil {
				return in.Index, nil
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
)

type stallIn struct {
	Dir   string
	Index int
}

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
	switch {
	case o.agents == 0:
		o.agents = 2
	case o.agents < 0: // the test starts its own agents (startAgent)
		o.agents = 0
	}
	if o.resources == "" {
		o.resources = "cpus:4;mem:1024;disk:1024;ports:[31000-31100]"
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
		Agent:  agent.Config{WorkDir: t.TempDir(), Resources: o.resources, ShutdownGrace: 2 * time.Second, KillGrace: time.Second, Logger: log},
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

func mesosURL(c interface{ URL() string }) string {
	return "mesos://" + strings.TrimPrefix(c.URL(), "http://")
}

// baseConf selects fine mode and keeps executors small.
func baseConf(mark string) []string {
	return []string{
		"flint.mesos.coarse=false",
		"flint.ui.showConsoleProgress=false",
		"flint.executor.memory=64m",
		"flint.mesos.executor.memoryOverhead=32m",
		"flint.mesos.mesosExecutor.cores=0.5",
		"flint.network.timeout=10s",
		"flint.locality.wait=0s",
		"flint.executorEnv.FLINT_TEST_MARK=" + mark,
	}
}

func newMark() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// run is a driver for one test.
type run struct {
	fc   *framework.Context
	mark string
	logs *logBuffer
}

func mustRun(t testing.TB, masterURL string, conf ...string) *run {
	t.Helper()
	mark := newMark()
	cfg, err := config.Load(config.LoadOptions{Conf: append(append(baseConf(mark), "flint.master="+masterURL), conf...)})
	if err != nil {
		t.Fatal(err)
	}
	log, buf := testLogger(t)
	fc, err := framework.NewContext(cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	r := &run{fc: fc, mark: mark, logs: buf}
	t.Cleanup(func() {
		_ = fc.Stop()
		checkNoOrphans(t, mark)
	})
	return r
}

// proc is an executor process found in /proc.
type proc struct {
	pid        int
	executorID string
}

// executors scans /proc for fine executor processes carrying mark.
func executors(mark string) []proc {
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
		if env["FLINT_TEST_MARK"] == mark && env[flint.EnvRole] == fineexec.Role && !zombie(pid) {
			out = append(out, proc{pid: pid, executorID: env["MESOS_EXECUTOR_ID"]})
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

// checkNoOrphans fails when executor processes carrying mark are still
// alive shortly after the driver stopped.
func checkNoOrphans(t testing.TB, mark string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := executors(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			t.Errorf("orphan executor processes: %+v", left)
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
