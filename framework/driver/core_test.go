package driver

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// TestDriverLoop runs the golden scripts in testdata/driver/*.txt against
// the driver's core: each command is one step of the loop (its inputs at
// one instant), and the expected output lists that step's effects in the
// order the loop applies them — the backend's batch (kills, releases,
// launches, demand), then listener events, jobs woken and fetches
// started. Regenerate with `go test ./framework -run TestDriverLoop -rewrite`
// and read the diff.
//
// Commands:
//
//	config task-cpus=N max-failures=N locality-wait=D    (before the first step)
//	config alloc-min=N alloc-max=N alloc-initial=N alloc-idle=D alloc-cached-idle=D alloc-backlog=D [alloc-service]
//	                                                      (dynamic allocation on, Spark's defaults for what is not named)
//	cached exec=ID node=NODE part=N                       (the executor holds a cached partition)
//	submit job=NAME tasks=N [prefer=HOST,...] [pool=P]
//	up exec=ID host=H cores=N
//	lost exec=ID [by-app]
//	update task=ID state=finished|failed|killed|lost [msg=TEXT] [indirect=BLOCK size=N]
//	fetched task=ID [err=TEXT]                           (the fetch of task ID's kept result ended)
//	cancel job=NAME
//	abort reason=TEXT
//	tick [advance=DURATION]
//	stop
//	step                                                  (each input line is one of the above; one step for all)
func TestDriverLoop(t *testing.T) {
	datadriven.Walk(t, "testdata/driver", func(t *testing.T, path string) {
		h := &loopHarness{t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), jobs: map[string]*jobState{},
			fetching: map[uint64]fetch{}, cfg: scheduler.DefaultConfig()}
		h.cfg.Exclude.Enabled = false
		datadriven.RunTest(t, path, h.run)
	})
}

type loopHarness struct {
	t        *testing.T
	cfg      scheduler.Config
	core     *driverCore
	now      time.Time
	jobs     map[string]*jobState // by the script's name
	names    map[*jobState]string
	fetching map[uint64]fetch
	errs     []string // inputs refused in this step
	alloc    *allocation.Config
}

// allocOption sets one dynamic allocation setting of the script's config.
func (h *loopHarness) allocOption(t *testing.T, key, v string) {
	if h.alloc == nil {
		c := allocation.DefaultConfig()
		h.alloc = &c
	}
	dur := func() time.Duration {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	switch key {
	case "alloc-min":
		h.alloc.MinExecutors = atoi(t, v)
	case "alloc-max":
		h.alloc.MaxExecutors = atoi(t, v)
	case "alloc-initial":
		h.alloc.InitialExecutors = atoi(t, v)
	case "alloc-idle":
		h.alloc.ExecutorIdleTimeout = dur()
	case "alloc-cached-idle":
		h.alloc.CachedExecutorIdleTimeout = dur()
	case "alloc-backlog":
		h.alloc.SchedulerBacklogTimeout, h.alloc.SustainedSchedulerBacklogTimeout = dur(), dur()
	case "alloc-service":
		h.alloc.ShuffleService = true
	}
}

func (h *loopHarness) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd == "config" {
		for _, a := range d.CmdArgs {
			v := ""
			if len(a.Vals) > 0 {
				v = a.Vals[0]
			}
			switch a.Key {
			case "task-cpus":
				h.cfg.TaskCPUs = atoi(t, v)
			case "max-failures":
				h.cfg.MaxTaskFailures = atoi(t, v)
			case "alloc-min", "alloc-max", "alloc-initial", "alloc-idle", "alloc-cached-idle", "alloc-backlog", "alloc-service":
				h.allocOption(t, a.Key, v)
			case "locality-wait":
				w, err := time.ParseDuration(v)
				if err != nil {
					t.Fatal(err)
				}
				h.cfg.LocalityWait = map[scheduler.Level]time.Duration{scheduler.ProcessLocal: w, scheduler.NodeLocal: w, scheduler.RackLocal: w}
			default:
				t.Fatalf("%s: unknown config %q", d.Pos, a.Key)
			}
		}
		return ""
	}
	if h.core == nil {
		sched, err := scheduler.New(h.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		log := logrus.New()
		log.SetOutput(io.Discard)
		h.core = newDriverCore(sched, log, func() bool { return true })
		h.names = map[*jobState]string{}
		if h.alloc != nil {
			if err := h.core.setAllocation(*h.alloc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d.Cmd == "step" {
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			cmd, args := parseLine(t, line)
			h.input(t, cmd, args)
		}
	} else {
		args := map[string]string{}
		for _, a := range d.CmdArgs {
			args[a.Key] = strings.Join(a.Vals, ",")
		}
		h.input(t, d.Cmd, args)
	}
	return h.render(h.core.ready(h.now))
}

func parseLine(t *testing.T, line string) (string, map[string]string) {
	f := strings.Fields(line)
	if len(f) == 0 {
		t.Fatalf("empty step line")
	}
	args := map[string]string{}
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		args[k] = v
	}
	return f[0], args
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// input applies one input to the core, as the loop does.
func (h *loopHarness) input(t *testing.T, cmd string, a map[string]string) {
	c := h.core
	switch cmd {
	case "submit":
		job := &Job{Name: a["job"], Pool: a["pool"], Tasks: make([]Task, atoi(t, a["tasks"]))}
		if p := a["prefer"]; p != "" {
			for i := range job.Tasks {
				for _, host := range strings.Split(p, ",") {
					job.Tasks[i].Preferred = append(job.Tasks[i].Preferred, scheduler.Location{Host: host})
				}
			}
		}
		js, err := c.submit(job, h.now)
		if err != nil {
			h.errs = append(h.errs, fmt.Sprintf("submit %s: %v", a["job"], err))
			return
		}
		h.jobs[a["job"]], h.names[js] = js, a["job"]
	case "up":
		c.executorUp(a["exec"], a["host"], atoi(t, a["cores"]), h.now)
	case "lost":
		_, byApp := a["by-app"]
		c.executorLost(a["exec"], "test", byApp, h.now)
	case "update":
		c.statusUpdate(h.update(t, a), h.now)
	case "fetched":
		id, err := strconv.ParseUint(a["task"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := h.fetching[id]
		if !ok {
			t.Fatalf("no fetch of task %d started", id)
		}
		delete(h.fetching, id)
		var ferr error
		if e := a["err"]; e != "" {
			ferr = fmt.Errorf("%s", e)
		}
		c.fetched(f.u, f.ind, make([]byte, f.ind.Size), ferr, h.now)
	case "cancel":
		c.cancel(h.jobs[a["job"]], fmt.Errorf("cancelled by the script"), h.now)
	case "abort":
		c.abort(a["reason"], h.now)
	case "tick":
		if adv := a["advance"]; adv != "" {
			d, err := time.ParseDuration(adv)
			if err != nil {
				t.Fatal(err)
			}
			h.now = h.now.Add(d)
		}
		c.tick(h.now)
	case "stop":
		c.stop(h.now)
	case "cached":
		c.dag.CacheAdded(dagscheduler.NodeID(a["node"]), atoi(t, a["part"]), scheduler.Location{ExecutorID: a["exec"], Host: c.execs[a["exec"]].host})
	default:
		t.Fatalf("unknown command %q", cmd)
	}
}

func (h *loopHarness) update(t *testing.T, a map[string]string) *backend.StatusUpdate {
	id, err := strconv.ParseUint(a["task"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	u := &backend.StatusUpdate{TaskID: id}
	if at, ok := h.core.running[scheduler.TaskID(id)]; ok {
		u.Attempt, u.ExecutorID = at.attempt, at.executor
	}
	switch a["state"] {
	case "finished":
		u.State = scheduler.Finished
		if b := a["indirect"]; b != "" {
			u.Indirect = &backend.IndirectResult{ExecutorID: u.ExecutorID, BlockID: b, Size: int64(atoi(t, a["size"]))}
		} else {
			u.Result = []byte("ok")
		}
	case "failed":
		u.State = scheduler.Failed
		u.Failure = &scheduler.Failure{Kind: scheduler.Exception, Message: a["msg"]}
	case "killed":
		u.State = scheduler.KilledState
	case "lost":
		u.State = scheduler.Lost
		u.Failure = &scheduler.Failure{Kind: scheduler.ExecutorLost, Message: a["msg"]}
	default:
		t.Fatalf("unknown state %q", a["state"])
	}
	return u
}

// render prints a step's output in the order the loop applies it.
func (h *loopHarness) render(st step) string {
	var b strings.Builder
	for _, e := range h.errs {
		fmt.Fprintf(&b, "error %s\n", e)
	}
	h.errs = nil
	for _, k := range st.Kills {
		fmt.Fprintf(&b, "kill task=%d exec=%s: %s\n", k.TaskID, k.ExecutorID, k.Reason)
	}
	for _, r := range st.Releases {
		fmt.Fprintf(&b, "release exec=%s block=%s\n", r.ExecutorID, r.BlockID)
	}
	for _, l := range st.Launches {
		fmt.Fprintf(&b, "launch task=%d exec=%s job=%s index=%d attempt=%d cpus=%d\n", l.TaskID, l.ExecutorID,
			h.jobName(l.TaskSetID), l.Index, l.Attempt, l.CPUs)
	}
	if a := st.Allocation; a != nil {
		fmt.Fprintf(&b, "allocation target=%d\n", a.Target)
		for _, r := range a.Release {
			fmt.Fprintf(&b, "allocation release exec=%s: %s\n", r.ExecutorID, r.Reason)
		}
	}
	if d := st.Demand; d != nil {
		fmt.Fprintf(&b, "demand waiting=%t", d.Waiting)
		for _, host := range slices.Sorted(maps.Keys(d.HostPrefs)) {
			fmt.Fprintf(&b, " %s:%d", host, d.HostPrefs[host])
		}
		b.WriteString("\n")
	}
	for _, e := range st.events {
		fmt.Fprintf(&b, "event %s\n", describeEvent(e))
	}
	for _, js := range st.done {
		if js.err != nil {
			fmt.Fprintf(&b, "job %s failed: %s\n", h.names[js], js.err.Reason)
		} else {
			fmt.Fprintf(&b, "job %s done: %d results\n", h.names[js], len(js.results))
		}
	}
	for _, f := range st.fetches {
		h.fetching[f.u.TaskID] = f
		fmt.Fprintf(&b, "fetch task=%d exec=%s block=%s\n", f.u.TaskID, f.ind.ExecutorID, f.ind.BlockID)
	}
	if b.Len() == 0 {
		return "(nothing)\n"
	}
	return b.String()
}

func (h *loopHarness) jobName(setID string) string {
	if js := h.core.jobs[setID]; js != nil {
		if n, ok := h.names[js.run.umbrella]; ok {
			return n
		}
	}
	return "?" + setID
}

func describeEvent(e event.Event) string {
	switch e := e.(type) {
	case event.JobStart:
		return fmt.Sprintf("JobStart job=%d tasks=%d", e.JobID, e.NumTasks)
	case event.StageSubmitted:
		return fmt.Sprintf("StageSubmitted stage=%d", e.StageID)
	case event.TaskStart:
		return fmt.Sprintf("TaskStart task=%d index=%d attempt=%d exec=%s locality=%s", e.TaskID, e.Index, e.Attempt, e.ExecutorID, e.Locality)
	case event.TaskEnd:
		s := fmt.Sprintf("TaskEnd task=%d index=%d attempt=%d exec=%s %s", e.TaskID, e.Index, e.Attempt, e.ExecutorID, e.State)
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		return s
	case event.StageCompleted:
		s := fmt.Sprintf("StageCompleted stage=%d", e.StageID)
		if e.FailureReason != "" {
			s += " failed: " + e.FailureReason
		}
		return s
	case event.JobEnd:
		if e.Err != nil {
			return fmt.Sprintf("JobEnd job=%d failed", e.JobID)
		}
		return fmt.Sprintf("JobEnd job=%d", e.JobID)
	case event.ExecutorAdded:
		return fmt.Sprintf("ExecutorAdded exec=%s host=%s cores=%d", e.ExecutorID, e.Host, e.Cores)
	case event.ExecutorRemoved:
		return fmt.Sprintf("ExecutorRemoved exec=%s: %s", e.ExecutorID, e.Reason)
	}
	return fmt.Sprintf("%T", e)
}
