package runcases_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
)

// diskFullEvents records executors added and task ends.
type diskFullEvents struct {
	mu    sync.Mutex
	hosts map[string]string // executor → host
	two   chan struct{}
	ends  []event.TaskEnd
}

func (d *diskFullEvents) OnEvent(e event.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch e := e.(type) {
	case event.ExecutorAdded:
		d.hosts[e.ExecutorID] = e.Host
		if len(d.hosts) == 2 {
			close(d.two)
		}
	case event.TaskEnd:
		d.ends = append(d.ends, e)
	}
}

var spreadKeysJob = dataset.JobResult("runcases.disk-full-shuffle", func(b *dataset.Builder, n int) (int64, error) {
	recs := dataset.Map(dataset.Range(b, 0, int64(n), 8), func(i int64) dataset.KV[string, int64] {
		sum := sha256.Sum256([]byte(fmt.Sprint(i)))
		return dataset.KV[string, int64]{Key: hex.EncodeToString(sum[:]), Value: 1}
	})
	return dataset.Count(dataset.ReduceByKey(recs, func(x, y int64) int64 { return x + y }, 4))
})

// Issue 23, item 9, on a cluster: the embedded master's first agent
// works on a real tmpfs, made full once its executor runs (remounted at
// the size it uses). A shuffle job's map tasks that land there fail with
// DiskFull — one message naming the file once — and are retried on the
// other executor only, so the job gets the right answer; no task is
// tried twice on the full executor.
func TestDiskFullRetriesOnAnotherExecutorOnly(t *testing.T) {
	work := t.TempDir()
	full := filepath.Join(work, "agent-0")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", full, "tmpfs", 0, "size=1g"); err != nil {
		t.Fatalf("mount a tmpfs on %s (this test needs root to fill a real file system): %v", full, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(full, 0); err != nil {
			out, _ := exec.Command("umount", "-l", full).CombinedOutput()
			t.Errorf("unmount %s: %v %s", full, err, out)
		}
	})
	ev := &diskFullEvents{hosts: map[string]string{}, two: make(chan struct{})}
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "embedded", "flint.embedded.agents": "2", "flint.embedded.workDir": work,
		"flint.executor.memory": "64m", "flint.mesos.executor.memoryOverhead": "32m", "flint.locality.wait": "0s",
		"flint.ui.enabled": "false", "flint.ui.showConsoleProgress": "false", "flint.task.maxFailures": "4"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(ev))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	select {
	case <-ev.two:
	case <-t.Context().Done():
		t.Fatal("the two executors never registered")
	}
	// full: the tmpfs shrunk to what it holds (the executor's binary and
	// sandbox), rounded up to a page
	var st syscall.Statfs_t
	if err := syscall.Statfs(full, &st); err != nil {
		t.Fatal(err)
	}
	used := (int64(st.Blocks) - int64(st.Bfree)) * st.Bsize
	if err := syscall.Mount("tmpfs", full, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", used+4096)); err != nil {
		t.Fatalf("shrink the tmpfs to %d bytes: %v", used, err)
	}

	const n = 40_000
	got, err := spreadKeysJob.Run(t.Context(), fc, n)
	if err != nil {
		t.Fatalf("the job failed with one executor's disk full and the other's free: %v", err)
	}
	if got != n {
		t.Fatalf("counted %d distinct keys, want %d", got, n)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	fullExec := ""
	tries := map[[2]int]map[string]int{} // (stage, index) → executor → attempts
	for _, e := range ev.ends {
		k := [2]int{e.StageID, e.Index}
		if tries[k] == nil {
			tries[k] = map[string]int{}
		}
		tries[k][e.ExecutorID]++
		if e.State != "FAILED" {
			continue
		}
		if !strings.Contains(e.Reason, "the file system is full") || strings.Count(e.Reason, full) != 1 {
			t.Errorf("task %d (stage %d) failed with %q; want the full file system, naming its file under %s once", e.Index, e.StageID, e.Reason, full)
		}
		if fullExec != "" && e.ExecutorID != fullExec {
			t.Errorf("tasks failed on executors %s and %s; only one disk is full", fullExec, e.ExecutorID)
		}
		fullExec = e.ExecutorID
	}
	if fullExec == "" {
		t.Fatal("no task failed: no task wrote to the full disk (both executors should have run map tasks)")
	}
	for k, byExec := range tries {
		if byExec[fullExec] > 1 {
			t.Errorf("task %d of stage %d ran %d times on the full executor %s", k[1], k[0], byExec[fullExec], fullExec)
		}
	}
	t.Logf("executor %s (host %s) has the full disk; task ends: %d", fullExec, ev.hosts[fullExec], len(ev.ends))
}
