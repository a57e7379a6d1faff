package dagscheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/internal/testkit/golden"
)

type goldenRunner struct {
	t     *testing.T
	file  string
	cfg   Config
	s     *Scheduler
	now   time.Time
	nodes []Node
	sets  map[string]*TaskSet
	cur   golden.Step // the step being run
}

func newGoldenRunner(t *testing.T, file string) *goldenRunner {
	return &goldenRunner{t: t, file: file, now: t0, sets: map[string]*TaskSet{}}
}

func (r *goldenRunner) core() *Scheduler {
	if r.s == nil {
		s, err := New(r.cfg)
		if err != nil {
			r.fatalf("New: %v", err)
		}
		r.s = s
	}
	return r.s
}

func (r *goldenRunner) num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		r.fatalf("bad number %q", s)
	}
	return n
}

func (r *goldenRunner) ints(s string) []int {
	if s == "" {
		return nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		out = append(out, r.num(f))
	}
	return out
}

func (r *goldenRunner) dur(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		r.fatalf("bad duration %q", s)
	}
	return d
}

// loc parses exec@host.
func (r *goldenRunner) loc(s string) mapoutput.Location {
	e, h, ok := strings.Cut(s, "@")
	if !ok {
		r.fatalf("want exec@host, got %q", s)
	}
	if h, srv, ok := strings.Cut(h, "~"); ok { // exec@host~server: served by a shared server
		return mapoutput.Location{ExecutorID: e, Host: h, Address: h + ":" + e + "~" + srv}
	}
	return mapoutput.Location{ExecutorID: e, Host: h, Address: h + ":" + e}
}

// goldenServerOf is Config.ServerOf for the scripts' addresses (servers=on):
// the server after "~", else the executor's own.
func goldenServerOf(addr string) string {
	if _, srv, ok := strings.Cut(addr, "~"); ok {
		return srv
	}
	return addr
}

func (r *goldenRunner) run(tok []string) []string {
	a, pos := kv(tok[1:])
	if v := first(a, "t", ""); v != "" {
		r.now = t0.Add(r.dur(v))
	}
	switch tok[0] {
	case "config":
		r.configure(a)
	case "node":
		r.node(a, pos)
	case "job":
		return r.job(a, pos)
	case "success":
		return r.success(a, pos)
	case "fetchfail":
		return r.fetchfail(a, pos)
	case "setfailed":
		st, att := r.setRef(pos[0])
		return r.events(r.core().TaskSetFailed(st, att, first(a, "msg", ""), r.now))
	case "lost":
		l := r.loc(pos[0])
		return r.events(r.core().ExecutorLost(l.ExecutorID, l.Host, slices.Contains(pos, "host"), r.now))
	case "tick":
		return r.events(r.core().Tick(r.now))
	case "cancel":
		return r.events(r.core().CancelJob(int64(r.num(pos[0])), first(a, "reason", ""), r.now))
	case "cancelstage":
		return r.events(r.core().CancelStage(r.num(pos[0]), first(a, "reason", ""), r.now))
	case "cache":
		l := r.loc(pos[2])
		r.core().CacheAdded(NodeID(pos[0]), r.num(strings.TrimPrefix(pos[1], "p")), scheduler.Location{Host: l.Host, ExecutorID: l.ExecutorID})
	case "release":
		return []string{fmt.Sprintf("released %v", r.core().ReleaseShuffle(r.num(pos[0])))}
	case "explain":
		e := r.core().Explain(r.num(pos[0]))
		return []string{fmt.Sprintf("explain %v %q", e.State, e.Detail)}
	case "tracker":
		sh := r.num(pos[0])
		tr := r.core().Tracker()
		return []string{fmt.Sprintf("tracker shuffle=%d available=%d missing=%s epoch=%d", sh, tr.NumAvailable(sh), ints(tr.Missing(sh)), tr.Epoch())}
	case "progress":
		var out []string
		for _, p := range r.core().Progress() {
			out = append(out, fmt.Sprintf("progress stage %d.%d %d/%d", p.StageID, p.Attempt, p.Done, p.NumTasks))
		}
		return out
	default:
		r.fatalf("unknown step %q", tok[0])
	}
	return nil
}

func (r *goldenRunner) configure(a map[string][]string) {
	for k, vs := range a {
		v := vs[0]
		switch k {
		case "maxAttempts":
			r.cfg.MaxConsecutiveStageAttempts = r.num(v)
		case "delay":
			r.cfg.ResubmitDelay = r.dur(v)
		case "locality":
			r.cfg.DisableReduceLocality = v == "off"
		case "onHost":
			r.cfg.UnregisterOutputOnHost = v == "on"
		case "shuffleService":
			r.cfg.ShuffleService = v == "on"
		case "servers":
			r.cfg.ServerOf = nil
			if v == "on" {
				r.cfg.ServerOf = goldenServerOf
			}
		case "t":
		default:
			r.fatalf("unknown config key %q", k)
		}
	}
}

// node ID parts=N [name=S] [narrow=P] [range=P:off] [groups=P:0+1|2] [shuffle=P:id]
// [prefs=h1,h2|-|...] [cached] [indeterminate]
func (r *goldenRunner) node(a map[string][]string, pos []string) {
	n := Node{ID: NodeID(pos[0]), Name: first(a, "name", ""), Partitions: r.num(first(a, "parts", "1")),
		Cached: slices.Contains(pos, "cached"), Indeterminate: slices.Contains(pos, "indeterminate")}
	for _, p := range a["narrow"] {
		n.Deps = append(n.Deps, Dep{Kind: OneToOne, Parent: NodeID(p)})
	}
	for _, p := range a["range"] {
		par, off, _ := strings.Cut(p, ":")
		n.Deps = append(n.Deps, Dep{Kind: Range, Parent: NodeID(par), Offset: r.num(off)})
	}
	for _, p := range a["groups"] {
		par, gs, _ := strings.Cut(p, ":")
		d := Dep{Kind: Groups, Parent: NodeID(par)}
		for _, g := range strings.Split(gs, "|") {
			d.Groups = append(d.Groups, r.ints(strings.ReplaceAll(g, "+", ",")))
		}
		n.Deps = append(n.Deps, d)
	}
	for _, p := range a["shuffle"] {
		par, id, _ := strings.Cut(p, ":")
		n.Deps = append(n.Deps, Dep{Kind: Shuffle, Parent: NodeID(par), ShuffleID: r.num(id)})
	}
	if p := first(a, "prefs", ""); p != "" {
		for _, part := range strings.Split(p, "|") {
			var locs []scheduler.Location
			if part != "-" {
				for _, h := range strings.Split(part, ",") {
					locs = append(locs, scheduler.Location{Host: h})
				}
			}
			n.Preferred = append(n.Preferred, locs)
		}
	}
	r.nodes = append(r.nodes, n)
}

// job final=N [name=S] [parts=0,1] [held]
func (r *goldenRunner) job(a map[string][]string, pos []string) []string {
	spec := JobSpec{Name: first(a, "name", "job"), Final: NodeID(first(a, "final", "")), Nodes: r.reachable(NodeID(first(a, "final", ""))),
		ResultsHeld: slices.Contains(pos, "held")}
	if p, ok := a["parts"]; ok {
		spec.Partitions = r.ints(p[0])
		if spec.Partitions == nil {
			spec.Partitions = []int{}
		}
	}
	_, ev, err := r.core().SubmitJob(spec, r.now)
	if err != nil {
		return []string{"error " + err.Error()}
	}
	return r.events(ev)
}

// reachable returns the declared nodes final depends on (with final).
func (r *goldenRunner) reachable(final NodeID) []Node {
	byID := map[NodeID]Node{}
	for _, n := range r.nodes {
		byID[n.ID] = n
	}
	seen := map[NodeID]bool{}
	var out []Node
	var walk func(id NodeID)
	walk = func(id NodeID) {
		n, ok := byID[id]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		out = append(out, n)
		for _, d := range n.Deps {
			walk(d.Parent)
		}
	}
	walk(final)
	return out
}

func (r *goldenRunner) setRef(s string) (int, int) {
	st, att, ok := strings.Cut(s, ".")
	if !ok {
		r.fatalf("want stage.attempt, got %q", s)
	}
	return r.num(st), r.num(att)
}

// task finds the task of set ref computing partition pN.
func (r *goldenRunner) task(ref, part string) Task {
	ts := r.sets[ref]
	if ts == nil {
		r.fatalf("no task set %s was submitted", ref)
	}
	p := r.num(strings.TrimPrefix(part, "p"))
	i := slices.Index(ts.Partitions, p)
	if i < 0 {
		r.fatalf("task set %s has no partition %d", ref, p)
	}
	return ts.Task(i)
}

// success SET pN on=exec@host [sizes=a,b,...]
func (r *goldenRunner) success(a map[string][]string, pos []string) []string {
	t := r.task(pos[0], pos[1])
	l := r.loc(first(a, "on", "e1@h1"))
	te := TaskEnd{Task: t, Reason: Succeeded, ExecutorID: l.ExecutorID, Host: l.Host}
	if t.Kind == MapTask {
		sizes := make([]uint64, t.NumReduces)
		for i := range sizes {
			sizes[i] = 1
		}
		if s, ok := a["sizes"]; ok {
			for i, v := range r.ints(s[0]) {
				sizes[i] = uint64(v)
			}
		}
		te.MapStatus = &mapoutput.Status{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Location: l, Sizes: sizes}
		if v, ok := a["status"]; ok && v[0] == "none" {
			te.MapStatus = nil
		}
	}
	return r.events(r.core().TaskEnded(te, r.now))
}

// fetchfail SET pN shuffle=S map=M from=exec@host [msg=...]
func (r *goldenRunner) fetchfail(a map[string][]string, pos []string) []string {
	t := r.task(pos[0], pos[1])
	ff := &mapoutput.FetchFailure{ShuffleID: r.num(first(a, "shuffle", "0")), MapIndex: r.num(first(a, "map", "0")),
		ReduceIndex: t.Partition, Message: first(a, "msg", "connection refused")}
	if f := first(a, "from", ""); f != "" {
		l := r.loc(f)
		ff.ExecutorID, ff.Host, ff.Address = l.ExecutorID, l.Host, l.Address
	}
	return r.events(r.core().TaskEnded(TaskEnd{Task: t, Reason: FetchFailed, FetchFailure: ff}, r.now))
}

func ints(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	return strings.ReplaceAll(joinInts(v), " ", "")
}

func (r *goldenRunner) events(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, r.format(e))
	}
	return out
}

func (r *goldenRunner) format(e Event) string {
	switch e := e.(type) {
	case SubmitTaskSet:
		ts := e.TaskSet
		r.sets[ts.ID] = ts
		s := fmt.Sprintf("submit %s %v job=%d node=%s", ts.ID, ts.Kind, ts.JobID, ts.Node)
		if ts.Kind == MapTask {
			s += fmt.Sprintf(" shuffle=%d reduces=%d", ts.ShuffleID, ts.NumReduces)
		}
		s += fmt.Sprintf(" parts=%s epoch=%d", ints(ts.Partitions), ts.Epoch)
		if len(ts.Reads) > 0 {
			s += " reads=" + ints(ts.Reads)
		}
		if slices.ContainsFunc(ts.Preferred, func(l []scheduler.Location) bool { return len(l) > 0 }) {
			var ps []string
			for _, l := range ts.Preferred {
				if len(l) == 0 {
					ps = append(ps, "-")
					continue
				}
				var hs []string
				for _, x := range l {
					if x.ExecutorID != "" {
						hs = append(hs, x.ExecutorID+"@"+x.Host)
					} else {
						hs = append(hs, x.Host)
					}
				}
				ps = append(ps, strings.Join(hs, ","))
			}
			s += " prefs=" + strings.Join(ps, "|")
		}
		return s
	case CancelTaskSet:
		return fmt.Sprintf("cancel %s %q", e.TaskSetID, e.Reason)
	case ResultAccepted:
		return fmt.Sprintf("result job=%d out=%d from %d.%d", e.JobID, e.OutputID, e.Task.StageID, e.Task.StageAttempt)
	case ResultsRevoked:
		return fmt.Sprintf("revoked job=%d results=%d %q", e.JobID, e.Count, e.Reason)
	case JobStarted:
		return fmt.Sprintf("job %d started stages=%s skipped=%s", e.JobID, ints(e.Stages), ints(e.Skipped))
	case JobSucceeded:
		return fmt.Sprintf("job %d succeeded", e.JobID)
	case JobFailed:
		if e.Cancelled {
			return fmt.Sprintf("job %d cancelled %q", e.JobID, e.Reason)
		}
		return fmt.Sprintf("job %d failed %q", e.JobID, e.Reason)
	case StageSubmitted:
		return fmt.Sprintf("stage %d.%d submitted %q tasks=%d parents=%s", e.StageID, e.Attempt, e.Name, e.NumTasks, ints(e.Parents))
	case StageCompleted:
		if e.Failure == "" {
			return fmt.Sprintf("stage %d.%d completed", e.StageID, e.Attempt)
		}
		retry := "noretry"
		if e.WillRetry {
			retry = "retry"
		}
		return fmt.Sprintf("stage %d.%d failed %q %s", e.StageID, e.Attempt, e.Failure, retry)
	case OutputsLost:
		return fmt.Sprintf("lost shuffle=%d maps=%s %q", e.ShuffleID, ints(e.MapIndex), e.Reason)
	case ResubmitScheduled:
		return fmt.Sprintf("resubmit at=%v", e.At.Sub(t0))
	case TaskIgnored:
		return fmt.Sprintf("ignored %v task %d.%d p%d %q", e.Task.Kind, e.Task.StageID, e.Task.StageAttempt, e.Task.Partition, e.Reason)
	}
	return fmt.Sprintf("unknown event %T", e)
}
