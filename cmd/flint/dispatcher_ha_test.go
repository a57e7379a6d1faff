package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/dispatcher"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// TestClusterModeLeaderElectionZK: two dispatchers on one ZooKeeper (sharing
// --store, as standbys must). The first leads; the second is a standby that
// answers 503 naming the leader. The leader is SIGKILLed with one driver
// running and one queued; once its ZooKeeper session expires the standby
// leads, subscribes as the same framework and reads the same records: the
// running driver is still its first attempt with the same task, the queued
// one waits and then runs once. Clients given both addresses follow.
func TestClusterModeLeaderElectionZK(t *testing.T) {
	zk := zktest.Start(t)
	job := testDriver(t)
	ctx := context.Background()
	flags := []string{"--max-drivers", "1", "--zk", "zk://" + zk + "/flint/ha", "--zk-session-timeout", "4s"}
	a := startCluster(t, flags...)
	// Under ZooKeeper a dispatcher is a standby until it has won the election
	// and loaded its records: wait until the first one leads (a submission
	// to it before that is refused as to a standby, 1 run in 2 at load 15).
	a.waitLeading()
	b := &clusterEnv{t: t, master: a.master, home: a.home, store: a.store, extra: flags}
	b.startDispatcher()
	_, err := b.client().List(ctx)
	if !isStandby(err) || !strings.Contains(err.Error(), "the leader is http://"+a.disp) {
		t.Fatalf("the second dispatcher answers %v; want a standby naming http://%s", err, a.disp)
	}
	both := "mesos://" + a.disp + "," + b.disp
	a.via, b.via = both, both

	running := a.submit(job, "sleep")
	first := a.waitState(running, dispatcher.Running)
	queued := a.submit(job, "sleep")
	zc := zktest.Client(t, zk)
	fid, _, err := zc.Get("/flint/ha/framework-id")
	if err != nil || len(fid) == 0 {
		t.Fatalf("framework id in ZooKeeper: %q, %v", fid, err)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()

	var st dispatcher.StatusResponse
	if !waitfor.Poll(90*time.Second, func() bool {
		st, err = b.client().Status(ctx, running)
		return err == nil
	}) {
		t.Fatalf("the standby did not take over: %v\nstandby stderr:\n%s", err, b.errOut.String())
	}
	if st.DriverState != dispatcher.Running || st.TaskID != first.TaskID || st.Attempts != 1 {
		t.Fatalf("after the failover the running driver is %s task %s attempts %d, want RUNNING %s 1", st.DriverState, st.TaskID, st.Attempts, first.TaskID)
	}
	if st := b.status(queued); st.DriverState != dispatcher.Queued {
		t.Fatalf("after the failover the queued driver is %s", st.DriverState)
	}
	if now, _, err := zc.Get("/flint/ha/framework-id"); err != nil || string(now) != string(fid) {
		t.Fatalf("framework id now %q (%v), was %q", now, err, fid)
	}
	if !waitfor.Poll(30*time.Second, func() bool { return frameworkActive(a.master, string(fid)) }) {
		t.Fatalf("the master has no active framework %s: the new leader did not subscribe as it", fid)
	}
	if _, err := b.client().Kill(ctx, running); err != nil {
		t.Fatal(err)
	}
	b.waitState(running, dispatcher.Killed)
	if st := b.waitState(queued, dispatcher.Running); st.Attempts != 1 {
		t.Fatalf("queued driver attempts %d", st.Attempts)
	}
	if _, err := b.client().Kill(ctx, queued); err != nil {
		t.Fatal(err)
	}
	b.waitState(queued, dispatcher.Killed)
	if st := b.status(running); st.Attempts != 1 {
		t.Fatalf("the first driver was launched %d times", st.Attempts)
	}
}

// frameworkActive reports whether the master at addr lists framework id as
// active (subscribed).
func frameworkActive(addr, id string) bool {
	resp, err := http.Get("http://" + addr + "/master/state")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct {
		Frameworks []struct {
			ID     string `json:"id"`
			Active bool   `json:"active"`
		} `json:"frameworks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return false
	}
	for _, f := range st.Frameworks {
		if f.ID == id && f.Active {
			return true
		}
	}
	return false
}

// startFlintProc starts a long-running flint process for the test; it is
// interrupted (then killed) when the test ends.
func startFlintProc(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(flintBin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// TestClusterModeMasterFailoverZK: a master in ZooKeeper's election, two
// agents, a dispatcher and its driver both reaching the master through
// mesos://zk://…. The master is SIGKILLed while the driver runs and a new
// one starts on its address; once ZooKeeper names it, the dispatcher
// subscribes to it as the same framework, the agents re-register with the
// driver's task, and the driver — still its first attempt — finishes.
func TestClusterModeMasterFailoverZK(t *testing.T) {
	zk := zktest.Start(t)
	job := testDriver(t)
	addr := freePort(t)
	masterArgs := []string{"mesos", "master", "--listen", addr, "--zk", "zk://" + zk + "/mesos", "--zk-session-timeout", "4s", "--log-level", "warn"}
	master := startFlintProc(t, masterArgs...)
	work := t.TempDir()
	for i := range 2 {
		startFlintProc(t, "mesos", "agent", "--master", "zk://"+zk+"/mesos", "--listen", freePort(t), "--hostname", "127.0.0.1",
			"--work-dir", filepath.Join(work, fmt.Sprint("agent-", i)), "--resources", "cpus:2;mem:2048", "--log-level", "warn")
	}
	if !waitfor.Poll(30*time.Second, func() bool { return masterHasAgents(addr, 2) }) {
		t.Fatal("the master has not got 2 agents")
	}
	c := &clusterEnv{t: t, master: addr, home: t.TempDir(), store: t.TempDir(),
		cmdArgs: []string{"dispatcher", "--master", "mesos://zk://" + zk + "/mesos", "--failover-timeout", "10m"}}
	c.startDispatcher()
	marker := filepath.Join(t.TempDir(), "done")
	id := c.submit(job, "until", marker)
	first := c.waitState(id, dispatcher.Running)
	fid, err := os.ReadFile(filepath.Join(c.store, "records", "framework-id"))
	if err != nil {
		t.Fatal(err)
	}

	if err := master.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = master.Wait()
	killed := time.Now()
	startFlintProc(t, masterArgs...)
	if !waitfor.Poll(90*time.Second, func() bool { return frameworkActive(addr, strings.TrimSpace(string(fid))) }) {
		t.Fatalf("the new master has no active framework %s: the dispatcher did not follow it\ndispatcher stderr:\n%s", fid, c.errOut.String())
	}
	t.Logf("the dispatcher subscribed to the new master %v after the old one was killed", time.Since(killed).Round(time.Millisecond))
	// The agents follow the leader in ZooKeeper (--master zk://…), as Mesos
	// agents do: they re-register with the new master when it is elected, not
	// after the old one's ping timeout (15 s × 5 missed pings by default).
	if !waitfor.Poll(30*time.Second, func() bool { return masterHasAgents(addr, 2) }) {
		t.Fatal("the new master has not got the 2 agents back within 30 s of its election")
	}
	if st := c.status(id); st.DriverState != dispatcher.Running || st.TaskID != first.TaskID || st.Attempts != 1 {
		t.Fatalf("after the failover the driver is %s task %s attempts %d, want RUNNING %s 1", st.DriverState, st.TaskID, st.Attempts, first.TaskID)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := c.waitState(id, dispatcher.Finished)
	t.Logf("the driver finished %v after the old master was killed", time.Since(killed).Round(time.Millisecond))
	if st.Attempts != 1 || st.TaskID != first.TaskID {
		t.Fatalf("finished as task %s after %d attempts, want %s, 1", st.TaskID, st.Attempts, first.TaskID)
	}
}

// TestClusterModeSupervisedRelaunchKeepsFrameworkID: a supervised driver
// that crashes (exits without tearing its framework down) is relaunched
// subscribing as the same framework (flint.mesos.driver.frameworkId): the
// master lists one framework for the driver, across both attempts, and the
// second attempt finishes.
func TestClusterModeSupervisedRelaunchKeepsFrameworkID(t *testing.T) {
	job := testDriver(t)
	work := t.TempDir()
	c := &clusterEnv{t: t, master: startMesosLocalIn(t, work), home: t.TempDir(), store: t.TempDir()}
	c.startDispatcher()
	marker := filepath.Join(t.TempDir(), "ran")
	id := c.submit("--supervise", job, "crash-once", marker)
	c.waitState(id, dispatcher.Running)
	var first []string
	if !waitfor.Poll(30*time.Second, func() bool { first = driverFrameworks(c.master, id); return len(first) == 1 }) {
		t.Fatalf("the master lists frameworks %v for %s, want 1", first, id)
	}
	if err := os.WriteFile(marker+".crash", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := c.waitState(id, dispatcher.Finished)
	if st.Attempts != 2 {
		t.Fatalf("finished after %d attempts, want 2", st.Attempts)
	}
	if got := driverFrameworks(c.master, id); len(got) != 1 || got[0] != first[0] {
		t.Fatalf("the driver's frameworks across both attempts: %v; want the first attempt's %s only", got, first[0])
	}
	if errOut := c.sandboxFile(work, st.TaskID, "stderr"); !strings.Contains(errOut, "as framework "+first[0]) {
		t.Fatalf("the relaunched driver did not subscribe as %s:\n%s", first[0], errOut)
	}
}

// driverFrameworks lists the ids of the frameworks (running or completed)
// the master at addr has for submission id (named "NAME (ID)").
func driverFrameworks(addr, id string) []string {
	resp, err := http.Get("http://" + addr + "/master/state")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	type fw struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	var st struct {
		Frameworks          []fw `json:"frameworks"`
		CompletedFrameworks []fw `json:"completed_frameworks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range append(st.Frameworks, st.CompletedFrameworks...) {
		if strings.HasSuffix(f.Name, "("+id+")") && !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f.ID)
		}
	}
	return out
}
