package failovercheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/testkit/jobconfcheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// The environment that makes a test binary the first driver (DriverMain).
const (
	envDriver = "FLINT_TEST_FAILOVER_DRIVER" // the master URL
	envMark   = "FLINT_TEST_FAILOVER_MARK"   // the marker its executors carry
)

var blockUntilKilled = framework.Register("failovercheck.blockUntilKilled", func(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
})

// Mode is what a backend's tests give the scenario.
type Mode struct {
	// Conf is the mode's configuration for a driver whose executors carry
	// mark (FLINT_TEST_MARK); the scenario adds flint.master and the
	// failover keys.
	Conf func(mark string) []string
	// Run starts a driver on master with the mode's configuration plus conf
	// (stopped when the test ends) and returns it with its log.
	Run func(t *testing.T, master string, conf ...string) (*framework.Context, *mesostest.LogBuffer)
	// Role is the mode's executor role (FLINT_ROLE, proto/contract).
	Role string
	// TaggedExecutors: the mode's Mesos executor ids carry the driver's tag
	// too (fine: one custom executor per agent); otherwise only task ids.
	TaggedExecutors bool
}

// MaybeDriverMain makes the process the first driver when the scenario
// started it; call it first in TestMain. It returns only in other processes.
func MaybeDriverMain(m Mode) {
	if os.Getenv(envDriver) != "" {
		os.Exit(driverMain(m))
	}
}

// driverMain is a driver that keeps its framework for a successor
// (flint.mesos.failoverTimeout=60s) and runs two tasks that never end,
// until the test kills the process.
func driverMain(m Mode) int {
	conf := append(m.Conf(os.Getenv(envMark)), "flint.master="+os.Getenv(envDriver), "flint.mesos.failoverTimeout=60s")
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fc, err := framework.NewContext(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = framework.Map(context.Background(), fc, blockUntilKilled, mesostest.Ints(2))
	fmt.Fprintln(os.Stderr, "the blocking job ended:", err)
	return 1
}

// taggedTask is a successor's Mesos task id: its driver's tag
// (mesosbackend.TaskIDPrefix) and a counter.
var taggedTask = regexp.MustCompile(`^[0-9a-f]{8}-[0-9]+$`)

// CheckTakeover runs the process-kill scenario on the cluster at stateURL
// (whose master is at master): a driver process killed while its tasks run
// is replaced by one started with flint.mesos.driver.frameworkId. The
// successor re-registers as the same framework, runs a job at once under
// tagged ids — so neither the dead driver's live tasks ("Task has duplicate
// ID") nor its executors still shutting down ("ExecutorInfo is not
// compatible") hold its launches up — and kills the dead driver's tasks and
// executors once reconciliation reports them.
func CheckTakeover(t *testing.T, stateURL, master string, m Mode) {
	oldMark := mesostest.NewMark()
	kill := startFirstDriver(t, master, oldMark)
	mesostest.WaitFor(t, 60*time.Second, "the first driver's tasks to run", func() bool {
		st := readState(t, stateURL)
		return len(st.Frameworks) == 1 && slices.ContainsFunc(st.Frameworks[0].Tasks, func(tk Task) bool { return tk.State == "TASK_RUNNING" })
	})
	oldExecutors := func() []mesostest.Proc {
		return mesostest.Procs(func(env map[string]string) bool {
			return env["FLINT_TEST_MARK"] == oldMark && env[contract.EnvRole] == m.Role
		})
	}
	if len(oldExecutors()) == 0 {
		t.Fatal("no executor process of the first driver found")
	}
	kill()
	mesostest.WaitFor(t, 30*time.Second, "the master to see the first driver gone", func() bool {
		st := readState(t, stateURL)
		return len(st.Frameworks) == 1 && !st.Frameworks[0].Active
	})
	// what the dead driver left: it can launch nothing more
	fw := readState(t, stateURL).Frameworks[0]
	fwID, live := fw.ID, ids(fw.Tasks)
	oldTasks, oldExecs := ids(append(fw.Tasks, fw.CompletedTasks...)), executorIDs(append(fw.Tasks, fw.CompletedTasks...))

	fc, logs := m.Run(t, master, "flint.mesos.driver.frameworkId="+fwID, "flint.mesos.failoverTimeout=60s")
	if st := readState(t, stateURL); len(st.Frameworks) != 1 || st.Frameworks[0].ID != fwID || !st.Frameworks[0].Active {
		t.Fatalf("after failover the master has %+v, want framework %s active and no other", st.Frameworks, fwID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if got, err := framework.Map(ctx, fc, jobconfcheck.Read, mesostest.Ints(4)); err != nil || len(got) != 4 {
		t.Fatalf("a job right after the failover: %v, %v\ndriver log:\n%s", got, err, logs.String())
	}
	// The dead driver's live tasks all end. Those that ran are the
	// successor's to kill; one that never ran (its agent was still fetching
	// the executor from the dead driver's file server) fails on its own.
	waitfor.Msg(t, 30*time.Second, func() string {
		fw := readState(t, stateURL).Frameworks[0]
		var left []string
		for _, tk := range append(fw.Tasks, fw.CompletedTasks...) {
			if slices.Contains(live, tk.ID) && tk.State != "TASK_KILLED" && (tk.ran() || !terminalState(tk.State)) {
				left = append(left, fmt.Sprintf("%s %s (updates %v)", tk.ID, tk.State, tk.Statuses))
			}
		}
		if len(left) == 0 {
			return ""
		}
		return fmt.Sprintf("the first driver's live tasks %v to end, killed if they ran; not yet: %v\nsuccessor's log:\n%s", live, left, logs.String())
	})
	mesostest.CheckGone(t, 30*time.Second, oldExecutors, func(p mesostest.Proc) int { return p.PID }, "executor processes of the dead driver")
	fw = readState(t, stateURL).Frameworks[0]
	checkSuccessorsIDs(t, append(fw.Tasks, fw.CompletedTasks...), oldTasks, oldExecs, m.TaggedExecutors)
	for _, bad := range []string{"duplicate ID", "not compatible"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("the successor's log has %q:\n%s", bad, logs.String())
		}
	}
}

// startFirstDriver starts the test binary as the first driver (DriverMain)
// and returns what SIGKILLs it and waits for its end; the test's cleanup
// kills it too and shows its output when the test failed.
func startFirstDriver(t *testing.T, master, mark string) (kill func()) {
	var out mesostest.LogBuffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDriver+"="+master, envMark+"="+mark)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("first driver's output:\n%s", out.String())
		}
	})
	return func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-exited
	}
}

func ids(ts []Task) []string {
	var out []string
	for _, tk := range ts {
		out = append(out, tk.ID)
	}
	return out
}

func executorIDs(ts []Task) []string {
	var out []string
	for _, tk := range ts {
		if tk.ExecutorID != "" {
			out = append(out, tk.ExecutorID)
		}
	}
	return out
}

// checkSuccessorsIDs checks that the successor's tasks (those not the
// predecessor's) have one tag, and with tagged executors run on executors
// carrying it that none of the predecessor's tasks ran on.
func checkSuccessorsIDs(t *testing.T, all []Task, oldTasks, oldExecs []string, taggedExecs bool) {
	t.Helper()
	tags := map[string]bool{}
	n := 0
	for _, tk := range all {
		if slices.Contains(oldTasks, tk.ID) {
			continue
		}
		n++
		if !taggedTask.MatchString(tk.ID) || taggedExecs && (slices.Contains(oldExecs, tk.ExecutorID) || !strings.Contains(tk.ExecutorID, tk.ID[:9])) {
			t.Errorf("successor's task %s on executor %q: want a tagged id (on a tagged executor: %v); the predecessor's tasks %v, executors %v", tk.ID, tk.ExecutorID, taggedExecs, oldTasks, oldExecs)
		}
		tags[tk.ID[:min(9, len(tk.ID))]] = true
	}
	if n == 0 || len(tags) != 1 {
		t.Errorf("%d tasks of the successor with tags %v, want some, all with one tag", n, tags)
	}
}

// CheckStopKeepsFramework: with flint.mesos.driver.failover=true, Stop
// leaves the framework registered (no TEARDOWN) for a successor, which
// takes it over with its id; without it (the successor's Stop) the
// framework is torn down.
func CheckStopKeepsFramework(t *testing.T, stateURL, master string, m Mode) {
	fc, _ := m.Run(t, master, "flint.mesos.driver.failover=true", "flint.mesos.failoverTimeout=60s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, fc, jobconfcheck.Read, mesostest.Ints(2)); err != nil {
		t.Fatal(err)
	}
	st := readState(t, stateURL)
	if len(st.Frameworks) != 1 {
		t.Fatalf("frameworks %+v", st.Frameworks)
	}
	id := st.Frameworks[0].ID
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mesostest.WaitFor(t, 30*time.Second, "the master to see the driver gone", func() bool {
		st := readState(t, stateURL)
		return len(st.Frameworks) == 1 && !st.Frameworks[0].Active
	})
	if st := readState(t, stateURL); len(st.Frameworks) != 1 || st.Frameworks[0].ID != id {
		t.Fatalf("after Stop with flint.mesos.driver.failover the master has %+v, want framework %s kept", st.Frameworks, id)
	}
	fc2, logs2 := m.Run(t, master, "flint.mesos.driver.frameworkId="+id)
	if _, err := framework.Map(ctx, fc2, jobconfcheck.Read, mesostest.Ints(2)); err != nil {
		t.Fatalf("the successor's job: %v\ndriver log:\n%s", err, logs2.String())
	}
	if st := readState(t, stateURL); len(st.Frameworks) != 1 || st.Frameworks[0].ID != id || !st.Frameworks[0].Active {
		t.Fatalf("the successor runs as %+v, want framework %s", st.Frameworks, id)
	}
	if err := fc2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mesostest.WaitFor(t, 30*time.Second, "the framework to be torn down", func() bool { return len(readState(t, stateURL).Frameworks) == 0 })
}

// state is the part of the master's /state the scenario reads.
type state struct {
	Frameworks []struct {
		ID             string
		Active         bool
		Tasks          []Task
		CompletedTasks []Task `json:"completed_tasks"`
	}
}

// Task is a task in the master's /state.
type Task struct {
	ID, State  string
	ExecutorID string `json:"executor_id"`
	Statuses   []struct{ State string }
}

// ran reports whether the task ever reported TASK_RUNNING.
func (tk Task) ran() bool {
	return slices.ContainsFunc(tk.Statuses, func(s struct{ State string }) bool { return s.State == "TASK_RUNNING" })
}

// terminalState reports whether a /state task state is terminal.
func terminalState(s string) bool {
	switch s {
	case "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_DROPPED", "TASK_GONE", "TASK_GONE_BY_OPERATOR":
		return true
	}
	return false
}

func readState(t *testing.T, url string) state {
	t.Helper()
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st state
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}
