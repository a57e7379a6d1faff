package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// startLocal starts `flint mesos local` on addr with TMPDIR=tmp and waits
// for its agents; it returns the process and the agents' ids.
func startLocal(t *testing.T, addr, tmp string, extra ...string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(flintBin, append([]string{"mesos", "local", "--listen", addr, "--log-level", "warn"}, extra...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var ids []string
	ok := waitfor.Poll(20*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st struct {
			Slaves []struct {
				ID string `json:"id"`
			} `json:"slaves"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		ids = ids[:0]
		for _, s := range st.Slaves {
			ids = append(ids, s.ID)
		}
		return len(ids) == 2 // the embedded master's default agent count
	})
	if !ok {
		t.Fatalf("flint mesos local on %s: agents %v, want 2\nstderr:\n%s", addr, ids, errOut.String())
	}
	return cmd, ids
}

// TestMesosLocalInstancesAreSeparateAndStopCleanly: two instances get
// their own work directories and agent ids; SIGTERM (what `kill %1` sends)
// stops one with exit 0, frees its port and removes its work directory.
func TestMesosLocalInstancesAreSeparateAndStopCleanly(t *testing.T) {
	tmp := t.TempDir()
	a1, a2 := freePort(t), freePort(t)
	c1, ids1 := startLocal(t, a1, tmp)
	_, ids2 := startLocal(t, a2, tmp)
	for _, id := range ids1 {
		for _, other := range ids2 {
			if id == other {
				t.Fatalf("both instances have agent %s", id)
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "flint-mesos-local-*"))
	if len(dirs) != 2 {
		t.Fatalf("work dirs %v, want one per instance", dirs)
	}
	if err := c1.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c1.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
	l, err := net.Listen("tcp", a1)
	if err != nil {
		t.Fatalf("port %s still held after SIGTERM: %v", a1, err)
	}
	l.Close()
	if left, _ := filepath.Glob(filepath.Join(tmp, "flint-mesos-local-*")); len(left) != 1 {
		t.Errorf("work dirs after one instance stopped: %v, want the other's only", left)
	}
}

// The README starts `flint mesos local` from a built binary: `go run`
// would leave the real master holding the port when killed.
func TestReadmeRunsMesosLocalFromABuiltBinary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if strings.Contains(readme, "go run ./cmd/flint mesos local") {
		t.Error("README runs `go run ./cmd/flint mesos local`, which `kill %1` does not stop")
	}
	for _, want := range []string{"go build -o flint ./cmd/flint", "./flint mesos local", "## Troubleshooting", "go mod edit -replace github.com/flint-mesos/flint=", "-buildvcs"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
}

// TestMesosLocalCollectsFinishedSandboxes: with --gc-delay, the sandboxes
// of a finished job's executors are removed that long after they ended.
func TestMesosLocalCollectsFinishedSandboxes(t *testing.T) {
	addr, work := freePort(t), t.TempDir()
	cmd := exec.Command(flintBin, "mesos", "local", "--listen", addr, "--work-dir", work, "--gc-delay", "5s", "--log-level", "warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	waitfor.True(t, 20*time.Second, "the master", func() bool {
		resp, err := http.Get("http://" + addr + "/state")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	out, errOut, code := runFlint(t, "submit", "--example", "pi", "--master", "mesos://"+addr, "10", "1000")
	if code != 0 || !strings.HasPrefix(out, "Pi is roughly") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	sandboxes := func() []string {
		m, _ := filepath.Glob(filepath.Join(work, "*", "slaves", "*", "frameworks", "*", "executors", "*"))
		return m
	}
	if len(sandboxes()) == 0 {
		t.Fatal("no executor sandbox right after the job (the check below would prove nothing)")
	}
	if !waitfor.Poll(30*time.Second, func() bool { return len(sandboxes()) == 0 }) {
		t.Fatalf("sandboxes left after --gc-delay 5s: %v", sandboxes())
	}
}

// TestMesosLocalRegistersInZooKeeper: `flint mesos local --zk` takes part
// in Mesos' leader election in ZooKeeper (the json.info_ znodes Mesos
// writes), so a driver finds it through mesos://zk://… as it finds a
// ZooKeeper-backed Mesos master, and runs its job there.
func TestMesosLocalRegistersInZooKeeper(t *testing.T) {
	zk := zktest.Start(t)
	addr := freePort(t)
	local, _ := startLocal(t, addr, t.TempDir(), "--zk", "zk://"+zk+"/mesos", "--zk-session-timeout", "3s")
	out, errOut, code := runFlint(t, "submit", "--example", "pi", "--master", "mesos://zk://"+zk+"/mesos", "4", "1000")
	if code != 0 || !strings.Contains(out, "Pi is roughly 3.") {
		t.Fatalf("pi through ZooKeeper: exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	for _, want := range []string{"detector: leading Mesos master is localhost:" + port + " (", "registered with the Mesos master at localhost:" + port + " as framework "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the driver's log lacks %q:\n%s", want, errOut)
		}
	}
	if err := local.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := local.Wait(); err != nil {
		t.Errorf("flint mesos local --zk after SIGTERM: %v", err)
	}
}

func TestMesosLocalRefusesABadZKURL(t *testing.T) {
	_, errOut, code := runFlint(t, "mesos", "local", "--zk", "http://127.0.0.1:2181/mesos")
	want := "flint: --zk \"http://127.0.0.1:2181/mesos\": want zk://host:port[,host:port…]/path, e.g. zk://127.0.0.1:2181/mesos\nRun 'flint mesos local --help' for usage.\n"
	if code != 2 || errOut != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant 2 and:\n%s", code, errOut, want)
	}
}

// `mesos local` allocates for a laptop (every 50ms, freed resources at
// once) and says why and how to allocate as Apache Mesos does; `mesos
// master`, the stand-in for a cluster's master, keeps Mesos' 1s batches
// (issue 23, item 8).
func TestMesosLocalAllocatesForALaptopAndMasterAsMesos(t *testing.T) {
	addr := freePort(t)
	startLocal(t, addr, t.TempDir())
	resp, err := http.Get("http://" + addr + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Flags map[string]string `json:"flags"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if got := st.Flags["allocation_interval"]; got != "50ms" {
		t.Errorf("mesos local allocates every %q, want 50ms", got)
	}
	help, _, _ := runFlint(t, "mesos", "local", "--help")
	for _, want := range []string{"--allocation-interval duration", "(default 50ms)", "--allocate-on-release", "(default true)",
		"14x slower than coarse", "--allocate-on-release=false --allocation-interval=1s"} {
		if !strings.Contains(help, want) {
			t.Errorf("mesos local --help lacks %q:\n%s", want, help)
		}
	}
	help, _, _ = runFlint(t, "mesos", "master", "--help")
	if !strings.Contains(help, "--allocation-interval duration") || !strings.Contains(help, "(default 1s)") || strings.Contains(help, "(default true)") {
		t.Errorf("mesos master should allocate as Apache Mesos by default:\n%s", help)
	}
}
