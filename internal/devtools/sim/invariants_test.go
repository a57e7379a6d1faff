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
func bareDriver(t *testing.T) (*Sim, *driver) {
	t.Helper()
	s := &Sim{cfg: DefaultConfig(), rng: rand.New(rand.NewPCG(1, 2)), clk: clock.NewFake(time.Time{})}
	s.start = s.clk.Now()
	d, err := newDriver(s, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	d.execs["E"] = &dexec{host: "h", cores: 1, used: 1}
	d.attempts[7] = &attempt{taskSet: "job0", index: 0, cpus: 1, exec: "E"}
	d.StatusUpdate(&backend.StatusUpdate{TaskID: 7, State: scheduler.Lost})
	drainRecorded(s)
	if s.violation != "" {
		t.Fatalf("one end: violation %q", s.violation)
	}
	d.StatusUpdate(&backend.StatusUpdate{TaskID: 7, State: scheduler.Lost})
	drainRecorded(s)
	if !strings.Contains(s.violation, "attempt 7 (job0/0) ended 2 times") {
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

func TestResultAcceptedTwiceIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.results["job0"] = make([]int, 2)
	d.attempts[7] = &attempt{taskSet: "job0", index: 1, result: []byte("job0/1")}
	ok := scheduler.TaskSucceeded{TaskID: 7, TaskSetID: "job0", Index: 1}
	d.handle([]scheduler.Event{ok})
	if s.violation != "" {
		t.Fatalf("first acceptance: violation %q", s.violation)
	}
	d.handle([]scheduler.Event{ok})
	if !strings.Contains(s.violation, "job0/1: result accepted 2 times") {
		t.Fatalf("violation %q", s.violation)
	}
}

func TestWrongResultIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.results["job0"] = make([]int, 2)
	d.attempts[7] = &attempt{taskSet: "job0", index: 1, result: []byte("job0/0")}
	d.handle([]scheduler.Event{scheduler.TaskSucceeded{TaskID: 7, TaskSetID: "job0", Index: 1}})
	if !strings.Contains(s.violation, `job0/1 accepted from attempt 7 with result "job0/0", want "job0/1"`) {
		t.Fatalf("violation %q", s.violation)
	}
}

func TestCoresOverTakenIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.execs["E"] = &dexec{host: "h", cores: 1, used: 2}
	d.check()
	if !strings.Contains(s.violation, "executor E has 2 cores taken of the 1 the backend reports") {
		t.Fatalf("violation %q", s.violation)
	}
}
