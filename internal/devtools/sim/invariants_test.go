package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/clock"
)

// A master that offers more than it booked makes the backend over-commit
// the offers: the run fails at that ACCEPT, its report names the seed, how
// to replay it and the steps that led there, and the seed replays the
// same failure.
func TestOverCommitIsCaught(t *testing.T) {
	cfg := DefaultConfig()
	cfg.offerSkew = 2
	r := Run(5, cfg)
	if !strings.Contains(r.Violation, "offer over-committed") {
		t.Fatalf("violation %q, want an over-committed offer", r.Violation)
	}
	rep := r.Report()
	for _, want := range []string{"seed 5:", "SIM_SEED=5 make simulate", "accept [o", "VIOLATION offer over-committed"} {
		if !strings.Contains(rep, want) {
			t.Fatalf("report lacks %q:\n%s", want, rep)
		}
	}
	if len(r.Trace) != cfg.TraceLines {
		t.Fatalf("trace of %d lines, want the last %d", len(r.Trace), cfg.TraceLines)
	}
	again := Run(5, cfg)
	if again.Violation != r.Violation || strings.Join(again.Trace, "\n") != strings.Join(r.Trace, "\n") {
		t.Fatalf("seed 5 failed differently the second time:\n%s\n---\n%s", rep, again.Report())
	}
}

// bareDriver is a driver with no backend: the tests call its inputs and
// run what it recorded, as Run does after a Flush.
func bareDriver(t *testing.T) (*Sim, *simDriver) {
	t.Helper()
	s := &Sim{cfg: DefaultConfig(), rng: rand.New(rand.NewPCG(1, 2)), clk: clock.NewFake(time.Time{})}
	s.start = s.clk.Now()
	d, err := newDriver(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	s.d = d
	return s, d
}

func drainRecorded(s *Sim) {
	out := s.out
	s.out = nil
	for _, f := range out {
		f()
	}
}

func TestAttemptEndingTwiceIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.attempts[7] = &attempt{taskSet: "stage-0.0", index: 0, exec: "E"}
	d.StatusUpdate(&backend.StatusUpdate{TaskID: 7, State: scheduler.Lost})
	drainRecorded(s)
	if s.violation != "" {
		t.Fatalf("one end: violation %q", s.violation)
	}
	d.StatusUpdate(&backend.StatusUpdate{TaskID: 7, State: scheduler.Lost})
	drainRecorded(s)
	if !strings.Contains(s.violation, "attempt 7 (stage-0.0/0) ended 2 times") {
		t.Fatalf("violation %q, want attempt 7 ended twice", s.violation)
	}
}

func TestUpdateOfUnlaunchedAttemptIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.StatusUpdate(&backend.StatusUpdate{TaskID: 99, State: scheduler.Running})
	drainRecorded(s)
	if !strings.Contains(s.violation, "attempt 99, which the driver never launched") {
		t.Fatalf("violation %q", s.violation)
	}
}

// A reducer that skips a block it was told to read returns a value that
// is not its partition's: the run fails on the job's result.
func TestWrongResultIsCaught(t *testing.T) {
	cfg := DefaultConfig()
	cfg.skipBlock = true
	r := Run(3, cfg)
	if !strings.Contains(r.Violation, "job 0: partition 0 is") {
		t.Fatalf("violation %q, want a wrong partition", r.Violation)
	}
}

// A map output the tracker holds from an executor generation the backend
// reported lost breaks the invariant.
func TestOutputOfLostExecutorIsCaught(t *testing.T) {
	cfg := DefaultConfig()
	cfg.forgetLoss = "flint-fine-" // the sim pretends every fine executor was lost
	r := Run(3, cfg)
	if !strings.Contains(r.Violation, "after that executor's loss") {
		t.Fatalf("violation %q, want a map output from a lost executor", r.Violation)
	}
}

// A map task's accumulator update is applied once per successful attempt:
// from an attempt whose FINISHED reached the driver, never twice.
func TestMapAccumulatorRuleIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	j := &simJob{shuffle: 3, maps: 2, mapAccs: make([]int, 2)}
	d.attempts[5] = &attempt{done: true}
	d.attempts[6] = &attempt{}
	d.mapAccumulator(j, 3, 1, attemptTag(3, 1, 5))
	if s.violation != "" || j.mapAccs[1] != 1 {
		t.Fatalf("first update: violation %q, applied %v", s.violation, j.mapAccs)
	}
	d.mapAccumulator(j, 3, 1, attemptTag(3, 1, 5))
	if !strings.Contains(s.violation, "applied attempt 5's accumulator update twice") {
		t.Fatalf("violation %q, want attempt 5's update applied twice", s.violation)
	}
	s.violation = ""
	d.mapAccumulator(j, 3, 0, attemptTag(3, 0, 6))
	if !strings.Contains(s.violation, "whose FINISHED never reached the driver") {
		t.Fatalf("violation %q, want an update of an attempt that never finished", s.violation)
	}
}

// A result partition's value must be its first success's: a later
// attempt's result replacing it is a result accepted twice.
func TestResultAcceptedTwiceIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	j := &simJob{shuffle: 0, maps: 1, reduces: 1, mapAccs: []int{1}}
	d.jobs = []*simJob{j}
	d.firstDone[outputKey{0, 0}] = 10
	out := [][]byte{append(expectedReduce(0, 1, 0), attemptTag(0, 0, 11)...)}
	d.checkResults(j, out)
	if !strings.Contains(s.violation, "partition 0's result is attempt 11's, but attempt 10's FINISHED reached the driver first") {
		t.Fatalf("violation %q, want partition 0 accepted from the wrong attempt", s.violation)
	}
}
