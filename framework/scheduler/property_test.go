package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// propHarness plays a backend: it offers each executor its free cores,
// tracks running attempts and checks invariants on every output.
type propHarness struct {
	t       *rapid.T
	s       *TaskScheduler
	cpus    int
	now     time.Time
	cores   map[string]int // executor → total cores
	host    map[string]string
	used    map[string]int
	running map[TaskID]Launch
	ended   []TaskID
	sets    map[string]int // set → number of tasks
	done    map[string]string
	succ    map[string]int // "set.idx" → successes
	nextExe int
}

func (h *propHarness) addExecutor() {
	id := fmt.Sprintf("e%d", h.nextExe)
	h.nextExe++
	h.cores[id] = rapid.IntRange(h.cpus, 4).Draw(h.t, "cores")
	h.host[id] = fmt.Sprintf("h%d", rapid.IntRange(0, 3).Draw(h.t, "host"))
}

func (h *propHarness) execs() []string {
	ids := make([]string, 0, len(h.cores))
	for id := range h.cores {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (h *propHarness) offer(ids []string) {
	var offers []WorkerOffer
	for _, id := range ids {
		offers = append(offers, WorkerOffer{ExecutorID: id, Host: h.host[id], Rack: "r" + h.host[id][1:], Cores: h.cores[id] - h.used[id]})
	}
	perOffer := map[string]int{}
	for _, l := range h.s.ResourceOffers(offers, h.now) {
		if _, ok := h.running[l.TaskID]; ok || slices.Contains(h.ended, l.TaskID) {
			h.t.Fatalf("TaskID %d launched twice", l.TaskID)
		}
		if why, ok := h.done[l.TaskSetID]; ok {
			h.t.Fatalf("launch %+v for a set already %s", l, why)
		}
		if h.succ[fmt.Sprintf("%s.%d", l.TaskSetID, l.Index)] > 0 {
			h.t.Fatalf("launch %+v of an index that already succeeded", l)
		}
		perOffer[l.ExecutorID] += l.CPUs
		h.used[l.ExecutorID] += l.CPUs
		h.running[l.TaskID] = l
	}
	for _, o := range offers {
		if perOffer[o.ExecutorID] > max(o.Cores, 0) {
			h.t.Fatalf("offer %+v over-committed: %d cpus launched", o, perOffer[o.ExecutorID])
		}
		if h.used[o.ExecutorID] > h.cores[o.ExecutorID] {
			h.t.Fatalf("executor %s runs %d cpus of %d", o.ExecutorID, h.used[o.ExecutorID], h.cores[o.ExecutorID])
		}
	}
}

func (h *propHarness) end(id TaskID) {
	if l, ok := h.running[id]; ok {
		h.used[l.ExecutorID] -= l.CPUs
		delete(h.running, id)
		h.ended = append(h.ended, id)
	}
}

func (h *propHarness) events(evs []Event) {
	for _, e := range evs {
		switch e := e.(type) {
		case TaskSucceeded:
			key := fmt.Sprintf("%s.%d", e.TaskSetID, e.Index)
			if h.succ[key]++; h.succ[key] > 1 {
				h.t.Fatalf("%s succeeded twice", key)
			}
			if _, ok := h.done[e.TaskSetID]; ok {
				h.t.Fatalf("%s succeeded after its set was %s", key, h.done[e.TaskSetID])
			}
		case TaskSetFinished:
			for i := range h.sets[e.TaskSetID] {
				if h.succ[fmt.Sprintf("%s.%d", e.TaskSetID, i)] != 1 {
					h.t.Fatalf("%s finished but index %d did not succeed once", e.TaskSetID, i)
				}
			}
			h.setDone(e.TaskSetID, "finished")
		case TaskSetAborted:
			h.setDone(e.TaskSetID, "aborted")
		}
	}
}

func (h *propHarness) setDone(id, why string) {
	if prev, ok := h.done[id]; ok {
		h.t.Fatalf("set %s %s after being %s", id, why, prev)
	}
	h.done[id] = why
}

func (h *propHarness) randomRunning() (TaskID, bool) {
	if len(h.running) == 0 {
		return 0, false
	}
	ids := make([]TaskID, 0, len(h.running))
	for id := range h.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return rapid.SampledFrom(ids).Draw(h.t, "task"), true
}

func newPropHarness(t *rapid.T) *propHarness {
	cfg := DefaultConfig()
	cfg.TaskCPUs = rapid.IntRange(1, 2).Draw(t, "cpus")
	cfg.MaxTaskFailures = rapid.IntRange(1, 4).Draw(t, "maxFailures")
	cfg.Exclude.Enabled = rapid.Bool().Draw(t, "exclude")
	cfg.Speculation.Enabled = rapid.Bool().Draw(t, "speculation")
	cfg.MaxResultSize = int64(rapid.SampledFrom([]int{0, 1000}).Draw(t, "maxResult"))
	if rapid.Bool().Draw(t, "fair") {
		cfg.Mode = FAIR
		cfg.Pools = []PoolConfig{{Name: "a", Weight: 2, Mode: FAIR}, {Name: "b", Weight: 1, MinShare: 1}}
	}
	s, err := New(cfg, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1)))
	if err != nil {
		t.Fatal(err)
	}
	h := &propHarness{t: t, s: s, cpus: cfg.TaskCPUs, now: t0, cores: map[string]int{}, host: map[string]string{},
		used: map[string]int{}, running: map[TaskID]Launch{}, sets: map[string]int{}, done: map[string]string{}, succ: map[string]int{}}
	for range rapid.IntRange(1, 4).Draw(t, "executors") {
		h.addExecutor()
	}
	return h
}

func (h *propHarness) submit() {
	id := fmt.Sprintf("ts%d", len(h.sets))
	n := rapid.IntRange(1, 6).Draw(h.t, "tasks")
	ts := TaskSet{ID: id, JobID: int64(len(h.sets)), StageID: len(h.sets), Pool: rapid.SampledFrom([]string{"", "a", "b"}).Draw(h.t, "pool")}
	for range n {
		var spec TaskSpec
		if rapid.Bool().Draw(h.t, "pref") {
			spec.Preferred = []Location{{Host: fmt.Sprintf("h%d", rapid.IntRange(0, 4).Draw(h.t, "phost"))}}
		}
		ts.Tasks = append(ts.Tasks, spec)
	}
	if err := h.s.Submit(ts, h.now); err != nil {
		h.t.Fatal(err)
	}
	h.sets[id] = n
}

func (h *propHarness) update() {
	id, ok := h.randomRunning()
	if !ok {
		return
	}
	u := Update{State: rapid.SampledFrom([]State{Finished, Finished, Failed, KilledState, Lost}).Draw(h.t, "state"),
		ResultSize: int64(rapid.IntRange(0, 300).Draw(h.t, "size"))}
	if u.State == Failed {
		u.Failure = &Failure{Kind: rapid.SampledFrom([]FailureKind{Exception, Panic, ResultLost, DecodeError}).Draw(h.t, "kind"), Message: "x"}
	}
	h.end(id)
	h.events(h.s.StatusUpdate(id, u, h.now))
}

func (h *propHarness) step() {
	switch rapid.IntRange(0, 9).Draw(h.t, "action") {
	case 0:
		h.submit()
	case 1, 2, 3:
		ids := h.execs()
		h.offer(rapid.SliceOfDistinct(rapid.SampledFrom(ids), func(s string) string { return s }).Draw(h.t, "offered"))
	case 4, 5, 6:
		h.update()
	case 7:
		if len(h.ended) > 0 { // duplicate delivery must be ignored
			id := rapid.SampledFrom(h.ended).Draw(h.t, "dup")
			if evs := h.s.StatusUpdate(id, Update{State: Finished}, h.now); len(evs) > 0 {
				h.t.Fatalf("duplicate update of %d produced %v", id, evs)
			}
		}
	case 8:
		ids := h.execs()
		id := rapid.SampledFrom(ids).Draw(h.t, "lost")
		for tid, l := range h.running {
			if l.ExecutorID == id {
				h.end(tid)
			}
		}
		delete(h.cores, id)
		h.events(h.s.ExecutorLost(id, Failure{Message: "lost", ExitCausedByApp: rapid.Bool().Draw(h.t, "app")}, h.now))
		h.addExecutor()
	case 9:
		h.now = h.now.Add(time.Duration(rapid.IntRange(1, 5000).Draw(h.t, "ms")) * time.Millisecond)
		h.events(h.s.Tick(h.now))
	}
}

// drain finishes everything: every index must end up succeeded exactly once
// or in an aborted set.
func (h *propHarness) drain() {
	for round := 0; round < 200 && (len(h.done) < len(h.sets) || len(h.running) > 0); round++ {
		h.now = h.now.Add(2 * time.Hour)
		h.events(h.s.Tick(h.now))
		h.offer(h.execs())
		ids := make([]TaskID, 0, len(h.running))
		for id := range h.running {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			h.end(id)
			h.events(h.s.StatusUpdate(id, Update{State: Finished}, h.now))
		}
	}
	for id, n := range h.sets {
		why, ok := h.done[id]
		if !ok {
			h.t.Fatalf("set %s never finished nor aborted: %+v", id, h.s.Explain(id, 0, h.now))
		}
		if why == "finished" {
			for i := range n {
				if h.succ[fmt.Sprintf("%s.%d", id, i)] != 1 {
					h.t.Fatalf("%s.%d did not succeed exactly once", id, i)
				}
			}
		}
	}
	if h.s.WantsOffers() || h.s.RunningTasks() != 0 {
		h.t.Fatalf("after drain: wants=%v running=%d", h.s.WantsOffers(), h.s.RunningTasks())
	}
}

func TestPropertyInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t)
		h.submit()
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			h.step()
		}
		h.drain()
	})
}

// TestPropertyFairShares: pools with unlimited work converge to running
// shares proportional to their weights, within one call and under churn.
func TestPropertyFairShares(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 4).Draw(t, "pools")
		cfg := DefaultConfig()
		cfg.Mode = FAIR
		weights := make([]int, n)
		total := 0
		for i := range weights {
			weights[i] = rapid.IntRange(1, 5).Draw(t, "weight")
			total += weights[i]
			cfg.Pools = append(cfg.Pools, PoolConfig{Name: fmt.Sprintf("p%d", i), Weight: weights[i]})
		}
		s, err := New(cfg, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 7)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := s.Submit(TaskSet{ID: fmt.Sprint(i), JobID: int64(i), StageID: i, Pool: fmt.Sprintf("p%d", i), Tasks: make([]TaskSpec, 5000)}, t0); err != nil {
				t.Fatal(err)
			}
		}
		slots := rapid.IntRange(50, 300).Draw(t, "slots")
		execs := rapid.IntRange(1, 10).Draw(t, "executors")
		running := map[TaskID]Launch{}
		used := map[string]int{}
		offerAll := func(now time.Time) {
			var offers []WorkerOffer
			for e := range execs {
				id := fmt.Sprint("e", e)
				offers = append(offers, WorkerOffer{ExecutorID: id, Host: id, Cores: slots/execs - used[id]})
			}
			for _, l := range s.ResourceOffers(offers, now) {
				running[l.TaskID] = l
				used[l.ExecutorID]++
			}
		}
		check := func(stage string) {
			count := make([]int, n)
			for _, l := range running {
				var p int
				fmt.Sscan(l.TaskSetID, &p)
				count[p]++
			}
			// Spark's FAIR comparator hands each slot to the pool with the lowest
			// running/weight ratio, so at any time the ratios differ by at most
			// 1/min(weight): a pool's count is within weight/min(weight) tasks
			// of its exact share (e.g. weights 1,1,1,5 over 51 slots give
			// 7,7,7,30 against an exact 31.9 for the heavy pool).
			minW := slices.Min(weights)
			for i := range n {
				want := float64(len(running)) * float64(weights[i]) / float64(total)
				slack := float64(weights[i]) / float64(minW)
				if math.Abs(float64(count[i])-want) > max(1.0, slack)+0.02*want {
					t.Fatalf("%s: pool p%d (weight %d of %d) runs %d of %d, want ~%.1f", stage, i, weights[i], total, count[i], len(running), want)
				}
			}
		}
		offerAll(t0)
		check("first call")
		for round := range 20 {
			ids := make([]TaskID, 0, len(running))
			for id := range running {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				if rapid.IntRange(0, 3).Draw(t, "finish") == 0 {
					l := running[id]
					delete(running, id)
					used[l.ExecutorID]--
					s.StatusUpdate(id, Update{State: Finished}, t0.Add(time.Duration(round+1)*time.Second))
				}
			}
			offerAll(t0.Add(time.Duration(round+1) * time.Second))
		}
		check("after churn")
	})
}
