package agent

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// holdLaunches makes every executor launch of the test wait, between the
// start of its process and its recording, until its agent has been
// stopped or closed (a.ctx ends once Stop/Close handled the processes it
// knew of): the window in which a loaded machine can leave a launch. It
// returns the started pids.
func holdLaunches(t *testing.T) <-chan int {
	pids := make(chan int, 16)
	var mu sync.Mutex
	testHookLaunched = func(a *Agent, pid int) {
		mu.Lock()
		pids <- pid
		mu.Unlock()
		<-a.ctx.Done()
	}
	t.Cleanup(func() { testHookLaunched = nil })
	return pids
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i > 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X'
}

// An executor whose launch is still being recorded when the agent is
// stopped keeps running and is recorded for the next agent, which
// re-attaches to it (it re-subscribes); that agent's Close kills it and
// waits for its end. Before, Stop read the process without the lock and
// skipped it, and the late launch killed the checkpointing executor.
func TestStopDuringLaunchLeavesExecutorForRecovery(t *testing.T) {
	for i := range 5 {
		pids := holdLaunches(t)
		workDir := t.TempDir()
		m := newFakeMaster()
		cfg := fastConfig(t, workDir)
		a1 := startAgent(t, m, cfg)
		runTask(t, a1, fwInfo("ck", true), executorTask("r", "run", executorInfo("exck")))
		pid := <-pids
		a1.Stop()
		a1.srv.Close()
		testHookLaunched = nil
		if !running(pid) {
			t.Fatalf("iteration %d: Stop killed the checkpointing executor launched during it", i)
		}
		cfg.Endpoint = a1.cfg.Endpoint
		a2 := startAgent(t, newFakeMaster(), cfg)
		waitfor.True(t, 10*time.Second, fmt.Sprintf("iteration %d: the restarted agent to re-attach to executor %d", i, pid), func() bool {
			a2.mu.Lock()
			defer a2.mu.Unlock()
			var ex *execRun
			if fw := a2.frameworks["ck"]; fw != nil {
				ex = fw.executors["exck"]
			}
			return ex != nil && ex.sub != nil && ex.proc != nil && ex.proc.Pid() == pid
		})
		a2.Close()
		if running(pid) {
			t.Fatalf("iteration %d: executor %d alive after the restarted agent's Close returned", i, pid)
		}
	}
}

// Close during an executor's launch kills the process and returns only
// once it ended.
func TestCloseDuringLaunchKillsAndWaits(t *testing.T) {
	for i := range 5 {
		pids := holdLaunches(t)
		m := newFakeMaster()
		a := startAgent(t, m, fastConfig(t, t.TempDir()))
		runTask(t, a, fwInfo("ck", true), executorTask("r", "run", executorInfo("exck")))
		pid := <-pids
		a.Close()
		if running(pid) {
			t.Fatalf("iteration %d: executor %d alive after Close returned", i, pid)
		}
	}
}
