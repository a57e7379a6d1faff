package fine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/logging"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// driverProcess is a driver that runs stalled tasks until it is killed.
func driverProcess() int {
	// failoverTimeout 0: the master removes the framework as soon as the
	// driver's connection drops (the default keeps it 120 s).
	conf := append(baseConf(os.Getenv("FINE_TEST_MARK")), "flint.master="+os.Getenv("FINE_TEST_MASTER"), "flint.mesos.failoverTimeout=0")
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log, _ := logging.New(logging.Options{Level: "info", Format: "text", Out: os.Stderr})
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir := os.Getenv("FINE_TEST_DIR")
	in := []stallIn{{Dir: dir, Index: 0}, {Dir: dir, Index: 1}}
	_, err = framework.Map(context.Background(), fc, stall, in)
	fmt.Fprintln(os.Stderr, "driver: job ended:", err)
	return 0
}

// pids lists the executor pids the stall tasks recorded in dir.
func stallPIDs(dir string) map[int]bool {
	out := map[int]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		parts := strings.Split(e.Name(), ".")
		if len(parts) == 3 && parts[0] == "pid" {
			if pid, err := strconv.Atoi(parts[2]); err == nil {
				out[pid] = true
			}
		}
	}
	return out
}

func TestExecutorKilledMidTask(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	// Exclusion off: both agents share a host name here, so a 2-on-one,
	// 1-on-the-other placement would exclude every executor for one task
	// (its executor failed it, and the other executor failed two tasks) and
	// the job would wait for unschedulableTaskSetTimeout instead of retrying.
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=4", "flint.excludeOnFailure.enabled=false")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type res struct {
		out []int
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := framework.Map(ctx, r.fc, stall, []stallIn{{Dir: dir, Index: 0}, {Dir: dir, Index: 1}, {Dir: dir, Index: 2}})
		done <- res{out, err}
	}()
	waitFor(t, 30*time.Second, "3 running tasks", func() bool { return len(stallPIDs(dir)) >= 1 && countFiles(dir, "pid.") == 3 })
	victims := stallPIDs(dir)
	for pid := range victims {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill executor %d: %v", pid, err)
		}
	}
	// Retries run in new executor processes; let them finish.
	waitFor(t, 30*time.Second, "retries in new executors", func() bool {
		for pid := range stallPIDs(dir) {
			if !victims[pid] {
				return true
			}
		}
		return false
	})
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("job failed after executor kill: %v", got.err)
	}
	for i, v := range got.out {
		if v != i {
			t.Fatalf("result %d = %d", i, v)
		}
	}
}

func countFiles(dir, prefix string) int {
	n := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n
}

func TestAgentLost(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 2, resources: "cpus:3;mem:512;disk:1024;ports:[31000-31100]"})
	r := mustRun(t, mesosURL(c))
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var out []int
	go func() {
		var err error
		out, err = framework.Map(ctx, r.fc, stall, []stallIn{{Dir: dir, Index: 0}, {Dir: dir, Index: 1}})
		done <- err
	}()
	waitFor(t, 30*time.Second, "2 running tasks", func() bool { return countFiles(dir, "pid.") == 2 })
	// Stop the agent running task 0 (without killing its executor: the
	// executor must notice the lost agent and exit on its own).
	var victim int
	for pid := range stallPIDs(dir) {
		victim = pid
	}
	lost := -1
	for i, a := range c.Agents {
		for _, p := range executors(r.mark) {
			if p.pid == victim && strings.HasSuffix(p.executorID, a.ID()) {
				lost = i
			}
		}
	}
	if lost < 0 {
		t.Fatalf("no agent runs executor %d", victim)
	}
	c.Agents[lost].Stop()
	waitFor(t, 20*time.Second, "the lost agent's executor to exit", func() bool { return syscall.Kill(victim, 0) != nil || mesostest.Zombie(victim) })
	waitFor(t, 30*time.Second, "the lost task to run again", func() bool { return countFiles(dir, "pid.") >= 3 })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed after agent loss: %v", err)
	}
	if out[0] != 0 || out[1] != 1 {
		t.Fatalf("results %v", out)
	}
}

func TestDriverGone(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	mark, dir := mesostest.NewMark(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envDriver+"=1", "FINE_TEST_MARK="+mark, "FINE_TEST_MASTER="+mesosURL(c), "FINE_TEST_DIR="+dir)
	var stderr mesostest.LogBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("driver stderr:\n%s", stderr.String())
		}
	}()
	waitFor(t, 30*time.Second, "the driver's tasks to run", func() bool { return countFiles(dir, "pid.") == 2 })
	if len(executors(mark)) == 0 {
		t.Fatal("no executor process found")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("driver exit: %v", err)
	}
	// The master removes the framework (failover timeout 0), the agents
	// shut its executors down, and no process is left.
	checkNoOrphans(t, mark)
}
