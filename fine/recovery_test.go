package fine_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// localAgent is an agent with its own HTTP server, so that it can be
// stopped (leaving its executors running) and restarted in place.
type localAgent struct {
	*agent.Agent
	cfg  agent.Config
	srv  *http.Server
	done chan struct{}
}

// startAgent starts an agent on cfg.Endpoint (or a fresh port) registered
// with c's master. Cleanup closes it, killing what it runs.
func startAgent(t *testing.T, c *cluster.Cluster, cfg agent.Config) *localAgent {
	t.Helper()
	addr := cfg.Endpoint
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint = ln.Addr().String()
	if cfg.Logger == nil {
		log, _ := mesostest.Logger(t)
		cfg.Logger = log
	}
	if cfg.Fetch == nil {
		if cfg.Fetch, err = cluster.NewFetch(filepath.Join(cfg.WorkDir, "fetch-cache"), 1<<30); err != nil {
			ln.Close()
			t.Fatal(err)
		}
	}
	a, err := agent.New(cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	la := &localAgent{Agent: a, cfg: cfg, srv: &http.Server{Handler: a.Handler()}, done: make(chan struct{})}
	go func() {
		defer close(la.done)
		_ = la.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = la.Agent.Close()
		la.srv.Close()
		<-la.done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := a.Start(ctx, c.Master); err != nil {
		t.Fatal(err)
	}
	return la
}

// stop stops the agent, leaving its executors running, and frees its port.
func (la *localAgent) stop() {
	la.Agent.Stop()
	la.srv.Close()
	<-la.done
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !mesostest.Zombie(pid) }

// With flint.mesos.checkpoint=true the fine executor outlives its agent:
// the agent is stopped mid-task (executor left running), a new agent on
// the same work dir and address recovers and re-registers under the same
// id, the executor re-subscribes, and the running task finishes there with
// its result reaching the driver — not relaunched, not lost.
func TestExecutorResubscribesAfterAgentRestart(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: -1, master: func(mc *master.Config) { mc.AgentMaxMissedPings = 100 }})
	log, _ := mesostest.Logger(t)
	cfg := agent.Config{
		WorkDir: t.TempDir(), Resources: "cpus:4;mem:1024;disk:1024;ports:[31000-31100]",
		ShutdownGrace: 2 * time.Second, KillGrace: time.Second, ReregistrationTimeout: 10 * time.Second,
		RecoveryTimeout: 30 * time.Second, SubscriptionBackoffMax: 200 * time.Millisecond,
		ReregisterBackoff: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond, Logger: log,
	}
	a1 := startAgent(t, c, cfg)
	agentID := a1.ID()
	r := mustRun(t, mesosURL(c), "flint.mesos.checkpoint=true")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type res struct {
		out []int
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := framework.Map(ctx, r.fc, stall, []stallIn{{Dir: dir, Index: 7}})
		done <- res{out, err}
	}()
	waitFor(t, 30*time.Second, "the task to run", func() bool { return countFiles(dir, "pid.") == 1 })
	var execPID int
	for pid := range stallPIDs(dir) {
		execPID = pid
	}
	// Let the agent checkpoint TASK_RUNNING before it goes.
	waitFor(t, 10*time.Second, "TASK_RUNNING at the driver", func() bool {
		return strings.Contains(r.logs.String(), "executor flint-fine-"+agentID+" added")
	})
	waitFor(t, 10*time.Second, "the agent to hold no unacknowledged update", func() bool {
		var ups []json.RawMessage
		b, err := os.ReadFile(filepath.Join(cfg.WorkDir, "meta/slaves", agentID, "updates.json"))
		return err == nil && json.Unmarshal(b, &ups) == nil && len(ups) == 0
	})

	a1.stop()
	// The executor sees the agent gone and keeps re-subscribing: it dials
	// the agent's address again, where the test listens meanwhile.
	ln, err := net.Listen("tcp", a1.cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	redial := make(chan struct{})
	go func() {
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			close(redial)
		}
	}()
	select {
	case <-redial:
	case <-time.After(30 * time.Second):
		t.Fatal("the executor never tried to re-subscribe")
	}
	ln.Close()
	if !alive(execPID) {
		t.Fatalf("executor %d exited when its checkpointing agent stopped", execPID)
	}
	cfg.Endpoint = a1.cfg.Endpoint // the executor knows this address
	cfg.Fetch = a1.cfg.Fetch
	a2 := startAgent(t, c, cfg)
	if a2.ID() != agentID {
		t.Fatalf("restarted agent registered as %q, want %q", a2.ID(), agentID)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("job failed across the agent restart: %v", got.err)
	}
	if len(got.out) != 1 || got.out[0] != 7 {
		t.Fatalf("results %v, want [7]", got.out)
	}
	// The same executor process ran the task once: no relaunch, no retry.
	if pids := stallPIDs(dir); len(pids) != 1 || !pids[execPID] || countFiles(dir, "pid.") != 1 {
		t.Fatalf("task runs recorded %v, want one run in executor %d", pids, execPID)
	}
	if !alive(execPID) {
		t.Fatalf("executor %d gone after the job: the restarted agent should have recovered it", execPID)
	}
	if logs := r.logs.String(); strings.Contains(logs, "lost task") || strings.Contains(logs, "TASK_LOST") || strings.Contains(logs, "TASK_FAILED") {
		t.Fatalf("the task was lost or failed across the restart:\n%s", logs)
	}
}

// flint.mesos.fine.executorIdleTimeout: an executor without tasks exits,
// its own resources go back to Mesos (the master counts nothing used by
// the application), and a later job starts a new executor and succeeds.
func TestIdleExecutorExitsAndANewOneServesTheNextJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.mesos.fine.executorIdleTimeout=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(8))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	first := executors(r.mark)
	if len(first) == 0 {
		t.Fatal("no executor process after the first job")
	}
	ended := time.Now()
	waitFor(t, 15*time.Second, "the idle executors to exit", func() bool { return len(executors(r.mark)) == 0 })
	if idle := time.Since(ended); idle < 900*time.Millisecond {
		t.Fatalf("executors exited %s after the job, before flint.mesos.fine.executorIdleTimeout=1s", idle)
	}
	waitFor(t, 10*time.Second, "the executors' resources back with Mesos", func() bool { return usedCPUs(t, c.URL()) == 0 })
	out, err = framework.Map(ctx, r.fc, double, ints(8))
	if err != nil {
		t.Fatalf("the job after the idle exit failed: %v", err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("second job: result %d = %d", i, v)
		}
	}
	second := executors(r.mark)
	if len(second) == 0 {
		t.Fatal("no executor process for the second job")
	}
	for _, p := range second {
		for _, q := range first {
			if p.pid == q.pid {
				t.Fatalf("executor %d of the first job still serves the second", p.pid)
			}
		}
	}
}
