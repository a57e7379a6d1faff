package dataset_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// mountFullTmpfs mounts a tmpfs of size bytes on a new directory, unmounted
// when the test ends. It needs root (as the tests run here and in CI) and
// fails the test, never skips it, when the mount is impossible: the disk
// full tests must run against a real full file system.
func mountFullTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount a %s tmpfs on %s (the disk-full tests need root to mount a real file system to fill): %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			out, _ := exec.Command("umount", "-l", dir).CombinedOutput()
			t.Errorf("unmount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// hexRecord is record i of the disk-full jobs: 64 hex digits that
// compress badly, so the shuffle and cache files cannot fit 256 KiB.
func hexRecord(i int64) string {
	sum := sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)})
	return hex.EncodeToString(sum[:])
}

type diskFullArgs struct {
	Op  string
	Dir string
}

var diskFullJob = dataset.Job("test.disk-full", func(b *dataset.Builder, a diskFullArgs) error {
	recs := dataset.Map(dataset.Range(b, 0, 40_000, 4), hexRecord)
	switch a.Op {
	case "shuffle":
		kv := dataset.KeyBy(recs, func(s string) string { return s[:8] })
		_, err := dataset.Count(dataset.ReduceByKey(kv, func(x, y string) string { return x }, 2))
		return err
	case "cache":
		_, err := dataset.Count(dataset.Persist(recs, dataset.DiskOnly))
		return err
	case "save":
		return dataset.SaveAsTextFile(recs, filepath.Join(a.Dir, "out"))
	}
	return errors.New("unknown op " + a.Op)
})

// Issue 23, item 9: a full disk (a real one: a 256 KiB tmpfs) is one
// clear error, not the path twice and four retries on the same executor.
// In local[2,4] — one executor, four attempts per task — a task that
// writes shuffle files, DiskOnly cache files or a SaveAsTextFile part to
// the full disk fails the job at once: the last failure is the first
// attempt, its kind DiskFull, and the job's error names the full path
// once, the executor and its host.
func TestDiskFullFailsOnceNamingThePathOnce(t *testing.T) {
	for _, op := range []string{"shuffle", "cache", "save"} {
		t.Run(op, func(t *testing.T) {
			full := mountFullTmpfs(t, "256k")
			localDir, outDir := full, t.TempDir()
			if op == "save" {
				localDir, outDir = t.TempDir(), full
			}
			fc := localContext(t, "flint.master", "local[2,4]", "flint.local.dir", localDir)
			_, err := diskFullJob.Run(t.Context(), fc, diskFullArgs{Op: op, Dir: outDir})
			var je *framework.JobError
			if !errors.As(err, &je) {
				t.Fatalf("the job on a full disk returned %v, want a *framework.JobError", err)
			}
			msg := err.Error()
			t.Logf("the error: %s", msg)
			if je.FailureKind != "DiskFull" || je.Attempt != 0 {
				t.Errorf("last failure: kind %s, attempt %d; want DiskFull on attempt 0 (no retry on the same executor)", je.FailureKind, je.Attempt)
			}
			if n := strings.Count(msg, full); n != 1 {
				t.Errorf("the error names the full file system's directory %s %d times, want once", full, n)
			}
			for _, want := range []string{"no space left on device", "executor driver (host ", "no other executor can run it"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q", want)
				}
			}
		})
	}
}
