package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/embedded"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
)

var die = framework.Register("embedded_test.die", func(context.Context, int) (int, error) {
	fmt.Fprintln(os.Stderr, "FATAL: the disk is on fire")
	os.Exit(3)
	return 0, nil
})

var square = framework.Register("embedded_test.square", func(_ context.Context, n int) (int, error) { return n * n, nil })

// tempContext is a Context on the embedded master with its work directory
// in the default place: a fresh directory under TMPDIR, set to tmp.
func tempContext(t *testing.T, tmp string, conf ...string) (*framework.Context, *syncBuf) {
	t.Setenv("TMPDIR", tmp)
	cfg, err := config.Load(config.LoadOptions{Conf: append([]string{
		"flint.master=embedded", "flint.ui.showConsoleProgress=false", "flint.executor.memory=64m",
		"flint.network.timeout=10s", "flint.executor.heartbeatInterval=500ms", "flint.embedded.agents=1",
	}, conf...)})
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuf{}
	log := logrus.New()
	log.SetOutput(buf)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", buf.String())
		}
	})
	return fc, buf
}

func workDirs(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, embedded.TempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFailedExecutorsSandboxesAreKept(t *testing.T) {
	tmp := t.TempDir()
	fc, logs := tempContext(t, tmp, "flint.task.maxFailures=1")
	if _, err := framework.Map(context.Background(), fc, die, []int{1}); !errors.Is(err, framework.ErrJobAborted) {
		t.Fatalf("Map = %v, want the job aborted", err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	dirs := workDirs(t, tmp)
	if len(dirs) != 1 {
		t.Fatalf("work dirs after Stop: %v, want the one kept", dirs)
	}
	if !strings.Contains(logs.String(), "embedded: kept the sandboxes of the failed executors and tasks in "+dirs[0]+" ") {
		t.Errorf("Stop does not say where it kept the sandboxes:\n%s", logs.String())
	}
	stderrs, _ := filepath.Glob(filepath.Join(dirs[0], "*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "latest", "stderr"))
	found := false
	for _, f := range stderrs {
		b, _ := os.ReadFile(f)
		found = found || strings.Contains(string(b), "FATAL: the disk is on fire")
	}
	if !found {
		t.Errorf("no kept stderr holds the executor's last words (%d stderr files)", len(stderrs))
	}
	if _, err := os.Stat(filepath.Join(dirs[0], embedded.KeptFile)); err != nil {
		t.Errorf("the kept dir is not marked: %v", err)
	}
	// The driver is gone (here: still this process, so GC must leave it).
	if removed, err := embedded.GC(tmp, true); err != nil || len(removed) != 0 {
		t.Errorf("GC removed a live driver's dir: %v, %v", removed, err)
	}
}

func TestSuccessfulRunLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	fc, _ := tempContext(t, tmp)
	if out, err := framework.Map(context.Background(), fc, square, []int{1, 2, 3}); err != nil || !slices.Equal(out, []int{1, 4, 9}) {
		t.Fatalf("Map = %v, %v", out, err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dirs := workDirs(t, tmp); len(dirs) != 0 {
		t.Errorf("left behind: %v", dirs)
	}
}

// owned makes an embedded work dir whose owner file names pid and start.
func owned(t *testing.T, tmp, name, owner string, kept bool) string {
	t.Helper()
	dir := filepath.Join(tmp, embedded.TempPrefix+name)
	if err := os.MkdirAll(filepath.Join(dir, "agent-0", "slaves"), 0o755); err != nil {
		t.Fatal(err)
	}
	if owner != "" {
		if err := os.WriteFile(filepath.Join(dir, "OWNER"), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if kept {
		if err := os.WriteFile(filepath.Join(dir, embedded.KeptFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGCRemovesTheDirsOfDriversThatDied(t *testing.T) {
	tmp := t.TempDir()
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("%d 1\n", child.Process.Pid) // exited: its pid names no process (or another one)
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
	alive := fmt.Sprintf("%d %s\n", os.Getpid(), f[19])

	deadDir := owned(t, tmp, "dead", dead, false)
	keptDir := owned(t, tmp, "kept", dead, true)
	aliveDir := owned(t, tmp, "alive", alive, false)
	unowned := owned(t, tmp, "unowned", "", false)

	removed, err := embedded.GC(tmp, false)
	if err != nil || !slices.Equal(removed, []string{deadDir}) {
		t.Fatalf("GC(kept=false) removed %v, %v; want only %s", removed, err, deadDir)
	}
	removed, err = embedded.GC(tmp, true)
	if err != nil || !slices.Equal(removed, []string{keptDir}) {
		t.Fatalf("GC(kept=true) removed %v, %v; want %s", removed, err, keptDir)
	}
	for _, d := range []string{aliveDir, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

// The next driver removes what a killed one left (not what was kept).
func TestNextRunRemovesADeadDriversSandboxes(t *testing.T) {
	tmp := t.TempDir()
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir := owned(t, tmp, "dead", fmt.Sprintf("%d 1\n", child.Process.Pid), false)
	keptDir := owned(t, tmp, "kept", fmt.Sprintf("%d 1\n", child.Process.Pid), true)
	fc, _ := tempContext(t, tmp)
	if _, err := framework.Map(context.Background(), fc, square, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dirs := workDirs(t, tmp); !slices.Equal(dirs, []string{keptDir}) {
		t.Errorf("after the next run: %v; want only the kept %s (and not %s)", dirs, keptDir, deadDir)
	}
}
