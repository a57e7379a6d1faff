package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/driver"
	flintevent "github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// stageJob is the registered job every simulated job names: its tasks
// never run in this process (the simulated executors answer them), but
// the driver encodes them through the registry.
const stageJob = "flint-sim"

func init() {
	stagetask.Register(stageJob, stagetask.RunnerFunc(func(context.Context, *stagetask.Task, stagetask.Shuffle) (stagetask.Output, error) {
		return stagetask.Output{}, fmt.Errorf("sim: a simulated job's task ran in process")
	}))
}

// tickEvery is the driver loop's tick (framework's tickInterval with the
// scheduler's defaults).
const tickEvery = 100 * time.Millisecond

// simDriver is the real driver loop (framework/driver.Driver: loop, task
// and DAG cores, map-output tracker, placement of tasks on the executors'
// cores), not started: the sim steps it by hand at its virtual clock. It
// stands between the driver and the fine backend in both directions to
// check the invariants: the backend's calls on the driver are recorded on
// the backend's owner goroutine and forwarded by the sim's, the driver's
// batches pass through Apply.
type simDriver struct {
	s   *Sim
	d   *driver.Driver
	bus *flintevent.Bus
	inc *incarnation
	// dead is set when the driver's process died (restart.go): the calls
	// its backend still makes are dropped.
	dead atomic.Bool
	// base is the jobs earlier drivers submitted: this one's job ids and
	// shuffle ids start there.
	base int

	pending  bool // inputs queued for the driver since its last step
	jobs     []*simJob
	attempts map[uint64]*attempt // every attempt the driver launched
	gens     map[string]int      // executor id → losses the driver was told of
	execs    map[string]int      // executor id → cores the backend reports (0: lost)
	released bool
	finished int // jobs ended with correct results
	// the tracker's bytes for the largest ended job's shuffle and its map
	// outputs (Result.TrackerBytes)
	trackerBytes, trackerOutputs int
	// firstDone is, per result partition (shuffle, partition), the attempt
	// whose FINISHED reached the driver first: the result it must accept,
	// once (a later success is a duplicate it drops, Spark's rule).
	firstDone map[outputKey]uint64
	// live is the attempts launched and not ended, liveSets how many of
	// them each task set has; locs are the map outputs' locations the
	// driver was told of, locBytes their bound (memory.go)
	live     int
	liveSets map[string]int
	locs     map[mapoutput.Location]struct{}
	locBytes int
}

// simJob is one job: a map stage of maps tasks writing shuffle id, then a
// result stage of reduces tasks reading it.
type simJob struct {
	id, shuffle, maps, reduces int
	sub                        *driver.Submission
	ended                      bool
	mapAccs                    []int // map index → accumulator updates applied (OnMapOutput)
}

// attempt is a launched attempt: where, in which generation of its
// executor, and how many terminal updates reached the driver.
type attempt struct {
	taskSet string
	index   int
	exec    string
	gen     int
	ends    int
	done    bool // its FINISHED reached the driver
	applied bool // its map accumulator update was applied (OnMapOutput)
}

func newDriver(s *Sim) (*simDriver, error) {
	sc := scheduler.DefaultConfig()
	sc.Speculation.Enabled = s.cfg.Speculate
	sched, err := scheduler.New(sc, rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())))
	if err != nil {
		return nil, fmt.Errorf("sim: scheduler: %w", err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.PanicLevel)
	sd := &simDriver{s: s, bus: flintevent.NewBus(0), attempts: map[uint64]*attempt{}, gens: map[string]int{}, execs: map[string]int{},
		firstDone: map[outputKey]uint64{}, liveSets: map[string]int{}, locs: map[mapoutput.Location]struct{}{}}
	sd.d, err = driver.New(driver.Config{Sched: sched, Now: s.clk.Now, Bus: sd.bus, Log: log})
	if err != nil {
		return nil, fmt.Errorf("sim: driver: %w", err)
	}
	return sd, nil
}

// start submits the first jobs and arms the loop's ticks.
func (sd *simDriver) start() {
	for range min(max(sd.s.cfg.Concurrent, 1), sd.s.cfg.Jobs) {
		sd.submit()
	}
	sd.s.at(tickEvery, sd.tick)
}

func (sd *simDriver) stop() {
	sd.d.Stop()
	sd.bus.Close()
}

func (sd *simDriver) submit() {
	id := sd.base + len(sd.jobs)
	j := &simJob{id: id, shuffle: id, maps: sd.s.cfg.Tasks, reduces: max(1, sd.s.cfg.Tasks/4)}
	j.mapAccs = make([]int, j.maps)
	if r := sd.s.cfg.Reducers; r > 0 {
		j.reduces = r
	}
	sd.jobs = append(sd.jobs, j)
	spec := dagscheduler.JobSpec{Name: stageJob, Final: "reduce", Nodes: []dagscheduler.Node{
		{ID: "map", Name: fmt.Sprintf("map %d", j.id), Partitions: j.maps},
		{ID: "reduce", Name: fmt.Sprintf("reduce %d", j.id), Partitions: j.reduces,
			Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "map", ShuffleID: j.shuffle}}},
	}}
	sub, err := sd.d.Submit(&driver.StageJob{Spec: spec, Description: fmt.Sprintf("sim job %d", j.id),
		OnMapOutput: func(shuffle, m int, v []byte) { sd.mapAccumulator(j, shuffle, m, v) }})
	if err != nil {
		sd.s.fail("submit job %d: %v", j.id, err)
		return
	}
	j.sub = sub
	sd.pending = true
	sd.s.logf("submit job %d (%d maps, %d reduces)", j.id, j.maps, j.reduces)
}

func (sd *simDriver) tick() {
	if sd.dead.Load() {
		return
	}
	sd.d.Step(true)
	sd.afterStep()
	if !sd.done() {
		sd.s.at(tickEvery, sd.tick)
	}
}

// step steps the driver with what was queued for it; false when nothing was.
func (sd *simDriver) step() bool {
	if !sd.pending || sd.dead.Load() {
		return false
	}
	sd.pending = false
	sd.d.Step(false)
	sd.afterStep()
	return true
}

// afterStep ends the jobs the step ended: their results checked, their
// shuffle released (as the dataset layer does), the next job submitted.
func (sd *simDriver) afterStep() {
	for _, j := range sd.jobs {
		if j.ended || j.sub == nil || !j.sub.Ended() {
			continue
		}
		j.ended = true
		out, err := j.sub.Result()
		if err != nil {
			sd.s.fail("job %d failed: %v", j.id, err)
			return
		}
		if !sd.checkResults(j, out) {
			return
		}
		sd.finished++
		sd.s.logf("job %d finished: %d partitions correct", j.id, len(out))
		sd.d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) {
			if n, err := tr.MapOutputBytes(j.shuffle); err == nil && j.maps >= sd.trackerOutputs {
				sd.trackerBytes, sd.trackerOutputs = n+tr.LocationBytes(), j.maps
			}
		})
		sd.d.ReleaseShuffle(j.shuffle)
		sd.pending = true
		if len(sd.jobs) < sd.s.cfg.Jobs {
			sd.submit()
		}
	}
}

// checkResults asserts a job's results: each partition's value is its
// own, computed from every map output once, and the one the driver
// accepted is the first success of the partition to reach it (its
// accumulator update applied once per partition); every map task's
// accumulator update was applied.
func (sd *simDriver) checkResults(j *simJob, out [][]byte) bool {
	for r, v := range out {
		body, tg, _ := parseTag(v)
		tid := tg.tid
		if want := expectedReduce(j.shuffle, j.maps, r); !bytes.Equal(body, want) || tg.shuffle != j.shuffle || tg.partition != r {
			sd.s.fail("job %d: partition %d is %q, want %q", j.id, r, v, want)
			return false
		}
		// The result accepted, once: the first success of the
		// partition to reach the driver (its accumulator update is
		// applied from this one value, once per partition).
		if first := sd.firstDone[outputKey{j.shuffle, r}]; tid != first {
			sd.s.fail("job %d: partition %d's result is attempt %d's, but attempt %d's FINISHED reached the driver first", j.id, r, tid, first)
			return false
		}
	}
	for m, n := range j.mapAccs {
		if n == 0 {
			sd.s.fail("job %d: map %d's accumulator update was never applied", j.id, m)
			return false
		}
	}
	return true
}

// done reports whether every job ended.
func (sd *simDriver) done() bool {
	if len(sd.jobs) < sd.s.cfg.Jobs {
		return false
	}
	for _, j := range sd.jobs {
		if !j.ended {
			return false
		}
	}
	return true
}

// Apply is the driver's batch on its way to the backend (on the sim's
// goroutine, in the driver's step): launches are recorded with their
// executor's generation.
func (sd *simDriver) apply(b backend.Batch) {
	for _, td := range b.Launches {
		if sd.attempts[td.TaskID] != nil {
			sd.s.fail("task id %d launched twice", td.TaskID)
		}
		a := &attempt{taskSet: td.TaskSetID, index: td.Index, exec: td.ExecutorID, gen: sd.gens[td.ExecutorID]}
		if p := sd.s.cfg.forgetLoss; p != "" && strings.HasPrefix(td.ExecutorID, p) {
			a.gen = -1
		}
		sd.attempts[td.TaskID] = a
		sd.liveAttempt(a, true)
		sd.s.logf("launch %d (%s/%d attempt %d) on %s", td.TaskID, td.TaskSetID, td.Index, td.Attempt, td.ExecutorID)
	}
	for _, k := range b.Kills {
		sd.s.logf("driver kills %d on %s", k.TaskID, k.ExecutorID)
	}
	for _, r := range b.ShuffleReleases {
		sd.s.logf("driver releases shuffle %d", r.ShuffleID)
	}
}

// ExecutorUp implements backend.Driver.
func (sd *simDriver) ExecutorUp(id, host string, cores int) {
	if sd.dead.Load() {
		return // its process died: nothing it does reaches anyone
	}
	sd.s.record(func() {
		sd.s.logf("driver: executor %s has %d cores", id, cores)
		sd.execs[id] = cores
		sd.d.ExecutorUp(id, host, cores)
		sd.pending = true
	})
}

// ExecutorLost implements backend.Driver.
func (sd *simDriver) ExecutorLost(id, reason string, causedByApp bool) {
	if sd.dead.Load() {
		return // its process died: nothing it does reaches anyone
	}
	sd.s.record(func() {
		sd.s.logf("driver: executor %s lost: %s", id, firstLine(reason))
		if sd.s.cfg.Coarse {
			// A coarse executor's tasks end with it: no update of theirs
			// follows its loss (its stream ended after its last one).
			for _, a := range sd.attempts {
				if a.exec == id && a.ends == 0 {
					a.ends = 1
					sd.liveAttempt(a, false)
				}
			}
		}
		sd.gens[id]++
		delete(sd.execs, id)
		sd.d.ExecutorLost(id, reason, causedByApp)
		sd.pending = true
	})
}

// StatusUpdate implements backend.Driver.
func (sd *simDriver) StatusUpdate(u *backend.StatusUpdate) {
	if sd.dead.Load() {
		return // its process died: nothing it does reaches anyone
	}
	sd.s.record(func() {
		a := sd.attempts[u.TaskID]
		if a == nil {
			sd.s.fail("update %s for attempt %d, which the driver never launched", u.State, u.TaskID)
			return
		}
		sd.s.logf("driver: %d %s", u.TaskID, u.State)
		if u.State == scheduler.Finished {
			sd.finishedUpdate(a, u)
		}
		if u.State != scheduler.Running {
			a.ends++
			if a.ends == 1 {
				sd.liveAttempt(a, false)
			}
			if a.ends > 1 {
				sd.s.fail("attempt %d (%s/%d) ended %d times", u.TaskID, a.taskSet, a.index, a.ends)
				return
			}
		}
		sd.d.StatusUpdate(u)
		sd.pending = true
	})
}

// finishedUpdate notes a FINISHED update on its way to the driver: the
// attempt succeeded, and a result partition's first success is the
// result the driver must accept.
func (sd *simDriver) finishedUpdate(a *attempt, u *backend.StatusUpdate) {
	a.done = true
	var raw []byte
	var out stagetask.Output
	if err := codec.Gob.Unmarshal(u.Result, &raw); err != nil {
		sd.s.fail("attempt %d: undecodable result: %v", u.TaskID, err)
		return
	}
	if err := out.UnmarshalBinary(raw); err != nil {
		sd.s.fail("attempt %d: undecodable output: %v", u.TaskID, err)
		return
	}
	if len(out.Sizes) > 0 { // a map output: the location the tracker interns
		sd.noteLocation(mapoutput.Location{ExecutorID: a.exec, Host: out.Location.Host, Address: out.Location.Address})
	}
	body, tg, ok := parseTag(out.Value)
	if ok && (tg.shuffle < sd.base || tg.shuffle >= sd.base+len(sd.jobs)) {
		sd.s.fail("attempt %d's FINISHED carries the value of shuffle %d, no job of driver %d's: a predecessor's task's update counted for it", u.TaskID, tg.shuffle, sd.inc.n)
		return
	}
	if ok && len(body) > 0 { // a result task's
		k := outputKey{tg.shuffle, tg.partition}
		if _, seen := sd.firstDone[k]; !seen {
			sd.firstDone[k] = u.TaskID
		}
	}
}

// mapAccumulator is the job's OnMapOutput: a map task's accumulator
// update, which the driver must apply once per successful map task — from
// an attempt whose FINISHED reached it, never twice for one attempt.
func (sd *simDriver) mapAccumulator(j *simJob, shuffle, m int, v []byte) {
	_, tg, ok := parseTag(v)
	tid := tg.tid
	a := sd.attempts[tid]
	switch {
	case !ok || tg.shuffle != shuffle || shuffle != j.shuffle || tg.partition != m || a == nil:
		sd.s.fail("job %d: map %d of shuffle %d applied the accumulator update %q, not its own", j.id, m, shuffle, v)
	case !a.done:
		sd.s.fail("job %d: map %d applied attempt %d's accumulator update, whose FINISHED never reached the driver", j.id, m, tid)
	case a.applied:
		sd.s.fail("job %d: map %d applied attempt %d's accumulator update twice", j.id, m, tid)
	default:
		a.applied = true
		j.mapAccs[m]++
	}
}

// Abort implements backend.Driver.
func (sd *simDriver) Abort(reason string) {
	if sd.dead.Load() {
		return // its process died: nothing it does reaches anyone
	}
	sd.s.record(func() { sd.s.fail("the backend aborted the jobs: %s", reason) })
}

// check asserts, between steps, that the tracker holds no map output
// written by an attempt on an executor generation the driver was told is
// lost, and that the driver's memory per map output and per task stays
// within its bounds (memory.go).
func (sd *simDriver) check() {
	if sd.s.cfg.SkipTrackerCheck || sd.dead.Load() {
		return
	}
	sd.d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) {
		for _, sh := range tr.Shuffles() {
			n, reduces, _ := tr.Shape(sh)
			registered := 0
			for m := range n {
				loc, tid, ok := tr.Output(sh, m)
				if !ok {
					continue
				}
				registered++
				a := sd.attempts[tid]
				if a == nil {
					sd.s.fail("shuffle %d map %d registered from attempt %d, which the driver never launched", sh, m, tid)
					return
				}
				if a.gen < sd.gens[a.exec] {
					sd.s.fail("shuffle %d map %d registered from attempt %d on %s (%s) after that executor's loss", sh, m, tid, a.exec, loc)
					return
				}
			}
			bytes, err := tr.MapOutputBytes(sh)
			if err != nil {
				sd.s.fail("shuffle %d: %v", sh, err)
				return
			}
			if v := trackerBound(sh, n, reduces, registered, bytes); v != "" {
				sd.s.fail("%s", v)
				return
			}
		}
		if n := tr.LocationBytes(); n > sd.locBytes {
			sd.s.fail("the map-output tracker's locations take %d bytes, over their bound %d for the %d locations the driver was told of", n, sd.locBytes, len(sd.locs))
		}
	})
	sd.checkRetained()
}

// finalCheck asserts what holds once the run is done: each attempt ended
// once.
func (sd *simDriver) finalCheck() {
	ids := make([]uint64, 0, len(sd.attempts))
	for id := range sd.attempts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if a := sd.attempts[id]; a.ends != 1 {
			sd.s.fail("attempt %d (%s/%d) ended %d times", id, a.taskSet, a.index, a.ends)
		}
	}
}

func (sd *simDriver) state() string {
	live := 0
	for _, a := range sd.attempts {
		if a.ends == 0 {
			live++
		}
	}
	return fmt.Sprintf("%d/%d jobs finished, %d of %d attempts not ended, %d live tasks and %d executors on the master",
		sd.finished, sd.s.cfg.Jobs, live, len(sd.attempts), len(sd.s.m.tasks), sd.s.m.executors())
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// backendSide is what the driver loop sees as its backend: the fine
// backend, with the batches recorded first.
type backendSide struct {
	backend.Backend
	sd *simDriver
}

func (b backendSide) Apply(batch backend.Batch) {
	b.sd.apply(batch)
	b.Backend.Apply(batch)
}
