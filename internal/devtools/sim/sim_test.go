package sim

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seeds is the seeds a run simulates: SIM_SEED=n replays one seed,
// SIM_SEEDS=n runs seeds 1..n (make simulate: 300 by default); with
// neither, TestSimulate is skipped (go test runs the other tests only).
func seeds(t *testing.T) []int64 {
	t.Helper()
	if s := os.Getenv("SIM_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("SIM_SEED=%q: %v", s, err)
		}
		return []int64{n}
	}
	s := os.Getenv("SIM_SEEDS")
	if s == "" {
		t.Skip("SIM_SEEDS and SIM_SEED unset: run make simulate")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("SIM_SEEDS=%q: %v", s, err)
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// regression is a seed that once broke an invariant, run with the
// profile it broke under.
type regression struct {
	seed    int64
	profile func(int64) Config
}

// regressions are seeds that once broke an invariant, with the commit
// that fixed the bug; they run every time, first.
var regressions = slices.Concat(
	// 4043422 (fine): an agent's loss never reported its executor lost to
	// the driver, which kept the executor's map outputs; every reducer
	// failed fetching them until the job aborted.
	fineSeeds(43, 61, 62, 117, 127, 143, 169, 181, 189, 196, 210, 260),
	// 2cb5727 (fine): a task placed beside an executor that then crashed
	// ran on the executor its agent started again, which fine took for
	// stopped: no shuffle release reached it, it never exited idle.
	fineSeeds(19, 22),
	// 3ce39e3 (fine): a crashed executor's FAILURE, held by a master
	// failover, arrived after a new executor started there and marked
	// the new one stopped: same symptom.
	fineSeeds(24, 35, 38, 54, 76, 83, 87),
	// 2953300 (coarse): a crashed executor's update, sent before it
	// died, came after Mesos' status had it reported lost; coarse handed
	// it to the driver, ending the attempt twice.
	coarseSeeds(30),
	// This commit (the simulation itself): a REVIVE lost in a partition
	// left the simulated master suppressing the framework after it
	// re-subscribed, where Mesos unsuppresses it (the SUBSCRIBE names no
	// suppressed roles) and mesosconn suppresses again only if demand is
	// off; no offer came again and the fine backend's noFitTimeout
	// aborted the jobs.
	withProfile(profileBeforeRestarts, []int64{215, 285}),
	// 49f6474 (fine): a driver restarted with the same framework id left
	// its predecessor's idle executors running: they held the dead job's
	// map outputs, so never exited idle, and ran no task for the master's
	// reconciliation to report (21 of the 83 restart seeds of 1..300).
	withProfile(Profile, []int64{24, 36, 86, 150, 233}),
	// c780ee8 (driver): a result stage completed by its first attempt's
	// late success after a fetch failure left its second attempt's task
	// set in the task core, which launched its pending task for a set the
	// driver had forgotten (panic: scheduler launched task of unknown
	// task set).
	fineSeeds(189),
	// 3b38a31 (fine): a RUNNING an executor sent before its agent's loss,
	// delivered after it, marked the lost executor started again (the
	// seed-19 rule), so it was never reported lost: the driver kept its
	// map outputs and the reducers failed on them until the job aborted.
	withProfile(Profile, []int64{278}),
)

func fineSeeds(seeds ...int64) []regression   { return withProfile(fineProfile, seeds) }
func coarseSeeds(seeds ...int64) []regression { return withProfile(coarseProfile, seeds) }

func withProfile(p func(int64) Config, seeds []int64) []regression {
	out := make([]regression, len(seeds))
	for i, s := range seeds {
		out[i] = regression{s, p}
	}
	return out
}

// coarseProfile is Profile with the coarse backend.
func coarseProfile(seed int64) Config {
	c := Profile(seed)
	c.Coarse = true
	return c
}

// Every seed's run keeps every invariant, with faults on; the regression
// seeds run first. It logs the figures make simulate reports.
func TestSimulate(t *testing.T) {
	start := time.Now()
	var jobs, attempts, restarts int
	var virtual time.Duration
	all := regressions
	for _, seed := range seeds(t) {
		all = append(all, regression{seed, Profile})
	}
	for _, rg := range all {
		r := Run(rg.seed, rg.profile(rg.seed))
		if r.Failed() {
			t.Errorf("%s", r.Report())
			continue
		}
		jobs += r.Finished
		attempts += r.Attempts
		restarts += r.Restarts
		virtual += r.Virtual
	}
	el := time.Since(start)
	t.Logf("%d seeds in %s (%.1f seeds/s): %d jobs of two stages, %d task attempts, %d driver restarts, %s of virtual time (%.0f attempts/s real)",
		len(all), el.Round(time.Millisecond), float64(len(all))/el.Seconds(), jobs, attempts, restarts, virtual.Round(time.Second), float64(attempts)/el.Seconds())
}

// A seed replays exactly: the same trace digest, steps and virtual time.
func TestSameSeedSameRun(t *testing.T) {
	cfg := DefaultConfig()
	coarse := cfg
	coarse.Coarse = true
	for _, c := range []struct {
		seed int64
		cfg  Config
	}{{7, cfg}, {7, coarse}} {
		seed, cfg := c.seed, c.cfg
		a, b := Run(seed, cfg), Run(seed, cfg)
		if a.Failed() || b.Failed() {
			t.Fatalf("seed %d failed: %s / %s", seed, a.Violation, b.Violation)
		}
		if a.Digest != b.Digest || a.Steps != b.Steps || a.Virtual != b.Virtual || a.Attempts != b.Attempts {
			t.Fatalf("seed %d ran differently twice: digest %x/%x steps %d/%d virtual %s/%s attempts %d/%d\nfirst:\n%s\nsecond:\n%s",
				seed, a.Digest, b.Digest, a.Steps, b.Steps, a.Virtual, b.Virtual, a.Attempts, b.Attempts,
				strings.Join(a.Trace, "\n"), strings.Join(b.Trace, "\n"))
		}
	}
	if a, b := Run(7, cfg), Run(8, cfg); a.Digest == b.Digest {
		t.Fatalf("seeds 7 and 8 ran the same trace (digest %x): the seed decides nothing", a.Digest)
	}
}
