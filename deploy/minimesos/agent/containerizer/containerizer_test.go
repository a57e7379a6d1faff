package containerizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mesostime "github.com/mesos/mesos-go/api/v1/lib/time"

	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Second:         "5secs",
		15 * time.Minute:        "15mins",
		2 * time.Second:         "2secs",
		1500 * time.Millisecond: "1.5secs",
		100 * time.Millisecond:  "100ms",
		2 * time.Hour:           "2hrs",
		0:                       "0ns",
	} {
		got := FormatDuration(d)
		if got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		back, err := mesostime.ParseDuration(got)
		if err != nil || back != d {
			t.Errorf("mesos-go parses %q as %v, %v; want %v", got, back, err, d)
		}
	}
}

func TestExecutorEnvAndOverrides(t *testing.T) {
	e := ExecutorEnv{FrameworkID: "fw", ExecutorID: "ex", AgentID: "S1", Sandbox: "/sb", AgentEndpoint: "127.0.0.1:5051",
		ShutdownGrace: 5 * time.Second, Checkpoint: true, RecoveryTimeout: 15 * time.Minute, SubscriptionBackoffMax: 2 * time.Second}
	v := e.Vars()
	want := map[string]string{"MESOS_FRAMEWORK_ID": "fw", "MESOS_EXECUTOR_ID": "ex", "MESOS_DIRECTORY": "/sb", "MESOS_SANDBOX": "/sb",
		"MESOS_AGENT_ENDPOINT": "127.0.0.1:5051", "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": "5secs", "MESOS_SLAVE_ID": "S1",
		"MESOS_SLAVE_PID": "slave(1)@127.0.0.1:5051", "MESOS_CHECKPOINT": "1", "MESOS_RECOVERY_TIMEOUT": "15mins",
		"MESOS_SUBSCRIPTION_BACKOFF_MAX": "2secs", "MESOS_HTTP_COMMAND_EXECUTOR": "0"}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	e.Checkpoint = false
	if _, ok := e.Vars()["MESOS_RECOVERY_TIMEOUT"]; ok {
		t.Error("MESOS_RECOVERY_TIMEOUT set without checkpointing")
	}
	val := func(s string) *string { return &s }
	env := BuildEnv([]string{"PATH=/bin", "MESOS_SANDBOX=old", "X=base"}, v, &mesos.Environment{Variables: []mesos.Environment_Variable{
		{Name: "X", Value: val("cmd")}, {Name: "MESOS_SANDBOX", Value: val("mine")},
	}})
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	if got["X"] != "cmd" || got["MESOS_SANDBOX"] != "mine" || got["PATH"] != "/bin" || got["MESOS_FRAMEWORK_ID"] != "fw" {
		t.Errorf("BuildEnv order wrong: %v", got)
	}
}

func TestSandboxLayout(t *testing.T) {
	wd := t.TempDir()
	dir, err := CreateSandbox(wd, "S1", "fw", "ex", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "slaves/S1/frameworks/fw/executors/ex/runs/c1"); dir != want {
		t.Fatalf("sandbox %s, want %s", dir, want)
	}
	if l, err := os.Readlink(filepath.Join(filepath.Dir(dir), "latest")); err != nil || l != "c1" {
		t.Fatalf("latest -> %q, %v", l, err)
	}
	for _, bad := range []string{"", "..", "a/b", "x\x00"} {
		if _, err := CreateSandbox(wd, "S1", "fw", bad, "c"); !errors.Is(err, ErrBadID) {
			t.Errorf("executor id %q: err %v, want ErrBadID", bad, err)
		}
	}
}

func run(t *testing.T, c mesos.CommandInfo, user string) (*Process, string) {
	t.Helper()
	return runSpec(t, Spec{Command: c, User: user})
}

// runSpec launches spec in a new sandbox (its Sandbox and Env set here).
func runSpec(t *testing.T, spec Spec) (*Process, string) {
	t.Helper()
	dir, err := CreateSandbox(t.TempDir(), "S", "f", "e", "c")
	if err != nil {
		t.Fatal(err)
	}
	spec.Sandbox, spec.Env = dir, BuildEnv(os.Environ(), map[string]string{"MESOS_SANDBOX": dir}, nil)
	p, err := Launch(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(0); <-p.Done() })
	return p, dir
}

func wait(t *testing.T, p *Process, d time.Duration) Status {
	t.Helper()
	select {
	case <-p.Done():
		return p.Status()
	case <-time.After(d):
		t.Fatalf("process %d did not end within %v", p.Pid(), d)
	}
	return Status{}
}

func sh(cmd string) mesos.CommandInfo { return mesos.CommandInfo{Value: &cmd} }

func TestShellSemantics(t *testing.T) {
	p, dir := run(t, mesos.CommandInfo{Value: strPtr("echo out $MESOS_SANDBOX; echo err >&2; pwd"), Arguments: []string{"ignored"}}, "")
	if st := wait(t, p, 10*time.Second); !st.Success() {
		t.Fatalf("status %v", st)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "stdout"))
	errb, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	if string(out) != "out "+dir+"\n"+dir+"\n" || string(errb) != "err\n" {
		t.Fatalf("stdout %q stderr %q", out, errb)
	}

	no := false
	p, dir = run(t, mesos.CommandInfo{Shell: &no, Value: strPtr("echo"), Arguments: []string{"argv0", "a b", "$HOME"}}, "")
	wait(t, p, 10*time.Second)
	out, _ = os.ReadFile(filepath.Join(dir, "stdout"))
	if string(out) != "a b $HOME\n" {
		t.Fatalf("shell=false stdout %q", out)
	}
}

func strPtr(s string) *string { return &s }

func TestExitCodesAndSignals(t *testing.T) {
	p, _ := run(t, sh("exit 3"), "")
	if st := wait(t, p, 10*time.Second); !st.Exited || st.Code != 3 || st.String() != "exited with status 3" || st.WaitStatus() != 3<<8 {
		t.Fatalf("exit 3: %+v %q", st, st)
	}
	p, _ = run(t, sh("kill -KILL $$"), "")
	if st := wait(t, p, 10*time.Second); st.Signal != syscall.SIGKILL || st.String() != "terminated with signal Killed" || st.WaitStatus() != 9 {
		t.Fatalf("kill: %+v %q", st, st)
	}
}

func TestMissingCommand(t *testing.T) {
	no := false
	dir, _ := CreateSandbox(t.TempDir(), "S", "f", "e", "c")
	_, err := Launch(Spec{Command: mesos.CommandInfo{Shell: &no, Value: strPtr("no-such-command-xyz")}, Sandbox: dir, Env: os.Environ()})
	if !errors.Is(err, ErrLaunch) {
		t.Fatalf("err %v, want ErrLaunch", err)
	}
	p, _ := run(t, sh("no-such-command-xyz"), "")
	if st := wait(t, p, 10*time.Second); st.Code != 127 {
		t.Fatalf("shell missing command: %v", st)
	}
}

// A tree that ignores SIGTERM is killed with SIGKILL after the grace
// period, children included.
// A tree that ignores SIGTERM is killed with SIGKILL once the grace period
// has passed on the process's clock, children included — and not before:
// it still writes ticks after SIGTERM, and after all but the last
// millisecond of the grace.
func TestKillTreeIgnoringSIGTERM(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	p, dir := runSpec(t, Spec{Command: sh("trap '' TERM; sleep 300 & echo $! > child; echo ready > ready; " +
		"while :; do echo tick >> ticks; sleep 0.02; done"), Clock: clk})
	waitFile(t, filepath.Join(dir, "ready"))
	b, _ := os.ReadFile(filepath.Join(dir, "child"))
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	ticks := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "ticks"))
		return strings.Count(string(b), "tick\n")
	}
	ticking := func(when string) {
		t.Helper()
		n := ticks()
		waitfor.True(t, 10*time.Second, "a tick "+when, func() bool { return ticks() > n })
	}
	const grace = 300 * time.Millisecond
	p.Kill(grace)
	if !clk.HasPending(grace) {
		t.Fatalf("no SIGKILL armed %v after SIGTERM: %v", grace, clk.Pending())
	}
	ticking("after SIGTERM")
	clk.Advance(grace - time.Millisecond)
	ticking("a millisecond before the grace ends")
	clk.Advance(time.Millisecond) // SIGKILL, sent before Advance returns
	if st := wait(t, p, 10*time.Second); st.Signal != syscall.SIGKILL {
		t.Fatalf("status %v, want SIGKILL", st)
	}
	waitfor.True(t, 5*time.Second, fmt.Sprintf("child %d to die with its process group", child), func() bool { return !alive(child, 0) })
}

func TestKillGraceful(t *testing.T) {
	p, dir := run(t, sh("trap 'exit 0' TERM; echo ready > ready; while :; do sleep 0.05; done"), "")
	waitFile(t, filepath.Join(dir, "ready"))
	p.Kill(10 * time.Second)
	if st := wait(t, p, 5*time.Second); !st.Success() {
		t.Fatalf("status %v", st)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	waitfor.True(t, 10*time.Second, path+" to appear", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

func TestRunAsUser(t *testing.T) {
	dir, _ := CreateSandbox(t.TempDir(), "S", "f", "e", "c")
	_, err := Launch(Spec{Command: sh("true"), Sandbox: dir, Env: os.Environ(), User: "no-such-user-xyz"})
	if !errors.Is(err, ErrUser) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("unknown user: %v", err)
	}
	if os.Geteuid() != 0 {
		_, err := Launch(Spec{Command: sh("true"), Sandbox: dir, Env: os.Environ(), User: "root"})
		if !errors.Is(err, ErrUser) {
			t.Fatalf("non-root switching to root: %v", err)
		}
		return
	}
	wd := t.TempDir()
	// t.TempDir's directories are 0700; let nobody traverse them.
	for _, d := range []string{filepath.Dir(wd), wd} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb, _ := CreateSandbox(wd, "S", "f", "e", "c")
	p, err := Launch(Spec{Command: sh("id -u > uid"), Sandbox: sb, Env: os.Environ(), User: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, p, 10*time.Second); !st.Success() {
		t.Fatalf("status %v", st)
	}
	b, _ := os.ReadFile(filepath.Join(sb, "uid"))
	if strings.TrimSpace(string(b)) != "65534" {
		t.Fatalf("ran as uid %q, want nobody (65534)", b)
	}
}

func TestAdopt(t *testing.T) {
	p, dir := run(t, sh("echo ready > ready; exec sleep 300"), "")
	waitFile(t, filepath.Join(dir, "ready"))
	a, err := Adopt(p.Pid(), p.StartTime(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Adopt(p.Pid(), p.StartTime()+1, time.Millisecond); err == nil {
		t.Fatal("adopted a process with a different start time")
	}
	a.Kill(time.Second)
	wait(t, p, 5*time.Second)
	if st := wait(t, a, 5*time.Second); !st.Unknown {
		t.Fatalf("adopted status %v", st)
	}
}
