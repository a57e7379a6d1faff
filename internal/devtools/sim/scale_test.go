package sim

import (
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestScale runs one seed of a cluster sized by SIM_AGENTS (8 cpus each),
// SIM_TASKS map tasks and SIM_REDUCERS reduce tasks per job, SIM_JOBS jobs
// (skipped when SIM_AGENTS is unset), with no faults and no per-step
// tracker walk, and logs what the process spent: CPU seconds (user+sys of
// the whole test process: the driver, the fine backend and the simulated
// master on one goroutine, plus the GC), CPU per 1,000 task attempts, and
// the peak Go heap in use (sampled every 20 ms), and the map-output
// tracker's bytes per map output (Tracker.MapOutputBytes and
// LocationBytes as the job ended, over its map outputs).
func TestScale(t *testing.T) {
	env := func(k string, def int) int { return envInt(t, k, def) }
	if os.Getenv("SIM_AGENTS") == "" {
		t.Skip("SIM_AGENTS unset")
	}
	cfg := DefaultConfig()
	cfg.Agents, cfg.Tasks, cfg.Jobs = env("SIM_AGENTS", 100), env("SIM_TASKS", 10000), env("SIM_JOBS", 1)
	cfg.Reducers = env("SIM_REDUCERS", cfg.Tasks/10)
	cfg.Faults = Faults{}
	cfg.SkipTrackerCheck = true
	cfg.MaxVirtual = 24 * time.Hour
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // samples the heap; decides nothing in the run
		defer close(done)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	cpu0 := cpuTime(t)
	start := time.Now()
	r := Run(int64(env("SIM_SEED", 1)), cfg)
	el := time.Since(start)
	cpu := cpuTime(t) - cpu0
	close(stop)
	<-done
	if r.Failed() {
		t.Fatal(r.Report())
	}
	perOutput := 0.0
	if r.TrackerOutputs > 0 {
		perOutput = float64(r.TrackerBytes) / float64(r.TrackerOutputs)
	}
	t.Logf("%s, %d reducers: %d jobs, %d attempts, %d steps, %s virtual; CPU %.1f s (%.3f s per 1,000 attempts), wall %s, peak heap in use %d MiB, tracker %.1f bytes per map output",
		cfg, cfg.Reducers, r.Finished, r.Attempts, r.Steps, r.Virtual.Round(time.Second),
		cpu.Seconds(), cpu.Seconds()*1000/float64(r.Attempts), el.Round(time.Millisecond), peak.Load()>>20, perOutput)
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// envInt is environment variable k as an int, def when unset.
func envInt(t *testing.T, k string, def int) int {
	if v := os.Getenv(k); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", k, v, err)
		}
		return n
	}
	return def
}
