package allocation

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/golden"
)

// The scripts in testdata/*.txt drive a Manager step by step (syntax in
// testdata/README.txt); -rewrite regenerates their expected lines.
var rewrite = flag.Bool("rewrite", false, "rewrite golden files with the actual output")

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type goldenRunner struct {
	t     *testing.T
	cur   golden.Step
	cfg   Config
	m     *Manager
	snap  Snapshot
	execs map[string]*Executor
}

func TestGolden(t *testing.T) {
	golden.RunDir(t, "testdata", *rewrite, func(t *testing.T, _ string) func(golden.Step) []string {
		r := &goldenRunner{t: t, cfg: DefaultConfig(), execs: map[string]*Executor{}}
		return func(s golden.Step) []string {
			r.cur = s
			return r.run(s.Tokens)
		}
	})
}

func (r *goldenRunner) fatalf(format string, a ...any) {
	r.t.Fatalf("%s: %s", r.cur, fmt.Sprintf(format, a...))
}

func (r *goldenRunner) at(kv map[string]string) time.Time {
	d, err := time.ParseDuration(kv["t"])
	if err != nil {
		r.fatalf("want t=<duration>: %v", err)
	}
	return t0.Add(d)
}

func (r *goldenRunner) num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		r.fatalf("bad number %q", s)
	}
	return n
}

func (r *goldenRunner) dur(s string) time.Duration {
	if s == "never" {
		return Never
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		r.fatalf("bad duration %q", s)
	}
	return d
}

func (r *goldenRunner) exec(id string) *Executor {
	e := r.execs[id]
	if e == nil {
		r.fatalf("no executor %s", id)
	}
	return e
}

func (r *goldenRunner) run(tokens []string) []string {
	m, pos := golden.KV(tokens)
	kv := golden.Last(m)
	switch pos[0] {
	case "config":
		return r.config(kv)
	case "up":
		r.execs[pos[1]] = &Executor{ID: pos[1], IdleSince: r.at(kv)}
	case "down":
		r.exec(pos[1])
		delete(r.execs, pos[1])
	case "run":
		r.exec(pos[1]).Running = r.num(kv["n"])
	case "idle":
		e := r.exec(pos[1])
		e.Running, e.IdleSince = 0, r.at(kv)
	case "cached", "shuffle":
		on := kv["on"] != "false"
		if pos[0] == "cached" {
			r.exec(pos[1]).Cached = on
		} else {
			r.exec(pos[1]).Shuffle = on
		}
	case "tasks":
		r.snap.Waiting, r.snap.Running = r.num(kv["waiting"]), r.num(kv["running"])
	case "step":
		return r.step(r.at(kv))
	default:
		r.fatalf("unknown step %q", pos[0])
	}
	return nil
}

func (r *goldenRunner) config(kv map[string]string) []string {
	r.cfg, r.m = DefaultConfig(), nil
	for k, v := range kv {
		switch k {
		case "min":
			r.cfg.MinExecutors = r.num(v)
		case "max":
			r.cfg.MaxExecutors = r.num(v)
		case "initial":
			r.cfg.InitialExecutors = r.num(v)
		case "idle":
			r.cfg.ExecutorIdleTimeout = r.dur(v)
		case "cached":
			r.cfg.CachedExecutorIdleTimeout = r.dur(v)
		case "backlog":
			r.cfg.SchedulerBacklogTimeout = r.dur(v)
		case "sustained":
			r.cfg.SustainedSchedulerBacklogTimeout = r.dur(v)
		case "slots":
			r.cfg.TasksPerExecutor = r.num(v)
		case "shuffleService":
			r.cfg.ShuffleService = v == "on"
		default:
			r.fatalf("unknown setting %q", k)
		}
	}
	m, err := New(r.cfg)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	r.m = m
	return []string{fmt.Sprintf("target %d", m.Target())}
}

func (r *goldenRunner) step(now time.Time) []string {
	if r.m == nil {
		r.fatalf("step before a valid config")
	}
	s := r.snap
	s.Executors = nil
	ids := make([]string, 0, len(r.execs))
	for id := range r.execs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s.Executors = append(s.Executors, *r.execs[id])
	}
	d := r.m.Step(now, s)
	out := slices.Clone(d.Reasons)
	if d.Changed {
		out = append(out, fmt.Sprintf("target → %d", d.Target))
	}
	if len(d.Release) > 0 {
		out = append(out, "release "+strings.Join(d.Release, " "))
	}
	return out
}
