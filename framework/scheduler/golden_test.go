package scheduler

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The golden scenario scripts in testdata/*.txt drive a scheduler step by
// step; lines starting with "> " after a step list every output that step
// must produce, in order. See testdata/README.txt for the syntax.

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type goldenRunner struct {
	t        *testing.T
	file     string
	cfg      Config
	pools    []PoolConfig
	s        *TaskScheduler
	now      time.Time
	tids     map[string][]TaskID // "ts.idx" → attempts' TaskIDs by attempt number
	byTID    map[TaskID]string   // TaskID → "ts.idx#attempt"
	pending  []string            // outputs of the current step
	stepLine int
	step     string
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "README.txt" {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runGolden(t, f) })
	}
}

func runGolden(t *testing.T, file string) {
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	cfg := DefaultConfig()
	cfg.Exclude.Enabled = false
	r := &goldenRunner{t: t, file: file, cfg: cfg, now: t0, tids: map[string][]TaskID{}, byTID: map[TaskID]string{}}
	var want []string
	sc := bufio.NewScanner(fh)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, ">") {
			want = append(want, strings.TrimSpace(strings.TrimPrefix(text, ">")))
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		r.check(want)
		want = nil
		r.stepLine, r.step = line, text
		r.pending = r.run(tokenize(t, text))
	}
	r.check(want)
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
}

func (r *goldenRunner) check(want []string) {
	got := r.pending
	r.pending = nil
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		r.t.Errorf("%s:%d: %s\n got:\n  > %s\nwant:\n  > %s", r.file, r.stepLine, r.step,
			strings.Join(got, "\n  > "), strings.Join(want, "\n  > "))
	}
}

func (r *goldenRunner) fatalf(format string, a ...any) {
	r.t.Fatalf("%s:%d: %s: %s", r.file, r.stepLine, r.step, fmt.Sprintf(format, a...))
}

// tokenize splits on spaces, keeping "quoted strings" (Go syntax) whole.
func tokenize(t *testing.T, s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		end := strings.IndexByte(s, ' ')
		if q := strings.IndexByte(s, '"'); q >= 0 && (end < 0 || q < end) {
			rest := s[q:]
			n := 1
			for n < len(rest) && rest[n] != '"' {
				if rest[n] == '\\' {
					n++
				}
				n++
			}
			uq, err := strconv.Unquote(rest[:n+1])
			if err != nil {
				t.Fatalf("bad quoted string in %q: %v", s, err)
			}
			out = append(out, s[:q]+uq)
			s = rest[n+1:]
			continue
		}
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func kv(args []string) (map[string]string, []string) {
	m := map[string]string{}
	var pos []string
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			m[k] = v
		} else {
			pos = append(pos, a)
		}
	}
	return m, pos
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
