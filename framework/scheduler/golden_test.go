package scheduler

import (
	"cmp"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/golden"
)

// The golden scenario scripts in testdata/*.txt drive a scheduler step by
// step; lines starting with "> " after a step list every output that step
// must produce, in order. See testdata/README.txt for the syntax. Run with
// -rewrite to regenerate the expected lines (then review the diff).

var rewrite = flag.Bool("rewrite", false, "rewrite golden files with the actual output")

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type goldenRunner struct {
	t     *testing.T
	file  string
	cfg   Config
	pools []PoolConfig
	s     *TaskScheduler
	now   time.Time
	tids  map[string][]TaskID // "ts.idx" → attempts' TaskIDs by attempt number
	byTID map[TaskID]string   // TaskID → "ts.idx#attempt"
	cur   golden.Step         // the step being run
}

func TestGolden(t *testing.T) {
	golden.RunDir(t, "testdata", *rewrite, func(t *testing.T, file string) func(golden.Step) []string {
		cfg := DefaultConfig()
		cfg.Exclude.Enabled = false
		r := &goldenRunner{t: t, file: file, cfg: cfg, now: t0, tids: map[string][]TaskID{}, byTID: map[TaskID]string{}}
		return func(s golden.Step) []string {
			r.cur = s
			return r.run(s.Tokens)
		}
	})
}

func (r *goldenRunner) fatalf(format string, a ...any) {
	r.t.Fatalf("%s: %s", r.cur, fmt.Sprintf(format, a...))
}

// kv splits key=value arguments (a repeated key keeps its last value) from
// positional ones.
func kv(tokens []string) (map[string]string, []string) {
	m, pos := golden.KV(tokens)
	return golden.Last(m), pos
}

func (r *goldenRunner) dur(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		r.fatalf("bad duration %q", s)
	}
	return d
}

func (r *goldenRunner) num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		r.fatalf("bad number %q", s)
	}
	return n
}

func (r *goldenRunner) sched() *TaskScheduler {
	if r.s == nil {
		r.cfg.Pools = r.pools
		s, err := New(r.cfg, nil)
		if err != nil {
			r.fatalf("New: %v", err)
		}
		r.s = s
	}
	return r.s
}

func (r *goldenRunner) run(tok []string) []string {
	args, pos := kv(tok[1:])
	if t, ok := args["t"]; ok {
		r.now = t0.Add(r.dur(t))
	}
	switch tok[0] {
	case "config":
		r.configure(args)
	case "pool":
		mode, err := ParseSchedulingMode(cmp.Or(args["mode"], "FIFO"))
		if err != nil {
			r.fatalf("%v", err)
		}
		r.pools = append(r.pools, PoolConfig{Name: args["name"], Mode: mode,
			Weight: r.num(cmp.Or(args["weight"], "1")), MinShare: r.num(cmp.Or(args["minShare"], "0"))})
	case "submit":
		return r.submit(args, pos)
	case "offer":
		return r.offer(pos)
	case "status":
		return r.status(args, pos)
	case "lost":
		_, app := args["app"]
		return r.events(r.sched().ExecutorLost(pos[0], Failure{Message: args["msg"], ExitCausedByApp: app || contains(pos, "app")}, r.now))
	case "tick":
		return r.events(r.sched().Tick(r.now))
	case "kill":
		return r.events(r.sched().KillTask(r.ref(pos[0]), args["reason"]))
	case "killset":
		return r.events(r.sched().KillTaskSet(pos[0], args["reason"]))
	case "explain":
		set, idx, _ := strings.Cut(pos[0], ".")
		e := r.sched().Explain(set, r.num(idx), r.now)
		return []string{fmt.Sprintf("explain %v %q", e.Reason, e.Detail)}
	case "wants":
		return []string{fmt.Sprintf("wants %v", r.sched().WantsOffers())}
	default:
		r.fatalf("unknown step %q", tok[0])
	}
	return nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
