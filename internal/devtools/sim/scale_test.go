package sim

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestScale runs one seed of a cluster sized by SIM_AGENTS, SIM_TASKS and
// SIM_JOBS (skipped when SIM_AGENTS is unset) and logs the real time and
// heap it took: make simulate-scale.
func TestScale(t *testing.T) {
	env := func(k string, def int) int {
		if v := os.Getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", k, v, err)
			}
			return n
		}
		return def
	}
	if os.Getenv("SIM_AGENTS") == "" {
		t.Skip("SIM_AGENTS unset")
	}
	cfg := DefaultConfig()
	cfg.Agents, cfg.Tasks, cfg.Jobs = env("SIM_AGENTS", 100), env("SIM_TASKS", 10000), env("SIM_JOBS", 1)
	cfg.MaxVirtual = 24 * time.Hour
	start := time.Now()
	r := Run(int64(env("SIM_SEED", 1)), cfg)
	el := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if r.Failed() {
		t.Fatal(r.Report())
	}
	t.Logf("%s: %d jobs, %d attempts, %d steps, %s virtual, %s real (%.0f attempts/s, %.1f µs/step), heap in use %d MiB",
		cfg, r.Finished, r.Attempts, r.Steps, r.Virtual.Round(time.Second), el.Round(time.Millisecond),
		float64(r.Attempts)/el.Seconds(), float64(el.Microseconds())/float64(r.Steps), ms.HeapInuse>>20)
}
