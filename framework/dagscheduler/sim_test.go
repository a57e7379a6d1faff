package dagscheduler

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// The simulation runs both cores (Cores, as the driver loop wires them)
// against simulated executors and a simulated shuffle whose stored map
// outputs can be lost, with faults injected: executor and host loss,
// outputs deleted behind the driver's back (so reducers hit fetch
// failures), task exceptions, duplicate status updates and late updates
// from lost executors. Every run checks the invariants in (*sim).check*;
// every result is compared with an independent evaluation of the lineage.

var (
	simSeeds = flag.Int("sim.seeds", 2000, "number of seeds TestSimulation runs")
	simSeed  = flag.Uint64("sim.seed", 0, "run only this seed (replay a failure)")
)

// chooser is where a run's decisions come from: a seeded rand for the
// simulation, rapid for the property test.
type chooser interface {
	intn(n int, label string) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int, _ string) int { return c.r.IntN(n) }

func chance(c chooser, pct int, label string) bool { return c.intn(100, label) < pct }

// universe is a random lineage; jobs are actions over some of its nodes.
type universe struct {
	nodes []Node
	byID  map[NodeID]*Node
	memo  map[cacheKey]uint64
}

func genUniverse(c chooser) *universe {
	u := &universe{byID: map[NodeID]*Node{}, memo: map[cacheKey]uint64{}}
	n := 2 + c.intn(6, "nodes")
	shuffle := 0
	for i := range n {
		nd := Node{ID: NodeID(fmt.Sprintf("n%d", i)), Partitions: 1 + c.intn(4, "partitions")}
		if i > 0 {
			deps := 1 + c.intn(2, "deps")
			if i > 1 && chance(c, 20, "source") {
				deps = 0
			}
			for range deps {
				p := u.nodes[c.intn(i, "parent")]
				if slices.ContainsFunc(nd.Deps, func(d Dep) bool { return d.Parent == p.ID }) {
					continue
				}
				if p.Partitions == nd.Partitions && chance(c, 40, "narrow") {
					nd.Deps = append(nd.Deps, Dep{Kind: OneToOne, Parent: p.ID})
				} else {
					nd.Deps = append(nd.Deps, Dep{Kind: Shuffle, Parent: p.ID, ShuffleID: shuffle})
					shuffle++
				}
			}
		}
		u.nodes = append(u.nodes, nd)
	}
	for i := range u.nodes {
		u.byID[u.nodes[i].ID] = &u.nodes[i]
	}
	return u
}

func mix(h uint64, vs ...any) uint64 {
	f := fnv.New64a()
	fmt.Fprint(f, h)
	for _, v := range vs {
		fmt.Fprint(f, "|", v)
	}
	return f.Sum64()
}

// value is the reference: partition p of node id computed directly.
func (u *universe) value(id NodeID, p int) uint64 {
	k := cacheKey{id, p}
	if v, ok := u.memo[k]; ok {
		return v
	}
	n := u.byID[id]
	h := mix(0, id, p)
	for _, d := range n.Deps {
		switch d.Kind {
		case OneToOne:
			h = mix(h, u.value(d.Parent, p))
		case Shuffle:
			for m := range u.byID[d.Parent].Partitions {
				h = mix(h, block(u.value(d.Parent, m), p))
			}
		}
	}
	u.memo[k] = h
	return h
}

// block is the content of reduce partition r of a map output whose
// pipeline produced v.
func block(v uint64, r int) uint64 { return mix(v, "block", r) }

// reachable returns final and the nodes it depends on.
func (u *universe) reachable(final NodeID) []Node {
	seen := map[NodeID]bool{}
	var out []Node
	var walk func(id NodeID)
	walk = func(id NodeID) {
		if seen[id] {
			return
		}
		seen[id] = true
		n := u.byID[id]
		out = append(out, *n)
		for _, d := range n.Deps {
			walk(d.Parent)
		}
	}
	walk(final)
	return out
}

type storeKey struct {
	shuffle, mapIndex int
	exec              string
}

type simJob struct {
	spec      JobSpec
	id        int64
	submitted bool
	at        int // step at which it is submitted
	accepted  map[int]bool
	ended     string // "" while active
}

// fataler is what the simulation needs of *testing.T and *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
}

type sim struct {
	t      fataler
	seed   uint64
	c      chooser
	u      *universe
	cores  *Cores
	now    time.Time
	faults bool

	execs   map[string]string // alive executor → host
	cores_  map[string]int    // free cores
	nextExe int
	store   map[storeKey][]uint64
	running map[scheduler.TaskID]Launch
	killing map[scheduler.TaskID]bool
	value   map[scheduler.TaskID]uint64 // result value of the attempt being reported
	// the attempt whose status update is being applied
	reporting scheduler.TaskID
	early     map[scheduler.TaskID]earlyRead
	readyAt   map[scheduler.TaskID]time.Time
	jobs      []*simJob
	byID      map[int64]*simJob
	trace     []string
	stats     *simStats
}

type earlyRead struct {
	v  uint64
	ff *mapoutput.FetchFailure
}

type simStats struct {
	runs, jobs, succeeded, failed, fetchFailures, execLost, deleted, dupes, late int
	reasons, ignored                                                             map[string]int
}

func (s *sim) fatalf(format string, a ...any) {
	tail := s.trace
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	s.t.Fatalf("seed %d: %s\nreplay: go test ./framework/dagscheduler -run 'TestSimulation' -sim.seed=%d -v\nlast steps:\n  %s",
		s.seed, fmt.Sprintf(format, a...), s.seed, strings.Join(tail, "\n  "))
}

func (s *sim) log(format string, a ...any) {
	s.trace = append(s.trace, fmt.Sprintf("%v ", s.now.Sub(t0))+fmt.Sprintf(format, a...))
}

func newSim(t fataler, seed uint64, c chooser, stats *simStats) *sim {
	u := genUniverse(c)
	dcfg := Config{MaxConsecutiveStageAttempts: 4}
	tcfg := scheduler.DefaultConfig()
	tcfg.Exclude.Enabled = false
	tcfg.LocalityWait = map[scheduler.Level]time.Duration{scheduler.ProcessLocal: 10 * time.Millisecond,
		scheduler.NodeLocal: 10 * time.Millisecond, scheduler.RackLocal: 10 * time.Millisecond}
	cores, err := NewCores(dcfg, tcfg, nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s := &sim{t: t, seed: seed, c: c, u: u, cores: cores, now: t0, faults: true,
		execs: map[string]string{}, cores_: map[string]int{}, store: map[storeKey][]uint64{},
		running: map[scheduler.TaskID]Launch{}, killing: map[scheduler.TaskID]bool{},
		value: map[scheduler.TaskID]uint64{}, early: map[scheduler.TaskID]earlyRead{}, readyAt: map[scheduler.TaskID]time.Time{}, byID: map[int64]*simJob{}, stats: stats}
	for range 2 + c.intn(3, "executors") {
		s.addExecutor()
	}
	for j := range 1 + c.intn(3, "jobs") {
		final := u.nodes[len(u.nodes)-1-c.intn(min(3, len(u.nodes)), "final")]
		spec := JobSpec{Name: fmt.Sprintf("job%d", j), Final: final.ID, Nodes: u.reachable(final.ID)}
		if chance(c, 25, "subset") {
			spec.Partitions = []int{c.intn(final.Partitions, "partition")}
		}
		at := 0
		if j > 0 {
			at = c.intn(200, "submit at")
		}
		s.jobs = append(s.jobs, &simJob{spec: spec, at: at, accepted: map[int]bool{}})
	}
	return s
}

func (s *sim) addExecutor() {
	id := fmt.Sprintf("e%d", s.nextExe)
	s.nextExe++
	s.execs[id] = fmt.Sprintf("h%d", s.c.intn(3, "host"))
	s.cores_[id] = 1 + s.c.intn(2, "cores")
	s.log("executor %s up on %s", id, s.execs[id])
}

func (s *sim) sortedExecs() []string {
	ids := make([]string, 0, len(s.execs))
	for id := range s.execs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *sim) sortedRunning() []scheduler.TaskID {
	ids := make([]scheduler.TaskID, 0, len(s.running))
	for id := range s.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *sim) run(maxSteps, faultSteps int) {
	s.stats.runs++
	for step := 0; step < maxSteps; step++ {
		s.faults = step < faultSteps
		s.now = s.now.Add(time.Duration(s.c.intn(30, "dt")) * time.Millisecond)
		s.apply(s.cores.Tick(s.now))
		for _, j := range s.jobs {
			if !j.submitted && step >= j.at {
				s.submit(j)
			}
		}
		if s.done() {
			return
		}
		if len(s.execs) == 0 || (!s.faults && len(s.execs) < 2) {
			s.addExecutor()
		}
		s.offer()
		s.act()
	}
	var active []string
	for _, j := range s.jobs {
		if j.ended == "" {
			active = append(active, fmt.Sprintf("job %d (%s)", j.id, s.explainJob(j)))
		}
	}
	s.fatalf("stuck after %d steps: %s", maxSteps, strings.Join(active, "; "))
}

func (s *sim) explainJob(j *simJob) string {
	var parts []string
	for id := 0; id < s.cores.DAG.nextStageID; id++ {
		if st := s.cores.DAG.stages[id]; st != nil && st.jobs[j.id] {
			parts = append(parts, s.cores.DAG.Explain(id).Detail)
		}
	}
	return strings.Join(parts, " | ")
}

func (s *sim) done() bool {
	for _, j := range s.jobs {
		if j.ended == "" {
			return false
		}
	}
	return true
}

func (s *sim) submit(j *simJob) {
	id, eff, err := s.cores.SubmitJob(j.spec, s.now)
	if err != nil {
		s.fatalf("submit %s: %v", j.spec.Name, err)
	}
	j.id, j.submitted = id, true
	s.byID[id] = j
	s.stats.jobs++
	s.log("submit job %d final=%s", id, j.spec.Final)
	s.apply(eff)
}

func (s *sim) offer() {
	var offers []scheduler.WorkerOffer
	for _, id := range s.sortedExecs() {
		if s.cores_[id] > 0 {
			offers = append(offers, scheduler.WorkerOffer{ExecutorID: id, Host: s.execs[id], Cores: s.cores_[id]})
		}
	}
	for _, l := range s.cores.ResourceOffers(offers, s.now) {
		s.cores_[l.ExecutorID] -= l.CPUs
		s.running[l.TaskID] = l
		s.log("launch %d %v on %s", l.TaskID, l.Task, l.ExecutorID)
		if s.c.intn(5, "slow") == 0 {
			// a straggler: it ends a while later, so superseded attempts report late
			s.readyAt[l.TaskID] = s.now.Add(time.Duration(500+s.c.intn(2000, "slowness")) * time.Millisecond)
		}
		if s.c.intn(2, "fetch early") == 0 {
			// the task reads its input now (a reducer fetches as it starts)
			v, ff := s.compute(l.Task.Node, l.Task.Partition)
			s.early[l.TaskID] = earlyRead{v, ff}
		}
	}
}

func (s *sim) act() {
	switch r := s.c.intn(100, "action"); {
	case r < 75 && len(s.running) > 0:
		var ids []scheduler.TaskID
		for _, id := range s.sortedRunning() {
			if !s.now.Before(s.readyAt[id]) {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			s.complete(ids[s.c.intn(len(ids), "task")])
		}
	case r >= 75 && r < 78 && s.faults && len(s.execs) > 0:
		s.loseExecutor()
	case r >= 78 && r < 82 && s.faults && len(s.store) > 0:
		s.deleteOutput()
	case r >= 82 && r < 86 && len(s.execs) < 6:
		s.addExecutor()
	}
}

// release frees the slot of an attempt that ended.
func (s *sim) release(id scheduler.TaskID) {
	if l, ok := s.running[id]; ok {
		if _, alive := s.execs[l.ExecutorID]; alive {
			s.cores_[l.ExecutorID] += l.CPUs
		}
		delete(s.running, id)
	}
}

// complete runs attempt id: it reads its shuffle inputs now and reports
// success, a fetch failure, or (with faults) an exception.
func (s *sim) complete(id scheduler.TaskID) {
	l := s.running[id]
	s.release(id)
	defer delete(s.early, id)
	delete(s.readyAt, id)
	var u scheduler.Update
	var rep Report
	switch {
	case s.killing[id]:
		delete(s.killing, id)
		u = scheduler.Update{State: scheduler.KilledState}
	case s.faults && s.c.intn(100, "exception") < 3:
		u = scheduler.Update{State: scheduler.Failed, Failure: &scheduler.Failure{Kind: scheduler.Exception, Message: "boom"}}
	default:
		v, ff := s.compute(l.Task.Node, l.Task.Partition)
		if e, ok := s.early[id]; ok {
			v, ff = e.v, e.ff
		}
		switch {
		case ff != nil:
			s.stats.fetchFailures++
			u, rep.FetchFailure = scheduler.Update{State: scheduler.Failed}, ff
		case l.Task.Kind == MapTask:
			sizes := make([]uint64, l.Task.NumReduces)
			blocks := make([]uint64, l.Task.NumReduces)
			for r := range sizes {
				blocks[r] = block(v, r)
				if s.c.intn(4, "empty") > 0 {
					sizes[r] = uint64(1 + s.c.intn(5000, "size"))
				}
			}
			s.store[storeKey{l.Task.ShuffleID, l.Task.Partition, l.ExecutorID}] = blocks
			rep.MapStatus = &mapoutput.Status{ShuffleID: l.Task.ShuffleID, MapIndex: l.Task.Partition, TaskID: uint64(id),
				Location: mapoutput.Location{ExecutorID: l.ExecutorID, Host: l.Host, Address: l.Host + ":7337"}, Sizes: sizes}
			u = scheduler.Update{State: scheduler.Finished}
		default:
			s.value[id] = v
			u = scheduler.Update{State: scheduler.Finished}
		}
	}
	s.log("status %d %v state=%v fetch=%v", id, l.Task, u.State, rep.FetchFailure != nil)
	s.reporting = id
	s.apply(s.cores.StatusUpdate(id, u, rep, s.now))
	s.reporting = 0
	delete(s.value, id)
	if s.faults && s.c.intn(100, "duplicate") < 10 {
		s.stats.dupes++
		if eff := s.cores.StatusUpdate(id, u, rep, s.now); len(eff) > 0 {
			s.fatalf("a duplicate status update of %d had effects: %v", id, eff)
		}
	}
}

// compute evaluates partition p of node id as an executor would, reading
// shuffle blocks from where the tracker says they are.
func (s *sim) compute(id NodeID, p int) (uint64, *mapoutput.FetchFailure) {
	n := s.u.byID[id]
	h := mix(0, id, p)
	for _, d := range n.Deps {
		switch d.Kind {
		case OneToOne:
			v, ff := s.compute(d.Parent, p)
			if ff != nil {
				return 0, ff
			}
			h = mix(h, v)
		case Shuffle:
			snap, err := s.cores.DAG.Tracker().Snapshot(d.ShuffleID)
			if err != nil {
				s.fatalf("a task reads shuffle %d the tracker does not know: %v", d.ShuffleID, err)
			}
			for m := range s.u.byID[d.Parent].Partitions {
				loc, ok := snap.Output(m)
				if !ok {
					return 0, &mapoutput.FetchFailure{ShuffleID: d.ShuffleID, MapIndex: m, ReduceIndex: p, Message: "no location"}
				}
				b := s.store[storeKey{d.ShuffleID, m, loc.ExecutorID}]
				if b == nil {
					return 0, &mapoutput.FetchFailure{ShuffleID: d.ShuffleID, MapIndex: m, ReduceIndex: p,
						ExecutorID: loc.ExecutorID, Host: loc.Host, Address: loc.Address, Message: "no such block"}
				}
				h = mix(h, b[p])
			}
		}
	}
	return h, nil
}

func (s *sim) loseExecutor() {
	ids := s.sortedExecs()
	victim := ids[s.c.intn(len(ids), "victim")]
	host := s.execs[victim]
	hostLost := s.c.intn(100, "host lost") < 30
	lost := []string{victim}
	if hostLost {
		lost = nil
		for _, id := range ids {
			if s.execs[id] == host {
				lost = append(lost, id)
			}
		}
	}
	for i, e := range lost {
		s.stats.execLost++
		var late []scheduler.TaskID
		for _, id := range s.sortedRunning() {
			if s.running[id].ExecutorID == e {
				late = append(late, id)
			}
		}
		delete(s.execs, e)
		delete(s.cores_, e)
		for k := range s.store {
			if k.exec == e {
				delete(s.store, k)
			}
		}
		s.log("executor %s lost (host %s files lost: %v)", e, host, hostLost)
		s.apply(s.cores.ExecutorLost(e, host, hostLost && i == 0, scheduler.Failure{Message: "executor lost"}, s.now))
		for _, id := range late {
			delete(s.running, id)
			delete(s.killing, id)
		}
		// a late "finished" from an attempt of the lost executor is ignored
		if len(late) > 0 && s.c.intn(2, "late") == 0 {
			s.stats.late++
			if eff := s.cores.StatusUpdate(late[0], scheduler.Update{State: scheduler.Finished}, Report{}, s.now); len(eff) > 0 {
				s.fatalf("a late update from lost executor %s had effects: %v", e, eff)
			}
		}
	}
}

func (s *sim) deleteOutput() {
	keys := make([]storeKey, 0, len(s.store))
	for k := range s.store {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b storeKey) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	k := keys[s.c.intn(len(keys), "delete")]
	delete(s.store, k)
	s.stats.deleted++
	s.log("output %+v deleted behind the driver's back", k)
}

// apply checks every effect and plays the backend's part.
func (s *sim) apply(eff []Effect) {
	for _, e := range eff {
		if e.Task != nil {
			if k, ok := e.Task.(scheduler.KillTask); ok {
				if _, running := s.running[k.TaskID]; running {
					s.killing[k.TaskID] = true
				}
			}
			continue
		}
		s.checkDAG(e.DAG)
	}
}

func (s *sim) checkDAG(e Event) {
	tr := s.cores.DAG.Tracker()
	switch e := e.(type) {
	case SubmitTaskSet:
		ts := e.TaskSet
		s.log("task set %s %v node=%s parts=%v", ts.ID, ts.Kind, ts.Node, ts.Partitions)
		for i, p := range ts.Partitions {
			if ts.Kind == MapTask {
				if _, _, ok := tr.Output(ts.ShuffleID, p); ok {
					s.fatalf("task set %s submitted for map output %d of shuffle %d, which is available", ts.ID, p, ts.ShuffleID)
				}
				continue
			}
			if j := s.byID[ts.JobID]; j != nil && j.accepted[ts.Task(i).OutputID] {
				s.fatalf("task set %s submitted for result %d of job %d, which was accepted", ts.ID, ts.Task(i).OutputID, ts.JobID)
			}
		}
	case ResultAccepted:
		j := s.byID[e.JobID]
		switch {
		case j == nil || j.ended != "":
			s.fatalf("result for job %d which is not active", e.JobID)
		case j.accepted[e.OutputID]:
			s.fatalf("result %d of job %d accepted twice", e.OutputID, e.JobID)
		}
		j.accepted[e.OutputID] = true
		got, found := s.value[s.reporting]
		want := s.u.value(j.spec.Final, e.Task.Partition)
		if !found || got != want {
			s.fatalf("job %d result %d (partition %d) = %x (found %v), want %x from a complete set of map outputs", e.JobID, e.OutputID, e.Task.Partition, got, found, want)
		}
	case TaskIgnored:
		r := e.Reason
		if i := strings.IndexAny(r, "0123456789"); i > 0 {
			r = r[:i]
		}
		s.stats.ignored[r]++
	case JobSucceeded:
		j := s.endJob(e.JobID, "succeeded")
		n := len(j.spec.Partitions)
		if j.spec.Partitions == nil {
			n = s.u.byID[j.spec.Final].Partitions
		}
		if len(j.accepted) != n {
			s.fatalf("job %d succeeded with %d of %d results", e.JobID, len(j.accepted), n)
		}
		s.stats.succeeded++
	case JobFailed:
		s.endJob(e.JobID, "failed: "+e.Reason)
		s.stats.failed++
		switch {
		case strings.Contains(e.Reason, "has failed the maximum allowable number of times"):
			s.stats.reasons["stage attempts"]++
		case strings.Contains(e.Reason, "failed 4 times"):
			s.stats.reasons["task failures"]++
		default:
			s.fatalf("job %d failed for an unexpected reason: %s", e.JobID, e.Reason)
		}
	}
}

func (s *sim) endJob(id int64, how string) *simJob {
	j := s.byID[id]
	if j == nil {
		s.fatalf("job %d ended but was never submitted", id)
	}
	if j.ended != "" {
		s.fatalf("job %d %s after it %s", id, how, j.ended)
	}
	j.ended = how
	s.log("job %d %s", id, how)
	return j
}

func TestSimulation(t *testing.T) {
	stats := &simStats{reasons: map[string]int{}, ignored: map[string]int{}}
	seeds := []uint64{}
	if *simSeed != 0 {
		seeds = append(seeds, *simSeed)
	} else {
		for i := range *simSeeds {
			seeds = append(seeds, uint64(i+1))
		}
	}
	for _, seed := range seeds {
		c := randChooser{rand.New(rand.NewPCG(seed, 0x5eed))}
		s := newSim(t, seed, c, stats)
		s.run(5000, 300)
		if *simSeed != 0 {
			t.Logf("trace:\n  %s", strings.Join(s.trace, "\n  "))
		}
	}
	t.Logf("ignored task ends: %v", stats.ignored)
	t.Logf("%d runs, %d jobs: %d succeeded, %d failed %v; %d fetch failures, %d executors lost, %d outputs deleted, %d duplicate and %d late updates",
		stats.runs, stats.jobs, stats.succeeded, stats.failed, stats.reasons, stats.fetchFailures, stats.execLost, stats.deleted, stats.dupes, stats.late)
	if len(seeds) > 100 {
		// the faults must be exercised and most jobs must still succeed
		if stats.fetchFailures < len(seeds)/4 || stats.execLost < len(seeds)/4 || stats.late == 0 || stats.dupes == 0 {
			t.Errorf("faults not exercised enough: %+v", stats)
		}
		if stats.succeeded < stats.jobs*9/10 {
			t.Errorf("only %d of %d jobs succeeded", stats.succeeded, stats.jobs)
		}
	}
}
