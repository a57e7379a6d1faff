package containerizer

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/clock"
)

// ErrLaunch: the process could not be started.
var ErrLaunch = errors.New("containerizer: launch failed")

// Spec describes one process to start in a sandbox.
type Spec struct {
	// Command gives value, shell and arguments (environment and user are
	// resolved by the caller into Env and User).
	Command mesos.CommandInfo
	// Sandbox is the working directory; stdout and stderr are created in it.
	Sandbox string
	// Env is the complete environment ("K=V").
	Env []string
	// User runs the process as this user (empty: the agent's user).
	User string
	// Container carries the launch's volumes: SECRET ones become files in
	// the sandbox (see resolveSecrets).
	Container *mesos.ContainerInfo
	// Secrets resolves the launch's secrets (nil: DefaultSecretResolver).
	Secrets SecretResolver
	// Clock times Kill's grace period (nil: the wall clock).
	Clock clock.Clock
}

// Status is how a process ended.
type Status struct {
	// Exited: normal exit with Code. Otherwise, if Signal != 0, killed by Signal.
	Exited bool
	Code   int
	Signal syscall.Signal
	// Unknown: the process was adopted after an agent restart and its wait
	// status could not be collected.
	Unknown bool
}

// Success reports a normal exit with code 0.
func (s Status) Success() bool { return s.Exited && s.Code == 0 }

// WaitStatus is the status Mesos reports for an executor's exit (the
// agent's ExitedExecutorMessage, the scheduler's FAILURE event): the raw
// wait(2) status, which Mesos' agent words with WSTRINGIFY — the exit code
// shifted left by 8, or the signal number.
func (s Status) WaitStatus() int32 {
	switch {
	case s.Exited:
		return int32(s.Code&0xff) << 8
	case s.Signal != 0:
		return int32(s.Signal) & 0x7f
	}
	return -1
}

// String words the status like Mesos' WSTRINGIFY: "exited with status 3",
// "terminated with signal Killed".
func (s Status) String() string {
	switch {
	case s.Exited:
		return "exited with status " + strconv.Itoa(s.Code)
	case s.Signal != 0:
		name := s.Signal.String()
		if name != "" {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		return "terminated with signal " + name
	}
	return "terminated with unknown status"
}

// Process is a started (or adopted) process leading its own process group.
type Process struct {
	pid       int
	startTime uint64
	done      chan struct{}
	status    Status

	clk      clock.Clock
	mu       sync.Mutex
	termed   bool
	released chan struct{}
	// signal, if set, delivers signals instead of the process group (a
	// Docker container: through the Engine API).
	signal func(syscall.Signal)
}

// Release stops watching an adopted process without killing it (the agent
// is shutting down and leaves it for the next agent). No-op for launched
// processes.
func (p *Process) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released != nil {
		select {
		case <-p.released:
		default:
			close(p.released)
		}
	}
}

// Pid is the process id (also its process group id).
func (p *Process) Pid() int { return p.pid }

// StartTime is the process start time from /proc (0 if unknown), used to
// recognise the same process after an agent restart.
func (p *Process) StartTime() uint64 { return p.startTime }

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Status is valid once Done is closed.
func (p *Process) Status() Status {
	<-p.done
	return p.status
}

// argv resolves the command: shell=true (the default) runs sh -c value and
// ignores arguments; shell=false execs value with arguments as argv.
func argv(c mesos.CommandInfo, env []string) (string, []string, error) {
	value := c.GetValue()
	if c.Shell == nil || *c.Shell {
		if value == "" {
			return "", nil, fmt.Errorf("%w: shell command has no value", ErrLaunch)
		}
		return "/bin/sh", []string{"sh", "-c", value}, nil
	}
	if value == "" {
		return "", nil, fmt.Errorf("%w: command has no value", ErrLaunch)
	}
	args := c.Arguments
	if len(args) == 0 {
		args = []string{value}
	}
	path := value
	if !strings.Contains(value, "/") {
		found, err := lookPath(value, env)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %v", ErrLaunch, err)
		}
		path = found
	}
	return path, args, nil
}

// lookPath searches the PATH of env (execvpe semantics).
func lookPath(file string, env []string) (string, error) {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		dir = cmp.Or(dir, ".")
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in PATH", file)
}

// Launch starts spec's process in its own process group, with stdout and
// stderr appended to files in the sandbox.
func Launch(spec Spec) (*Process, error) {
	cred, err := credential(spec.User)
	if err != nil {
		return nil, err
	}
	sec, err := resolveSecrets(spec.Secrets, spec.Command.Environment, spec.Container)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	env := withSecretEnv(spec.Env, sec.env)
	path, args, err := argv(spec.Command, env)
	if err != nil {
		return nil, err
	}
	if err := writeSecretFiles(spec.Sandbox, sec.files); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	stdout, err := os.OpenFile(filepath.Join(spec.Sandbox, "stdout"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(filepath.Join(spec.Sandbox, "stderr"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	defer stderr.Close()
	if cred != nil {
		if err := chownTree(spec.Sandbox, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("%w: chown sandbox to %q: %v", ErrLaunch, spec.User, err)
		}
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        args,
		Env:         env,
		Dir:         spec.Sandbox,
		Stdout:      stdout,
		Stderr:      stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: cred},
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	p := &Process{pid: cmd.Process.Pid, done: make(chan struct{}), clk: spec.Clock}
	p.startTime, _ = ProcStartTime(p.pid)
	go func() {
		_ = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case ws.Exited():
			p.status = Status{Exited: true, Code: ws.ExitStatus()}
		case ws.Signaled():
			p.status = Status{Signal: ws.Signal()}
		default:
			p.status = Status{Unknown: true}
		}
		close(p.done)
	}()
	return p, nil
}

func chownTree(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// Kill stops the process tree: SIGTERM to the process group now (once),
// SIGKILL after grace unless the leader has exited by then. A zero grace
// kills at once. Kill returns immediately.
func (p *Process) Kill(grace time.Duration) {
	p.mu.Lock()
	first := !p.termed
	p.termed = true
	p.mu.Unlock()
	if grace <= 0 {
		p.signalGroup(syscall.SIGKILL)
		return
	}
	if first {
		p.signalGroup(syscall.SIGTERM)
	}
	clk := p.clk
	if clk == nil {
		clk = clock.Real{}
	}
	clk.AfterFunc(grace, func() {
		select {
		case <-p.done: // ended (and reaped: its pid may be another's now)
		default:
			p.signalGroup(syscall.SIGKILL)
		}
	})
}

// Destroy kills whatever is left of the process group with SIGKILL (used
// once the leader has exited, so no straggler outlives its container).
func (p *Process) Destroy() { p.signalGroup(syscall.SIGKILL) }

func (p *Process) signalGroup(sig syscall.Signal) {
	if p.signal != nil {
		select {
		case <-p.done:
		default:
			p.signal(sig)
		}
		return
	}
	_ = syscall.Kill(-p.pid, sig)
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(p.pid, sig) // in case it left its group
	}
}

// ProcStartTime reads a process's start time (clock ticks since boot) from
// /proc/<pid>/stat.
func ProcStartTime(pid int) (uint64, error) {
	st, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	if len(st.fields) < 20 {
		return 0, fmt.Errorf("containerizer: short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(st.fields[19], 10, 64)
}

type stat struct {
	state  string
	fields []string // fields after the command name, starting with state
}

func procStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("containerizer: bad /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) == 0 {
		return stat{}, fmt.Errorf("containerizer: bad /proc/%d/stat", pid)
	}
	return stat{state: f[0], fields: f}, nil
}

// alive reports whether pid runs and is the same process (start time).
func alive(pid int, startTime uint64) bool {
	st, err := procStat(pid)
	if err != nil || st.state == "Z" || st.state == "X" {
		return false
	}
	if startTime != 0 && len(st.fields) >= 20 && st.fields[19] != strconv.FormatUint(startTime, 10) {
		return false
	}
	return true
}

// Adopt attaches to a process started by an earlier agent (after a
// restart). It returns an error if the process no longer runs. Its end is
// detected by polling every interval; its Status is Unknown.
func Adopt(pid int, startTime uint64, interval time.Duration) (*Process, error) {
	if pid <= 0 || !alive(pid, startTime) {
		return nil, fmt.Errorf("containerizer: process %d is gone", pid)
	}
	p := &Process{pid: pid, startTime: startTime, done: make(chan struct{}), status: Status{Unknown: true}, released: make(chan struct{})}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.released:
				return
			case <-t.C:
			}
			if !alive(pid, startTime) {
				close(p.done)
				return
			}
		}
	}()
	return p, nil
}
