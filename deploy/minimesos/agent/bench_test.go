package agent

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest/testexecutor"
)

// terminalCounter signals once n distinct tasks reached a terminal state
// (or RUNNING, when running is set).
func terminalCounter(m *fakeMaster, want mesos.TaskState) (wait func(n int, d time.Duration) bool) {
	var mu sync.Mutex
	seen := map[string]bool{}
	ch := make(chan struct{}, 1<<16)
	m.onUpdate = func(u link.StatusUpdate) {
		if u.Status.GetState() != want {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[u.Status.TaskID.Value] {
			seen[u.Status.TaskID.Value] = true
			ch <- struct{}{}
		}
	}
	return func(n int, d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for range n {
			select {
			case <-ch:
			case <-t.C:
				return false
			}
		}
		return true
	}
}

// BenchmarkCommandTasks: command tasks ("true") launched and finished per
// second on one agent, all submitted at once; raw-tasks/s is fork/exec of
// the same "sh -c true" with the same concurrency, in the same run.
func BenchmarkCommandTasks(b *testing.B) {
	m := newFakeMaster()
	wait := terminalCounter(m, mesos.TASK_FINISHED)
	cfg := fastConfig(b, b.TempDir())
	cfg.Resources = "cpus:1000000" // every task is submitted at once
	ta := startAgent(b, m, cfg)
	fw := fwInfo("fw", false)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		m.deliver(b, link.MasterMessage{RunTask: &link.RunTask{Framework: fw, Task: cmdTask("t"+strconv.Itoa(i), "true")}})
	}
	if !wait(b.N, time.Minute) {
		b.Fatal("tasks did not finish")
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "tasks/s")

	start = time.Now()
	var wg sync.WaitGroup
	for range b.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = exec.Command("/bin/sh", "-c", "true").Run()
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "raw-tasks/s")
	_ = ta
}

// BenchmarkExecutorStart: from RunTask to the executor's TASK_RUNNING
// (spawn + SUBSCRIBE + LAUNCH + UPDATE through the agent) for a mesos-go
// executor, one at a time; raw-ms/op is fork/exec/wait of the same binary.
func BenchmarkExecutorStart(b *testing.B) {
	m := newFakeMaster()
	wait := terminalCounter(m, mesos.TASK_RUNNING)
	ta := startAgent(b, m, fastConfig(b, b.TempDir()))
	fw := fwInfo("fw", false)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		id := strconv.Itoa(i)
		m.deliver(b, link.MasterMessage{RunTask: &link.RunTask{Framework: fw, Task: executorTask("t"+id, "finish", executorInfo("ex"+id))}})
		if !wait(1, 30*time.Second) {
			b.Fatal("executor did not start")
		}
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/start")
	start = time.Now()
	for range b.N {
		cmd := exec.Command(testExecutor)
		cmd.Env = append(os.Environ(), testexecutor.Env+"=1", "TESTEXEC_MODE=exit")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "raw-ms/op")
	_ = ta
}
