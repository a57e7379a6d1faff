package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// mountTmpfs mounts a tmpfs with opts on a new directory and unmounts it
// at cleanup (registered first, so it runs after the agent's cleanup). It
// needs root, as CI has.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Fatalf("mount tmpfs on %s (this test needs root): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

func assertDiskFull(t *testing.T, m *fakeMaster, task, workDir, cause string) {
	t.Helper()
	st := m.waitState(t, task, mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || st.GetSource() != mesos.SOURCE_AGENT ||
		!strings.Contains(st.GetMessage(), cause) || !strings.Contains(st.GetMessage(), "no space left on device") ||
		!strings.Contains(st.GetMessage(), "the agent's work dir "+workDir+" is full") {
		t.Fatalf("%s: %v %v %q", task, st.GetSource(), st.GetReason(), st.GetMessage())
	}
	if got := stateNames(m.states(task)); got != "TASK_FAILED" {
		t.Fatalf("%s: updates %s, want only the agent's TASK_FAILED", task, got)
	}
}

// A full work dir (a real ENOSPC: the agent runs on a 1 MiB tmpfs with few
// inodes) fails the tasks that need space with
// REASON_CONTAINER_LAUNCH_FAILED and a message naming the full disk,
// loses no status update of a checkpointing framework although its
// checkpoints cannot be written, and the agent runs the next task once
// space is back.
func TestFullDisk(t *testing.T) {
	workDir := mountTmpfs(t, "size=1m,nr_inodes=256")
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, workDir))
	fw := fwInfo("ck", true)

	// A task fills the disk itself: its own failure.
	runTask(t, ta, fw, cmdTask("fill", "head -c 2000000 /dev/zero > big"))
	if st := m.waitState(t, "fill", mesos.TASK_FAILED); st.GetMessage() != "Command exited with status 1" {
		t.Fatalf("fill: %q", st.GetMessage())
	}
	sandbox := filepath.Join(workDir, "slaves/S1/frameworks/ck/executors/fill/runs/latest")
	if fi, err := os.Stat(filepath.Join(sandbox, "big")); err != nil || fi.Size() < 512<<10 {
		t.Fatalf("fill left %v, %v", fi, err) // its stderr is on the full disk too
	}

	// Fetching into the full sandbox fails the launch.
	src := filepath.Join(t.TempDir(), "payload.bin")
	if err := os.WriteFile(src, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	fetch := cmdTask("fetch", "true")
	fetch.Command.URIs = []mesos.CommandInfo_URI{{Value: src}}
	runTask(t, ta, fw, fetch)
	assertDiskFull(t, m, "fetch", workDir, src)
	if _, err := os.Stat(filepath.Join(workDir, "slaves/S1/frameworks/ck/executors/fetch/runs/latest/payload.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial download left behind: %v", err)
	}

	// A checkpoint write may be failing right now (status updates are
	// checkpointed concurrently): once it has failed, nothing is left.
	var tmps []string
	if !waitfor.Poll(10*time.Second, func() bool {
		tmps, _ = filepath.Glob(filepath.Join(workDir, "meta/slaves/S1/*.tmp"))
		return len(tmps) == 0
	}) {
		t.Fatalf("failed checkpoint writes left %v", tmps)
	}

	// Space is back; now exhaust inodes: the sandbox cannot be created.
	if err := os.Remove(filepath.Join(sandbox, "big")); err != nil {
		t.Fatal(err)
	}
	// The agent's queued checkpoint changes (the ended executors' records
	// removed) would free inodes after the fill: let them land first.
	ta.ckpt.sync()
	filler := filepath.Join(workDir, "filler")
	if err := os.Mkdir(filler, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(filler, strconv.Itoa(i)))
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil || i > 10000 {
			t.Fatalf("filling inodes: %d files, %v", i, err)
		}
		f.Close()
	}
	runTask(t, ta, fw, cmdTask("nosandbox", "true"))
	assertDiskFull(t, m, "nosandbox", workDir, "Failed to create sandbox")
	runTask(t, ta, fw, executorTask("noexec", "run", executorInfo("noexec")))
	assertDiskFull(t, m, "noexec", workDir, "Failed to create sandbox")

	// With room again the agent works as before, and checkpoints again.
	if err := os.RemoveAll(filler); err != nil {
		t.Fatal(err)
	}
	runTask(t, ta, fw, cmdTask("after", "echo ok"))
	m.waitState(t, "after", mesos.TASK_FINISHED)
	out, err := os.ReadFile(filepath.Join(workDir, "slaves/S1/frameworks/ck/executors/after/runs/latest/stdout"))
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("after: stdout %q, %v", out, err)
	}
	for _, task := range []string{"fill", "fetch", "nosandbox", "noexec", "after"} {
		if sts := m.states(task); !statusupdateTerminal(sts) {
			t.Fatalf("%s: updates %s", task, stateNames(sts))
		}
	}
}

func statusupdateTerminal(sts []mesos.TaskStatus) bool {
	return len(sts) > 0 && (sts[len(sts)-1].GetState() == mesos.TASK_FINISHED || sts[len(sts)-1].GetState() == mesos.TASK_FAILED)
}
