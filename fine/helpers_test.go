package fine_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/testkit/failovercheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
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
	failovercheck.MaybeDriverMain(failoverMode)
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

type clusterOpts struct {
	agents    int
	resources string
	attrs     string // every agent's attributes
	master    func(*master.Config)
	workDir   string
	zk        *cluster.ZooKeeper
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
	return mesostest.StartCluster(t, mesostest.Cluster{Agents: o.agents, Resources: o.resources, Attributes: o.attrs, ShutdownGrace: 2 * time.Second, Master: o.master, WorkDir: o.workDir, ZooKeeper: o.zk})
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

// run is a driver for one test.
type run struct {
	fc   *framework.Context
	mark string
	logs *mesostest.LogBuffer
}

func mustRun(t testing.TB, masterURL string, conf ...string) *run {
	t.Helper()
	mark := mesostest.NewMark()
	cfg, err := config.Load(config.LoadOptions{Conf: append(append(baseConf(mark), "flint.master="+masterURL), conf...)})
	if err != nil {
		t.Fatal(err)
	}
	log, buf := mesostest.Logger(t)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	r := &run{fc: fc, mark: mark, logs: buf}
	t.Cleanup(func() {
		_ = fc.Stop(context.Background())
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
	for _, p := range mesostest.Procs(func(env map[string]string) bool {
		return env["FLINT_TEST_MARK"] == mark && env[flint.EnvRole] == contract.RoleFine
	}) {
		out = append(out, proc{pid: p.PID, executorID: p.Env["MESOS_EXECUTOR_ID"]})
	}
	return out
}

// checkNoOrphans fails when executor processes carrying mark are still
// alive shortly after the driver stopped.
func checkNoOrphans(t testing.TB, mark string) {
	t.Helper()
	mesostest.CheckGone(t, 10*time.Second, func() []proc { return executors(mark) }, func(p proc) int { return p.pid }, "orphan executor processes")
}

// waitFor and ints are the shared helpers under this package's names.
var (
	waitFor = mesostest.WaitFor
	ints    = mesostest.Ints
)
