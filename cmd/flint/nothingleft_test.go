package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// TestKilledDriverLeavesNothingBehind: a driver killed with SIGKILL
// mid-job on the embedded master leaves executors that exit on their own
// within flint.network.timeout, and a sandbox directory that `flint mesos
// gc` removes.
func TestKilledDriverLeavesNothingBehind(t *testing.T) {
	killedDriverLeavesNothingBehind(t, "flint.executor.heartbeatInterval=1s", false)
}

// TestKilledFineDriverLeavesNothingBehind is the same in fine-grained
// mode: the Mesos executors exit within flint.network.timeout (they lose
// their agent, which ran in the driver), and the next run on the embedded
// master removes the dead driver's sandboxes.
func TestKilledFineDriverLeavesNothingBehind(t *testing.T) {
	killedDriverLeavesNothingBehind(t, "flint.mesos.coarse=false", true)
}

// killedDriverLeavesNothingBehind SIGKILLs a driver mid-job; the dead
// driver's embedded work dir is then removed by `flint mesos gc`, or with
// nextRun by the next driver on the embedded master.
func killedDriverLeavesNothingBehind(t *testing.T, conf string, nextRun bool) {
	_, job := ownJob(t)
	tmp := t.TempDir()
	mark := mesostest.NewMark()
	cmd := exec.Command(job, "--conf", "flint.network.timeout=3s", "--conf", conf, "--conf", "flint.executorEnv.FLINT_TEST_MARK="+mark, "sleep")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "failjob: running sleep\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	executors := func() []mesostest.Proc {
		return mesostest.Procs(func(env map[string]string) bool { return env["FLINT_TEST_MARK"] == mark })
	}
	waitfor.True(t, 30*time.Second, "the job's executors to start", func() bool { return len(executors()) == 2 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// flint.network.timeout (3 s) after losing the driver, plus their shutdown.
	mesostest.CheckGone(t, 20*time.Second, executors, func(p mesostest.Proc) int { return p.PID }, "executors outlived their killed driver")

	left, _ := filepath.Glob(filepath.Join(tmp, "flint-embedded-*"))
	if len(left) != 1 {
		t.Fatalf("embedded work dirs after the kill: %v, want the dead driver's one", left)
	}
	if !nextRun {
		gc := exec.Command(flintBin, "mesos", "gc")
		gc.Env = append(os.Environ(), "TMPDIR="+tmp)
		b, err := gc.CombinedOutput()
		if err != nil || string(b) != "removed "+left[0]+"\n" {
			t.Fatalf("flint mesos gc: %v\n%s", err, b)
		}
	} else {
		next := exec.Command(job, "--conf", conf, "ok")
		next.Env = append(os.Environ(), "TMPDIR="+tmp)
		if b, err := next.CombinedOutput(); err != nil || !strings.Contains(string(b), "failjob: result [1 4]\n") {
			t.Fatalf("the next run: %v\n%s", err, b)
		}
	}
	if rest, _ := filepath.Glob(filepath.Join(tmp, "flint-embedded-*")); len(rest) != 0 {
		t.Errorf("left after the dead driver's sandboxes were collected: %v", rest)
	}
}

// TestClosedStdoutPipeStopsTheJobCleanly: a driver whose stdout is a pipe
// whose reader went away (`myjob … | head -1`) ends on the SIGPIPE of its
// next write as after SIGINT: its job is cancelled, its framework stopped
// (no executor is left once it exited, no embedded work directory), the
// interruption said once on stderr, exit status 141 (128 + SIGPIPE).
func TestClosedStdoutPipeStopsTheJobCleanly(t *testing.T) {
	_, job := ownJob(t)
	tmp := t.TempDir()
	mark := mesostest.NewMark()
	cmd := exec.Command(job, "--conf", "flint.executorEnv.FLINT_TEST_MARK="+mark, "lines")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "failjob: running lines\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	executors := func() []mesostest.Proc {
		return mesostest.Procs(func(env map[string]string) bool { return env["FLINT_TEST_MARK"] == mark })
	}
	waitfor.True(t, 30*time.Second, "the job's executors to start", func() bool { return len(executors()) == 2 })
	// Read a line printed while the executors run, then go away as head does.
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "failjob: line ") {
		t.Fatalf("second line %q, %v", line, err)
	}
	out.Close()
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 141 {
		t.Fatalf("exit %v (code %d), want 141\nstderr:\n%s", err, code, errOut.String())
	}
	if left := executors(); len(left) != 0 {
		t.Errorf("executors outlived their driver, which stopped its framework: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "flint-embedded-*")); len(left) != 0 {
		t.Errorf("embedded work dirs left: %v", left)
	}
	if n := strings.Count(errOut.String(), "myjob: interrupted by SIGPIPE (the reader of its output went away); running tasks were killed\n"); n != 1 {
		t.Errorf("the interruption is reported %d times, want once:\nstderr:\n%s", n, errOut.String())
	}
}
