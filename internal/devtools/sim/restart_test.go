package sim

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// A driver that dies mid-run is replaced by one subscribing with the same
// framework id, which runs every job again and leaves nothing of its
// predecessor running: with either backend, the run keeps every invariant
// and replays exactly.
func TestDriverRestart(t *testing.T) {
	for _, seed := range []int64{1, 24} { // Profile: coarse, fine; both with a restart
		cfg := Profile(seed)
		if cfg.Faults.Restarts != 1 {
			t.Fatalf("seed %d's profile has %d restarts, want 1", seed, cfg.Faults.Restarts)
		}
		r := Run(seed, cfg)
		if r.Failed() {
			t.Fatalf("%s", r.Report())
		}
		if r.Restarts != 1 || r.Finished < cfg.Jobs {
			t.Fatalf("seed %d: %d restarts and %d jobs finished, want 1 restart and at least the %d jobs of the new driver",
				seed, r.Restarts, r.Finished, cfg.Jobs)
		}
		if again := Run(seed, cfg); again.Digest != r.Digest || again.Steps != r.Steps {
			t.Fatalf("seed %d ran differently twice: digest %x/%x, steps %d/%d", seed, r.Digest, again.Digest, r.Steps, again.Steps)
		}
	}
}

// A master whose offers list no executor hides the predecessor's idle fine
// executors from the new driver (the bug 49f6474 fixed, seen from the
// other side): they stay, holding the dead job's map outputs, and the run
// fails naming them.
func TestPredecessorsExecutorLeftIsCaught(t *testing.T) {
	cfg := Profile(24)
	cfg.hideExecutors = true
	r := Run(24, cfg)
	if !strings.Contains(r.Violation, "driver 1's jobs ended, and a predecessor's work is left running: executor flint-fine-S") ||
		!strings.Contains(r.Violation, "(driver 0's)") {
		t.Fatalf("violation %q, want driver 0's fine executors left running", r.Violation)
	}
}

// A successor not told it takes over the framework launches untagged ids,
// which its predecessor's tasks had: with coarse, the run fails at the
// launch of such an id; with fine (seed 24), an update of an old task
// reaches the new driver first, taken for its own task of that id: the
// FINISHED it counts carries the old driver's shuffle.
func TestSuccessorReusingIDsIsCaught(t *testing.T) {
	for _, c := range []struct {
		seed int64
		want []string
	}{
		{1, []string{"driver 1 launched task id", "which driver 0's task had"}},
		{24, []string{"FINISHED carries the value of shuffle 0, no job of driver 1's"}},
	} {
		cfg := Profile(c.seed)
		cfg.untaggedSuccessor = true
		r := Run(c.seed, cfg)
		for _, w := range c.want {
			if !strings.Contains(r.Violation, w) {
				t.Fatalf("seed %d: violation %q, want %q", c.seed, r.Violation, w)
			}
		}
	}
}

// A FINISHED carrying the value of a shuffle that is no job of the driver
// it reaches (its predecessor's: the new driver's jobs take new shuffle
// ids) is an old task's update counted for the new driver.
func TestPredecessorsUpdateCountedIsCaught(t *testing.T) {
	s, d := bareDriver(t)
	d.inc = &incarnation{n: 1}
	d.base = 3
	d.jobs = []*simJob{{id: 3, shuffle: 3}}
	d.attempts[7] = &attempt{taskSet: "stage-0.0"}
	finished := func(shuffle int) *backend.StatusUpdate {
		out := stagetask.Output{Value: attemptTag(shuffle, 0, 7)}
		raw, err := out.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		enc, err := codec.Gob.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		return &backend.StatusUpdate{TaskID: 7, State: scheduler.Finished, Result: enc}
	}
	d.finishedUpdate(d.attempts[7], finished(3))
	if s.violation != "" {
		t.Fatalf("the driver's own shuffle: violation %q", s.violation)
	}
	d.finishedUpdate(d.attempts[7], finished(0))
	if !strings.Contains(s.violation, "carries the value of shuffle 0, no job of driver 1's") {
		t.Fatalf("violation %q, want shuffle 0's value refused by driver 1", s.violation)
	}
}
