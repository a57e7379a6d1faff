package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"

	"github.com/flint-mesos/flint/internal/testkit/burstcheck"
)

// shuffleServiceDir is where each agent's `flint shuffle-service` keeps
// and serves executors' shuffle files (the executors'
// flint.shuffle.service.dir).
const shuffleServiceDir = "/tmp/flint-shuffle-service"

// TestDynamicAllocationAcrossHosts runs dynamic allocation with the
// agents' external shuffle services on the cluster: `flint
// shuffle-service` runs beside each agent (in its container, as an
// operator runs it on every agent), and a driver container runs the
// suite's burst program (e2e/internal/burst) with
// flint.dynamicAllocation.enabled, maxExecutors 2 (one executor of 2
// cores per agent), executorIdleTimeout 2s and
// flint.shuffle.service.enabled. Starting from no executor, its 8 map
// tasks hold until 2 executors have registered (the ramp-up); once the
// sums are collected the driver waits for the release events (the idle
// timeout is real here: it is what the driver waits on, no sleep); then
// a second action reads the same shuffle again from the services, with
// the released executors gone. The sums equal plain Go's (doubled in the
// second action), both first executors were released for idleness, the
// second action ran on new executors, the map stage ran its 8 tasks once
// (nothing recomputed) and no task or stage failed.
func TestDynamicAllocationAcrossHosts(t *testing.T) {
	c := newCluster(t, 2)
	for _, a := range c.agents {
		c.startShuffleService(a, shuffleServiceDir)
	}
	d := &driver{c: c, n: c.startProgram("driver", "", []string{"/burst"},
		"--master", "mesos://master:"+masterPort, "--log-level", "debug",
		"--conf", "flint.executor.cores=2", "--conf", "flint.executor.memory=512m",
		"--conf", "flint.shuffle.service.enabled=true", "--conf", "flint.shuffle.service.dir="+shuffleServiceDir,
		"--conf", "flint.dynamicAllocation.enabled=true", "--conf", "flint.dynamicAllocation.maxExecutors=2",
		"--conf", "flint.dynamicAllocation.executorIdleTimeout=2s",
		"--", "--executors", "2", "--gate-host", "driver", "--n", "20000")}
	code, stdout, stderr := d.wait(driverTimeout)
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	r, err := burstcheck.Parse(stdout)
	if err != nil {
		t.Fatal(err)
	}
	burstcheck.CheckSums(t, r, 20000)
	burstcheck.CheckReleased(t, r, 2)
	if strings.Contains(stderr, "FetchFailed") {
		t.Errorf("the driver logged a fetch failure:\n%s", stderr)
	}
}

// startShuffleService runs `flint shuffle-service --dir dir` in agent a's
// container (docker exec, detached), reached at a's host name, and waits
// until it has written its service file (executors find it there).
func (c *cluster) startShuffleService(a *node, dir string) {
	c.t.Helper()
	ex, err := c.pool.Client.CreateExec(dc.CreateExecOptions{Container: a.id,
		Cmd: []string{"/flint", "shuffle-service", "--dir", dir, "--host", a.name}})
	if err != nil {
		c.t.Fatalf("docker exec flint shuffle-service in %s: %v", a.name, err)
	}
	if err := c.pool.Client.StartExec(ex.ID, dc.StartExecOptions{Detach: true}); err != nil {
		c.t.Fatalf("start flint shuffle-service in %s: %v", a.name, err)
	}
	c.waitFor(30*time.Second, "the shuffle service's file on "+a.name, func() (bool, string) {
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := c.pool.Client.DownloadFromContainer(a.id, dc.DownloadFromContainerOptions{
			Path: dir + "/service.json", OutputStream: &buf, Context: ctx})
		if err != nil {
			ins, ierr := c.pool.Client.InspectExec(ex.ID)
			if ierr == nil && !ins.Running && ins.ExitCode != 0 {
				c.t.Fatalf("flint shuffle-service in %s exited with status %d", a.name, ins.ExitCode)
			}
			return false, fmt.Sprint(err)
		}
		return true, ""
	})
}
