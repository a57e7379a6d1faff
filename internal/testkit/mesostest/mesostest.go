package mesostest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
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
		keepLog(t, "logger", buf.String())
	})
	return log, buf
}

// Cluster says what StartCluster starts.
type Cluster struct {
	Agents        int
	Resources     string        // every agent's resources
	Attributes    string        // every agent's attributes (agent.Config.Attributes syntax)
	ShutdownGrace time.Duration // agent.Config.ShutdownGrace
	Master        func(*master.Config)
	WorkDir       string // the agents' work dirs go below it; default a t.TempDir()
	// ZooKeeper, when set, runs the master in ZooKeeper mode (leader
	// election as a ZooKeeper-backed Mesos master; see cluster.ZooKeeper).
	ZooKeeper *cluster.ZooKeeper
	// SecretResolver is every agent's (agent.Config.SecretResolver).
	SecretResolver containerizer.SecretResolver
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
	if o.WorkDir == "" {
		o.WorkDir = t.TempDir()
	}
	c, err := cluster.Start(context.Background(), cluster.Config{
		Listen: "127.0.0.1:0", Master: mc, Agents: o.Agents, FetchCacheBytes: 1 << 30, ZooKeeper: o.ZooKeeper,
		Agent: agent.Config{WorkDir: o.WorkDir, Resources: o.Resources, Attributes: o.Attributes, ShutdownGrace: o.ShutdownGrace, KillGrace: time.Second, Logger: log,
			SecretResolver: o.SecretResolver},
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("cluster close: %v", err)
		}
		keepSandboxLogs(t, o.WorkDir)
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
	var left []P
	if waitfor.Poll(d, func() bool { left = find(); return len(left) == 0 }) {
		return
	}
	for _, p := range left {
		_ = syscall.Kill(pid(p), syscall.SIGKILL)
	}
	t.Errorf("%s: %+v", msg, left)
}

// WaitFor polls cond until it holds, failing t after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	waitfor.True(t, d, what, cond)
}

// Ints is 0, 1, …, n-1.
func Ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// fetchedURI matches the line an agent's fetcher writes into a sandbox's
// stderr for each URI it fetches (Mesos' and minimesos' alike).
var fetchedURI = regexp.MustCompile(`Fetching URI '([^']*)'`)

// FetchedURIs is every URI the agents below workDir wrote into a
// sandbox's stderr as fetched: what anyone who can read sandboxes sees.
func FetchedURIs(t testing.TB, workDir string) []string {
	t.Helper()
	var out []string
	walkStderr(t, workDir, func(b []byte) {
		for _, m := range fetchedURI.FindAllSubmatch(b, -1) {
			out = append(out, string(m[1]))
		}
	})
	return out
}

// walkStderr calls fn with the contents of every sandbox stderr file below
// workDir. Agents delete the checkpoints of ended frameworks (their meta
// directory) and, later, old sandboxes while the walk runs: what vanished
// meanwhile is skipped, not an error, and meta is not walked at all.
func walkStderr(t testing.TB, workDir string, fn func([]byte)) {
	t.Helper()
	err := filepath.WalkDir(workDir, func(p string, d os.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "meta":
			return filepath.SkipDir
		case d.IsDir() || d.Name() != "stderr":
			return nil
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// CheckCredentialsDead fails t unless workDir's sandboxes name at least
// one fetched URI carrying a token and every one of them stops opening
// its file (HTTP 401) once its executor is up: a credential is revoked when
// its executor registers (or its launch ends), so this waits, up to 30 s
// and far short of a credential's 5-minute lifetime, for executors still
// starting.
func CheckCredentialsDead(t testing.TB, workDir string) {
	t.Helper()
	var live string
	dead := func() bool {
		n := 0
		for _, u := range FetchedURIs(t, workDir) {
			if !strings.Contains(u, "token=") {
				continue
			}
			n++
			resp, err := http.Get(u)
			if err != nil {
				t.Fatalf("GET a fetched URI: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				live = fmt.Sprintf("%s (HTTP %d)", strings.SplitN(u, "?", 2)[0], resp.StatusCode)
				return false
			}
		}
		if n == 0 {
			t.Fatal("no sandbox shows a fetched URI with a credential: nothing was checked")
		}
		return true
	}
	if !waitfor.Poll(30*time.Second, dead) {
		t.Fatalf("a fetch credential found in a sandbox still opens its file %s 30 s after the jobs", live)
	}
}

// SandboxesContaining counts the sandbox stderr files below workDir that
// contain every one of parts.
func SandboxesContaining(t testing.TB, workDir string, parts ...string) int {
	t.Helper()
	n := 0
	walkStderr(t, workDir, func(b []byte) {
		for _, part := range parts {
			if !bytes.Contains(b, []byte(part)) {
				return
			}
		}
		n++
	})
	return n
}

// OSUser creates a system user of its own for the test (the test must run as
// root, as a Mesos agent that switches users does) and deletes it when the
// test ends. It returns the user's name and uid.
func OSUser(t testing.TB) (name string, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("mesostest: creating an OS user needs root (run the tests as root, as an agent that switches users runs)")
	}
	name = "flint-" + NewMark()[:10]
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("mesostest: useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("mesostest: userdel %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, err = strconv.Atoi(u.Uid)
	if err != nil {
		t.Fatal(err)
	}
	return name, uid
}

// SharedWorkDir is a work directory for agents whose executors run as
// another user: like an agent's /var/lib/mesos, every directory above the
// sandboxes can be traversed by that user (t.TempDir's are the owner's only).
func SharedWorkDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
