package agent

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/statusupdate"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// tally sums resources by name, whatever their role, reservation or
// allocation: scalars in thousandths (Mesos' fixed-point precision),
// ranges as merged intervals, sets as items.
type tally struct {
	scalars map[string]int64
	ranges  map[string][]mesos.Value_Range
	sets    map[string]map[string]bool
}

func newTally(rss ...[]mesos.Resource) *tally {
	t := &tally{scalars: map[string]int64{}, ranges: map[string][]mesos.Value_Range{}, sets: map[string]map[string]bool{}}
	for _, rs := range rss {
		t.add(rs)
	}
	return t
}

func milli(v float64) int64 { return int64(math.Round(v * 1000)) }

func (t *tally) add(rs []mesos.Resource) {
	for _, r := range rs {
		switch {
		case r.Scalar != nil:
			t.scalars[r.Name] += milli(r.Scalar.Value)
		case r.Ranges != nil:
			t.ranges[r.Name] = mergeRanges(append(append([]mesos.Value_Range(nil), t.ranges[r.Name]...), r.Ranges.Range...))
		case r.Set != nil:
			if t.sets[r.Name] == nil {
				t.sets[r.Name] = map[string]bool{}
			}
			for _, it := range r.Set.Item {
				t.sets[r.Name][it] = true
			}
		}
	}
}

// mergeRanges sorts rs and merges overlapping or adjacent ranges.
func mergeRanges(rs []mesos.Value_Range) []mesos.Value_Range {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Begin < rs[j].Begin })
	var out []mesos.Value_Range
	for _, r := range rs {
		if n := len(out); n > 0 && r.Begin <= out[n-1].End+1 {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

func overlaps(a mesos.Value_Range, rs []mesos.Value_Range) bool {
	for _, r := range rs {
		if a.Begin <= r.End && r.Begin <= a.End {
			return true
		}
	}
	return false
}

func covered(a mesos.Value_Range, rs []mesos.Value_Range) bool {
	for _, r := range rs { // merged: a fits in one range or not at all
		if r.Begin <= a.Begin && a.End <= r.End {
			return true
		}
	}
	return false
}

func formatMilli(v int64) string { return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64) }

func formatRanges(rs []mesos.Value_Range) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.FormatUint(r.Begin, 10) + "-" + strconv.FormatUint(r.End, 10)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// shortfall explains why need does not fit in total with used already
// taken ("" when it fits). Names are checked in sorted order.
func shortfall(total, used, need *tally) string {
	for _, name := range sortedKeys(need.scalars) {
		n := need.scalars[name]
		if n <= 0 {
			continue
		}
		if free := total.scalars[name] - used.scalars[name]; n > free {
			return fmt.Sprintf("%s: needs %s but %s of %s are free", name, formatMilli(n), formatMilli(max(free, 0)), formatMilli(total.scalars[name]))
		}
	}
	for _, name := range sortedKeys(need.ranges) {
		for _, r := range need.ranges[name] {
			if !covered(r, total.ranges[name]) {
				return fmt.Sprintf("%s: %s not among the agent's %s", name, formatRanges([]mesos.Value_Range{r}), formatRanges(total.ranges[name]))
			}
			if overlaps(r, used.ranges[name]) {
				return fmt.Sprintf("%s: %s overlaps %s in use", name, formatRanges([]mesos.Value_Range{r}), formatRanges(used.ranges[name]))
			}
		}
	}
	for _, name := range sortedKeys(need.sets) {
		for _, it := range sortedKeys(need.sets[name]) {
			if !total.sets[name][it] {
				return fmt.Sprintf("%s: %q is not one of the agent's", name, it)
			}
			if used.sets[name][it] {
				return fmt.Sprintf("%s: %q is in use", name, it)
			}
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonMap renders t like Mesos' resource JSON: scalars as numbers (cpus,
// mem, disk and gpus always present), ranges as "[a-b, c-d]", sets as
// "{x, y}".
func (t *tally) jsonMap() map[string]any {
	out := map[string]any{"cpus": 0.0, "mem": 0.0, "disk": 0.0, "gpus": 0.0}
	for k, v := range t.scalars {
		out[k] = float64(v) / 1000
	}
	for k, v := range t.ranges {
		if len(v) > 0 {
			out[k] = formatRanges(v)
		}
	}
	for k, v := range t.sets {
		if len(v) > 0 {
			out[k] = "{" + strings.Join(sortedKeys(v), ", ") + "}"
		}
	}
	return out
}

// usageLocked sums what the agent's executors hold. allocated is what the
// master allocated: live tasks' resources and custom executors'. used adds
// the command executors' allowance of 0.1 cpus and 32 MB, which Mesos
// agents add on their own ("a small overcommit of resources") and which
// therefore does not count against the agent's total at admission.
func (a *Agent) usageLocked() (allocated, used *tally) {
	allocated, used = newTally(), newTally()
	for _, fw := range a.frameworks {
		for _, ex := range fw.executors {
			if ex.state == exTerminated {
				continue
			}
			if ex.command != nil {
				used.add(ex.info.Resources)
			} else {
				allocated.add(ex.info.Resources)
				used.add(ex.info.Resources)
			}
			for _, t := range ex.tasks {
				if !statusupdate.IsTerminal(t.state) {
					allocated.add(t.info.Resources)
					used.add(t.info.Resources)
				}
			}
		}
	}
	return allocated, used
}

// admitLocked returns "" if tasks (and a new executor's resources) fit in
// what the master has not allocated on this agent, else why not.
func (a *Agent) admitLocked(newExecutor []mesos.Resource, tasks []mesos.TaskInfo) string {
	need := newTally(newExecutor)
	for _, t := range tasks {
		need.add(t.Resources)
	}
	allocated, _ := a.usageLocked()
	if s := shortfall(newTally(a.resources), allocated, need); s != "" {
		return "Task assumes outdated resource state: " + s + " on the agent"
	}
	return ""
}

// refuseLocked drops tasks that do not fit, as a Mesos agent drops tasks
// that assume an outdated resource state: TASK_DROPPED for partition-aware
// frameworks, else TASK_LOST, with REASON_INVALID_OFFERS. A new executor
// the master expected is reported exited so the master frees it.
func (a *Agent) refuseLocked(fw *framework, exID mesos.ExecutorID, newExecutor bool, tasks []mesos.TaskInfo, msg string) {
	state := mesos.TASK_LOST
	if hasCapability(fw.info, mesos.FrameworkInfo_Capability_PARTITION_AWARE) {
		state = mesos.TASK_DROPPED
	}
	a.log.WithField("executor", exID.Value).Warn("agent: refusing tasks: " + msg)
	for _, t := range tasks {
		a.agentUpdateLocked(fw, &exID, t.TaskID, state, mesos.REASON_INVALID_OFFERS, msg)
	}
	if newExecutor {
		a.sendLocked(link.AgentMessage{ExecutorExited: &link.ExecutorExited{FrameworkID: fw.id(), ExecutorID: exID, Status: -1}})
	}
}
