package coarse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/devtools/grpcecho"
	"github.com/flint-mesos/flint/internal/testkit/failovercheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// TestMain makes this test binary a Flint binary: started by an agent with
// FLINT_ROLE set it becomes a coarse executor with the test's task
// functions registered, so the backend's default (serving the driver's own
// executable) is what the tests exercise.
func TestMain(m *testing.M) {
	if code, ran := grpcecho.MaybeClientMain(); ran {
		os.Exit(code)
	}
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(executorMain())
	}
	failovercheck.MaybeDriverMain(failoverMode)
	goleak.VerifyTestMain(m)
}

// executorMain runs the executor role, under a CPU profile written to the
// directory in $COARSE_BENCH_EXECUTOR_PROFILE when the benchmarks set it
// (see benchProfileConf).
func executorMain() int {
	if dir := os.Getenv(envExecutorProfile); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("executor-%d.pprof", os.Getpid())))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
		defer writeAllocProfile(filepath.Join(dir, fmt.Sprintf("executor-%d.allocs", os.Getpid())))
	}
	return flint.Execute("coarse.test", nil, nil)
}

func writeAllocProfile(path string) {
	if f, err := os.Create(path); err == nil {
		_ = pprof.Lookup("allocs").WriteTo(f, 0)
		_ = f.Close()
	}
}

const envExecutorProfile = "COARSE_BENCH_EXECUTOR_PROFILE"

// benchProfileConf passes $COARSE_BENCH_EXECUTOR_PROFILE on to the
// executors, so that `COARSE_BENCH_EXECUTOR_PROFILE=/tmp/p go test -bench`
// profiles the executor processes as -cpuprofile does the driver.
func benchProfileConf() []string {
	if dir := os.Getenv(envExecutorProfile); dir != "" {
		return []string{"flint.executorEnv." + envExecutorProfile + "=" + dir}
	}
	return nil
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
	if o.agents == 0 {
		o.agents = 2
	}
	if o.resources == "" {
		o.resources = "cpus:2;mem:1024;disk:1024;ports:[31000-31100]"
	}
	return mesostest.StartCluster(t, mesostest.Cluster{Agents: o.agents, Resources: o.resources, Attributes: o.attrs, ShutdownGrace: time.Second, Master: o.master, WorkDir: o.workDir, ZooKeeper: o.zk})
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

// run is a driver for one test: a Context on master plus the marker its
// executors carry in their environment.
type run struct {
	fc   *framework.Context
	mark string
	logs *mesostest.LogBuffer
}

func newRun(t testing.TB, masterURL string, conf ...string) (*run, error) {
	t.Helper()
	return newRunWith(t, masterURL, nil, conf...)
}

// newRunWith is newRun with Context options (a clock) beside the logger.
func newRunWith(t testing.TB, masterURL string, opts []framework.Option, conf ...string) (*run, error) {
	t.Helper()
	mark := mesostest.NewMark()
	cfg, err := config.Load(config.LoadOptions{Conf: append(append(baseConf(mark), "flint.master="+masterURL), conf...)})
	if err != nil {
		t.Fatal(err)
	}
	log, buf := mesostest.Logger(t)
	fc, err := framework.NewContext(context.Background(), cfg, append([]framework.Option{framework.WithLogger(log)}, opts...)...)
	if err != nil {
		return &run{mark: mark, logs: buf}, err
	}
	r := &run{fc: fc, mark: mark, logs: buf}
	t.Cleanup(func() {
		_ = fc.Stop(context.Background())
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
	memLimit            string // GOMEMLIMIT
	driverURL           string // FLINT_DRIVER_URL
	certPin             string // FLINT_DRIVER_CERT_SHA256
}

// executors scans /proc for processes whose environment carries the run's
// marker and the coarse-executor role.
func (r *run) executors() []proc {
	var out []proc
	for _, p := range mesostest.Procs(func(env map[string]string) bool {
		return env["FLINT_TEST_MARK"] == r.mark && env[flint.EnvRole] == "coarse-executor"
	}) {
		out = append(out, proc{pid: p.PID, executorID: p.Env["FLINT_EXECUTOR_ID"], agentID: p.Env["FLINT_AGENT_ID"], memLimit: p.Env["GOMEMLIMIT"], driverURL: p.Env["FLINT_DRIVER_URL"], certPin: p.Env["FLINT_DRIVER_CERT_SHA256"]})
	}
	return out
}

// checkNoOrphans fails when executor processes of the run are still alive
// shortly after Stop.
func (r *run) checkNoOrphans(t testing.TB) {
	t.Helper()
	mesostest.CheckGone(t, 5*time.Second, r.executors, func(p proc) int { return p.pid }, "orphan executor processes after Stop")
}

// waitFor and ints are the shared helpers under this package's names.
var (
	waitFor = mesostest.WaitFor
	ints    = mesostest.Ints
)

// envConditionalFunction, set in an executor's environment, makes it
// register one more function than the driver.
const envConditionalFunction = "COARSE_TEST_CONDITIONAL_FUNCTION"

func init() {
	if os.Getenv(envConditionalFunction) != "" {
		framework.Register("coarse_test.conditional", func(_ context.Context, n int) (int, error) { return n, nil })
	}
}
