package scheduler

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (r *goldenRunner) configure(a map[string]string) {
	c := &r.cfg
	for k, v := range a {
		switch k {
		case "cpus":
			c.TaskCPUs = r.num(v)
		case "maxFailures":
			c.MaxTaskFailures = r.num(v)
		case "wait":
			d := r.dur(v)
			c.LocalityWait = map[Level]time.Duration{ProcessLocal: d, NodeLocal: d, RackLocal: d}
		case "mode":
			m, err := ParseSchedulingMode(v)
			if err != nil {
				r.fatalf("%v", err)
			}
			c.Mode = m
		case "maxResult":
			c.MaxResultSize = int64(r.num(v))
		case "exclude":
			c.Exclude.Enabled = v == "on"
		case "excludeTimeout":
			c.Exclude.Timeout = r.dur(v)
		case "unschedulable":
			c.Exclude.UnschedulableTimeout = r.dur(v)
		case "speculation":
			c.Speculation.Enabled = v == "on"
		case "specInterval":
			c.Speculation.Interval = r.dur(v)
		case "specMin":
			c.Speculation.MinTaskRuntime = r.dur(v)
		case "specQuantile":
			c.Speculation.Quantile, _ = strconv.ParseFloat(v, 64)
		case "specMultiplier":
			c.Speculation.Multiplier, _ = strconv.ParseFloat(v, 64)
		case "t":
		default:
			r.fatalf("unknown config key %q", k)
		}
	}
}

// submit: submit ID job=N stage=N [attempt=N] [pool=P] (tasks=N | prefs=L|L|...)
// where each L is "-" (no preference) or comma-separated host or exec@host.
func (r *goldenRunner) submit(a map[string]string, pos []string) []string {
	ts := TaskSet{ID: pos[0], JobID: int64(r.num(cmp.Or(a["job"], "0"))), StageID: r.num(cmp.Or(a["stage"], "0")),
		StageAttempt: r.num(cmp.Or(a["attempt"], "0")), Pool: a["pool"]}
	if n, ok := a["tasks"]; ok {
		ts.Tasks = make([]TaskSpec, r.num(n))
	}
	if p, ok := a["prefs"]; ok {
		for _, t := range strings.Split(p, "|") {
			var spec TaskSpec
			if t != "-" {
				for _, l := range strings.Split(t, ",") {
					if e, h, ok := strings.Cut(l, "@"); ok {
						spec.Preferred = append(spec.Preferred, Location{Host: h, ExecutorID: e})
					} else {
						spec.Preferred = append(spec.Preferred, Location{Host: l})
					}
				}
			}
			ts.Tasks = append(ts.Tasks, spec)
		}
	}
	if err := r.sched().Submit(ts, r.now); err != nil {
		return []string{"error " + err.Error()}
	}
	return nil
}

// offer: offer exec@host[/rack]:cores ...
func (r *goldenRunner) offer(pos []string) []string {
	var offers []WorkerOffer
	for _, p := range pos {
		eh, cores, _ := strings.Cut(p, ":")
		e, hr, _ := strings.Cut(eh, "@")
		h, rack, _ := strings.Cut(hr, "/")
		offers = append(offers, WorkerOffer{ExecutorID: e, Host: h, Rack: rack, Cores: r.num(cores)})
	}
	var out []string
	for _, l := range r.sched().ResourceOffers(offers, r.now) {
		key := fmt.Sprintf("%s.%d", l.TaskSetID, l.Index)
		if len(r.tids[key]) != l.Attempt {
			r.fatalf("launch %s attempt %d, runner saw %d attempts", key, l.Attempt, len(r.tids[key]))
		}
		r.tids[key] = append(r.tids[key], l.TaskID)
		name := fmt.Sprintf("%s#%d", key, l.Attempt)
		r.byTID[l.TaskID] = name
		s := fmt.Sprintf("launch %s %s %v", name, l.ExecutorID, l.Locality)
		if l.Speculative {
			s += " speculative"
		}
		out = append(out, s)
	}
	return out
}

// ref resolves "ts.idx" (latest attempt) or "ts.idx#n" to a TaskID.
func (r *goldenRunner) ref(s string) TaskID {
	key, att, hasAtt := strings.Cut(s, "#")
	ids := r.tids[key]
	if len(ids) == 0 {
		r.fatalf("no attempts of %s", key)
	}
	if !hasAtt {
		return ids[len(ids)-1]
	}
	n := r.num(att)
	if n >= len(ids) {
		r.fatalf("no attempt %d of %s", n, key)
	}
	return ids[n]
}

// status: status REF finished [size=N] | failed [kind=K] [msg=M] [app] | killed [msg=M] | lost [msg=M]
func (r *goldenRunner) status(a map[string]string, pos []string) []string {
	id := r.ref(pos[0])
	u := Update{}
	switch pos[1] {
	case "running":
		u.State = Running
	case "finished":
		u.State = Finished
		if sz, ok := a["size"]; ok {
			u.ResultSize = int64(r.num(sz))
		}
	case "failed", "killed", "lost":
		u.State = map[string]State{"failed": Failed, "killed": KilledState, "lost": Lost}[pos[1]]
		f := &Failure{Kind: Exception, Message: a["msg"], Stack: a["stack"], ExitCausedByApp: contains(pos, "app")}
		if pos[1] == "killed" {
			f.Kind = Killed
		}
		if k, ok := a["kind"]; ok {
			found := false
			for i, n := range failureKindNames {
				if n == k {
					f.Kind, found = FailureKind(i), true
				}
			}
			if !found {
				r.fatalf("unknown failure kind %q", k)
			}
		}
		u.Failure = f
	default:
		r.fatalf("unknown state %q", pos[1])
	}
	return r.events(r.sched().StatusUpdate(id, u, r.now))
}

func retry(b bool) string {
	if b {
		return "retry"
	}
	return "noretry"
}

func (r *goldenRunner) events(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, r.formatEvent(e))
	}
	return out
}

func (r *goldenRunner) formatEvent(e Event) string {
	until := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return fmt.Sprintf(" until=%v", t.Sub(t0))
	}
	set := func(s string) string {
		if s == "" {
			return ""
		}
		return " set=" + s
	}
	switch e := e.(type) {
	case TaskSucceeded:
		return fmt.Sprintf("succeeded %s", r.byTID[e.TaskID])
	case TaskFailed:
		return fmt.Sprintf("failed %s %v %q %s", r.byTID[e.TaskID], e.Failure.Kind, e.Failure.Message, retry(e.WillRetry))
	case TaskKilled:
		return fmt.Sprintf("killed %s %q %s", r.byTID[e.TaskID], e.Reason, retry(e.WillRetry))
	case KillTask:
		return fmt.Sprintf("killtask %s %s %q", r.byTID[e.TaskID], e.ExecutorID, e.Reason)
	case TaskSetFinished:
		return "finished " + e.TaskSetID
	case TaskSetAborted:
		s := fmt.Sprintf("aborted %s %q", e.TaskSetID, e.Reason)
		if e.LastFailure != nil && e.LastFailure.Stack != "" {
			s += fmt.Sprintf(" stack=%q", e.LastFailure.Stack)
		}
		return s
	case ExecutorExcluded:
		return fmt.Sprintf("excluded executor %s%s%s", e.ExecutorID, set(e.TaskSetID), until(e.Until))
	case NodeExcluded:
		return fmt.Sprintf("excluded node %s%s%s", e.Host, set(e.TaskSetID), until(e.Until))
	}
	return fmt.Sprintf("unknown event %T", e)
}
