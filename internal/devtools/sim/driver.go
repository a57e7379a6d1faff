package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// driver stands in for framework's driver loop: it owns a real
// scheduler.TaskScheduler, counts each executor's cores taken by the
// attempts it launched until their terminal update (as the loop does),
// and sends the backend Batches. Its backend.Driver methods run on the
// backend's owner goroutine and only record; the sim handles them.
type driver struct {
	s     *Sim
	sched *scheduler.TaskScheduler

	execs               map[string]*dexec
	attempts            map[uint64]*attempt
	results             map[string][]int // task set → acceptances per partition
	submitted, finished int
	accepted            int
	kills               []backend.Kill
	demand              *bool // last demand sent
	dirty               bool
}

type dexec struct {
	host        string
	cores, used int
}

type attempt struct {
	taskSet     string
	index, cpus int
	exec        string
	ends        int
	result      []byte
}

func newDriver(s *Sim, _ *config.Config) (*driver, error) {
	sc := scheduler.DefaultConfig()
	sc.Speculation.Enabled = s.cfg.Speculate
	sched, err := scheduler.New(sc, rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())))
	if err != nil {
		return nil, fmt.Errorf("sim: scheduler: %w", err)
	}
	return &driver{s: s, sched: sched, execs: map[string]*dexec{}, attempts: map[uint64]*attempt{}, results: map[string][]int{}}, nil
}

func (d *driver) start() {
	for range min(max(d.s.cfg.Concurrent, 1), d.s.cfg.Jobs) {
		d.submit()
	}
	d.s.at(time.Second, d.tick)
}

func (d *driver) now() time.Time { return d.s.clk.Now() }

func (d *driver) submit() {
	j := d.submitted
	d.submitted++
	ts := scheduler.TaskSet{ID: fmt.Sprintf("job%d", j), JobID: int64(j), StageID: j, Tasks: make([]scheduler.TaskSpec, d.s.cfg.Tasks)}
	d.results[ts.ID] = make([]int, d.s.cfg.Tasks)
	if err := d.sched.Submit(ts, d.now()); err != nil {
		d.s.fail("submit %s: %v", ts.ID, err)
		return
	}
	d.s.logf("submit %s (%d tasks)", ts.ID, len(ts.Tasks))
	d.dirty = true
}

func (d *driver) tick() {
	if d.done() {
		return
	}
	d.handle(d.sched.Tick(d.now()))
	d.s.b.Apply(backend.Batch{Tick: true, Now: d.now()})
	d.dirty = true
	d.s.at(time.Second, d.tick)
}

// schedule places waiting tasks on free cores and sends the backend what
// it must do; it reports whether it sent anything.
func (d *driver) schedule() bool {
	if !d.dirty {
		return false
	}
	d.dirty = false
	var free []string // few at a time: sorted for a deterministic order
	for id, e := range d.execs {
		if e.cores > e.used {
			free = append(free, id)
		}
	}
	slices.Sort(free)
	offers := make([]scheduler.WorkerOffer, 0, len(free))
	for _, id := range free {
		e := d.execs[id]
		offers = append(offers, scheduler.WorkerOffer{ExecutorID: id, Host: e.host, Cores: e.cores - e.used})
	}
	batch := backend.Batch{Now: d.now(), Kills: d.kills}
	d.kills = nil
	if len(offers) > 0 {
		for _, l := range d.sched.ResourceOffers(offers, d.now()) {
			d.execs[l.ExecutorID].used += l.CPUs
			d.attempts[uint64(l.TaskID)] = &attempt{taskSet: l.TaskSetID, index: l.Index, cpus: l.CPUs, exec: l.ExecutorID}
			batch.Launches = append(batch.Launches, &backend.TaskDescription{TaskID: uint64(l.TaskID), Attempt: l.Attempt,
				Index: l.Index, TaskSetID: l.TaskSetID, Function: "sim", CPUs: l.CPUs, ExecutorID: l.ExecutorID, Speculative: l.Speculative})
			d.s.logf("launch %d (%s/%d attempt %d) on %s", l.TaskID, l.TaskSetID, l.Index, l.Attempt, l.ExecutorID)
		}
	}
	if want := d.sched.WantsOffers(); d.demand == nil || *d.demand != want {
		d.demand = &want
		batch.Demand = &backend.Demand{Waiting: want}
	}
	if batch.Empty() {
		return false
	}
	d.s.b.Apply(batch)
	return true
}

func (d *driver) handle(evs []scheduler.Event) {
	for _, ev := range evs {
		switch e := ev.(type) {
		case scheduler.TaskSucceeded:
			a := d.attempts[uint64(e.TaskID)]
			if want := payload(e.TaskSetID, e.Index); a == nil || !bytes.Equal(a.result, want) {
				d.s.fail("%s/%d accepted from attempt %d with result %q, want %q", e.TaskSetID, e.Index, e.TaskID, a.resultOrNil(), want)
				return
			}
			d.results[e.TaskSetID][e.Index]++
			if n := d.results[e.TaskSetID][e.Index]; n > 1 {
				d.s.fail("%s/%d: result accepted %d times", e.TaskSetID, e.Index, n)
				return
			}
			d.accepted++
		case scheduler.TaskSetFinished:
			for i, n := range d.results[e.TaskSetID] {
				if n != 1 {
					d.s.fail("%s finished with partition %d accepted %d times", e.TaskSetID, i, n)
					return
				}
			}
			d.finished++
			d.s.logf("%s finished", e.TaskSetID)
			if d.submitted < d.s.cfg.Jobs {
				d.submit()
			}
		case scheduler.TaskSetAborted:
			d.s.fail("%s aborted: %s", e.TaskSetID, e.Reason)
		case scheduler.KillTask:
			d.kills = append(d.kills, backend.Kill{TaskID: uint64(e.TaskID), ExecutorID: e.ExecutorID, Reason: e.Reason})
		}
	}
	d.dirty = true
}

func (a *attempt) resultOrNil() []byte {
	if a == nil {
		return nil
	}
	return a.result
}

// ExecutorUp implements backend.Driver.
func (d *driver) ExecutorUp(id, host string, cores int) {
	d.s.record(func() {
		e := d.execs[id]
		if e == nil {
			e = &dexec{}
			d.execs[id] = e
		}
		e.host, e.cores = host, cores
		d.s.logf("driver: executor %s has %d cores (%d taken)", id, cores, e.used)
		d.dirty = true
	})
}

// ExecutorLost implements backend.Driver.
func (d *driver) ExecutorLost(id, reason string, causedByApp bool) {
	d.s.record(func() {
		d.s.logf("driver: executor %s lost: %s", id, reason)
		delete(d.execs, id)
		d.handle(d.sched.ExecutorLost(id, scheduler.Failure{Kind: scheduler.ExecutorLost, Message: reason, ExitCausedByApp: causedByApp}, d.now()))
	})
}

// StatusUpdate implements backend.Driver.
func (d *driver) StatusUpdate(u *backend.StatusUpdate) {
	d.s.record(func() {
		a := d.attempts[u.TaskID]
		if a == nil {
			d.s.fail("update %s for attempt %d, which the driver never launched", u.State, u.TaskID)
			return
		}
		d.s.logf("driver: %d %s", u.TaskID, u.State)
		if u.State != scheduler.Running {
			a.ends++
			if a.ends > 1 {
				d.s.fail("attempt %d (%s/%d) ended %d times", u.TaskID, a.taskSet, a.index, a.ends)
				return
			}
			if e := d.execs[a.exec]; e != nil {
				e.used -= a.cpus
			}
			a.result = u.Result
		}
		var f *scheduler.Failure
		if u.Failure != nil {
			f = u.Failure
		}
		d.handle(d.sched.StatusUpdate(scheduler.TaskID(u.TaskID), scheduler.Update{State: u.State, Failure: f, ResultSize: int64(len(u.Result))}, d.now()))
	})
}

// Abort implements backend.Driver.
func (d *driver) Abort(reason string) {
	d.s.record(func() { d.s.fail("the backend aborted the jobs: %s", reason) })
}

// done reports whether every job finished and every attempt ended.
func (d *driver) done() bool {
	if d.finished < d.s.cfg.Jobs {
		return false
	}
	for _, a := range d.attempts {
		if a.ends == 0 {
			return false
		}
	}
	return true
}

// check asserts that no executor has more cores taken than it has.
func (d *driver) check() {
	var bad []string // collected unsorted (cheap), reported in order (deterministic)
	for id, e := range d.execs {
		if e.used > e.cores {
			bad = append(bad, id)
		}
	}
	slices.Sort(bad)
	for _, id := range bad {
		e := d.execs[id]
		d.s.fail("driver: executor %s has %d cores taken of the %d the backend reports", id, e.used, e.cores)
	}
}

// finalCheck asserts what holds once the run is done: each attempt ended
// once, each partition's result accepted once.
func (d *driver) finalCheck() {
	for id, a := range d.attempts {
		if a.ends != 1 {
			d.s.fail("attempt %d ended %d times", id, a.ends)
		}
	}
	for _, ts := range sortedKeys(d.results) {
		for i, n := range d.results[ts] {
			if n != 1 {
				d.s.fail("%s/%d accepted %d times", ts, i, n)
			}
		}
	}
}

func (d *driver) state() string {
	live := 0
	for _, a := range d.attempts {
		if a.ends == 0 {
			live++
		}
	}
	return fmt.Sprintf("%d/%d jobs finished, %d partitions accepted, %d of %d attempts not ended, %d live tasks on the master",
		d.finished, d.s.cfg.Jobs, d.accepted, live, len(d.attempts), len(d.s.m.tasks))
}
