package coarse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// midReadIn is the input of midReadJob: n records, the gate its map tasks wait
// for, and the files its second action's reducer of partition 0 creates
// (Holding) once it read its first record and waits on (Resume).
type midReadIn struct {
	N                     int
	Gate, Holding, Resume string
}

// midReadJob is burstJob with a reducer caught mid-read: 8 map tasks held at
// Gate, sums by key in 4 partitions collected; then (after betweenActions)
// the doubled sums collected, whose partition 0 stops after reading its
// first record from the shuffle until Resume exists (an attempt started
// after Resume reads on).
var midReadJob = dataset.JobResult("coarse_test.dynalloc-hold-mid-read", func(b *dataset.Builder, in midReadIn) (burstOut, error) {
	kvs := make([]dataset.KV[int, int64], in.N)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	gated := dataset.MapPartitions(dataset.Parallelize(b, kvs, 8), gateThen[dataset.KV[int, int64]](in.Gate))
	sums := dataset.ReduceByKey(gated, func(x, y int64) int64 { return x + y }, 4)
	first, err := dataset.Collect(sums)
	if err != nil {
		return burstOut{}, err
	}
	if f := betweenActions.Load(); f != nil {
		(*f)()
	}
	doubled := dataset.Map(dataset.MapPartitions(sums, holdAfterFirst[dataset.KV[int, int64]](in.Holding, in.Resume)),
		func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
			return dataset.KV[int, int64]{Key: kv.Key, Value: 2 * kv.Value}
		})
	second, err := dataset.Collect(doubled)
	return burstOut{first, second}, err
})

// holdAfterFirst passes records on; in partition 0, after the first one
// (the reducer has opened its shuffle blocks), it creates holding and
// waits until resume exists, unless resume already did.
func holdAfterFirst[T any](holding, resume string) func(int, func(func(T) bool), func(T)) error {
	return func(part int, records func(func(T) bool), yield func(T)) error {
		var err error
		n := 0
		records(func(r T) bool {
			yield(r)
			if n++; n == 1 && part == 0 {
				err = holdUntil(holding, resume)
			}
			return err == nil
		})
		return err
	}
}

func holdUntil(holding, resume string) error {
	if _, err := os.Stat(resume); err == nil {
		return nil
	}
	if err := os.WriteFile(holding, nil, 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(resume); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not created within 2 minutes", resume)
		}
		time.Sleep(10 * time.Millisecond) // the workload waits; the test waits on events
	}
}

// stageLog records, per stage, its attempts submitted and completed and
// every task attempt's start and end.
type stageLog struct {
	mu        sync.Mutex
	order     []int               // stages in the order first submitted
	parents   map[int][]int       // stage → the stages it reads
	submitted map[int]int         // stage → attempts submitted
	completed map[int][]string    // stage → each attempt's failure reason ("" = success)
	starts    map[[2]int][]string // (stage, index) → executor of each attempt started
	ends      map[[2]int][]string // (stage, index) → each attempt's end state and reason
	removed   map[string]string   // executor → why it was removed
}

func newStageLog() *stageLog {
	return &stageLog{parents: map[int][]int{}, submitted: map[int]int{}, completed: map[int][]string{},
		starts: map[[2]int][]string{}, ends: map[[2]int][]string{}, removed: map[string]string{}}
}

func (l *stageLog) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		if l.submitted[e.StageID] == 0 {
			l.order = append(l.order, e.StageID)
			l.parents[e.StageID] = e.ParentIDs
		}
		l.submitted[e.StageID]++
	case event.StageCompleted:
		l.completed[e.StageID] = append(l.completed[e.StageID], e.FailureReason)
	case event.TaskStart:
		k := [2]int{e.StageID, e.Index}
		l.starts[k] = append(l.starts[k], e.ExecutorID)
	case event.TaskEnd:
		k := [2]int{e.StageID, e.Index}
		end := e.State
		if e.Reason != "" {
			end += ": " + e.Reason
		}
		l.ends[k] = append(l.ends[k], end)
	case event.ExecutorRemoved:
		l.removed[e.ExecutorID] = e.Reason
	}
}

// stage is the n-th stage submitted (0-based); -1 when there is none yet.
func (l *stageLog) stage(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= len(l.order) {
		return -1
	}
	return l.order[n]
}

// runningOn is the executor the last attempt of task (stage, index) started on.
func (l *stageLog) runningOn(stage, index int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.starts[[2]int{stage, index}]
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// An executor is killed while its reducer reads the outputs of executors
// dynamic allocation released (coarse, two hosts, the agents' shuffle
// service). The first action ramps 4 executors and writes the shuffle;
// an hour idle (on the driver's clock) releases them all; the second
// action ramps new executors whose reducers read the released outputs
// through the service, and the one running partition 0 is SIGKILLed after
// it read its first record, with the rest of its blocks still to read.
// What must happen, and is asserted: the service holds every map output,
// so nothing is lost — the map stage ran its 8 tasks once, in one attempt,
// and is not resubmitted; no task reports a fetch failure; the second
// action's stage completes in its first attempt, partition 0 in two task
// attempts (the killed executor's, FAILED as "executor … lost", then one
// that finished on another executor) and every other partition in one; the
// killed executor is removed as lost, not released; both actions' sums
// equal plain Go's.
func TestDynamicAllocationExecutorKilledWhileReadingReleasedOutputs(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() }) // after the driver's goodbye
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "kill-host-b", t.TempDir())()
	clk := &jumpClock{}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)},
		"flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.maxExecutors=4",
		"flint.dynamicAllocation.executorIdleTimeout=1h",
		"flint.excludeOnFailure.enabled=false", "flint.mesos.executor.maxFailuresPerAgent=1000")
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	sl := newStageLog()
	r.fc.AddListener(sl)

	files := t.TempDir()
	in := midReadIn{N: 20000, Gate: filepath.Join(files, "gate"), Holding: filepath.Join(files, "holding"), Resume: filepath.Join(files, "resume")}
	var first []string
	between := func() {
		for _, e := range b.Executors() {
			first = append(first, e.ID)
		}
		clk.jump(time.Hour + time.Second)
		waitFor(t, 30*time.Second, "every executor released", func() bool { return len(b.Executors()) == 0 })
		waitFor(t, 30*time.Second, "the released executors' processes gone", func() bool { return len(r.executors()) == 0 })
	}
	betweenActions.Store(&between)
	defer betweenActions.Store(nil)
	go openGateAt(t, b, 4, in.Gate)

	killed := make(chan string, 1)
	go func() {
		defer close(killed)
		if !waitfor.Poll(3*time.Minute, func() bool { _, err := os.Stat(in.Holding); return err == nil }) {
			t.Error("partition 0 of the second action never held mid-read")
			return
		}
		id := sl.runningOn(sl.stage(2), 0)
		for _, p := range r.executors() {
			if p.executorID == id {
				if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
					t.Error(err)
				}
				killed <- id
			}
		}
		if err := os.WriteFile(in.Resume, nil, 0o644); err != nil {
			t.Error(err)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := midReadJob.Run(ctx, r.fc, in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{}
	for i := range in.N {
		want[i%101] += int64(i)
	}
	checkSums(t, "first action", out.First, want, 1)
	checkSums(t, "second action", out.Second, want, 2)
	victim := <-killed
	if victim == "" {
		t.Fatal("no executor was killed")
	}
	if slices.Contains(first, victim) {
		t.Fatalf("killed executor %s is one of the released ones %v", victim, first)
	}
	checkKilledReader(t, sl, victim)
}

// checkKilledReader asserts the stages' and tasks' history after victim
// was killed while reading partition 0 of the third stage (the second
// action's) from the released executors' outputs.
func checkKilledReader(t *testing.T, sl *stageLog, victim string) {
	t.Helper()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if len(sl.order) != 3 {
		t.Fatalf("stages submitted %v; want the map stage, the first action's and the second action's (the map stage not again)", sl.order)
	}
	mapStage, second := sl.order[0], sl.order[2]
	if !slices.Equal(sl.parents[second], []int{mapStage}) {
		t.Fatalf("the second action's stage %d reads %v; want map stage %d", second, sl.parents[second], mapStage)
	}
	if sl.submitted[mapStage] != 1 || !slices.Equal(sl.completed[mapStage], []string{""}) {
		t.Errorf("map stage %d: %d attempts submitted, completions %q; want 1 and one success (nothing recomputed)",
			mapStage, sl.submitted[mapStage], sl.completed[mapStage])
	}
	for i := range 8 {
		if ends := sl.ends[[2]int{mapStage, i}]; !slices.Equal(ends, []string{"FINISHED"}) {
			t.Errorf("map task %d ended %q; want FINISHED once", i, ends)
		}
	}
	if sl.submitted[second] != 1 || !slices.Equal(sl.completed[second], []string{""}) {
		t.Errorf("second action's stage %d: %d attempts submitted, completions %q; want 1 and one success",
			second, sl.submitted[second], sl.completed[second])
	}
	for i := range 4 {
		k := [2]int{second, i}
		ends := sl.ends[k]
		if i != 0 {
			if !slices.Equal(ends, []string{"FINISHED"}) {
				t.Errorf("partition %d ended %q; want FINISHED once", i, ends)
			}
			continue
		}
		starts := sl.starts[k]
		lost := "FAILED: executor " + victim + " lost: "
		if len(ends) != 2 || !strings.HasPrefix(ends[0], lost) || ends[1] != "FINISHED" ||
			len(starts) != 2 || starts[0] != victim || starts[1] == victim {
			t.Errorf("partition 0 started on %v and ended %q; want on %s (%q…) and then FINISHED on another executor",
				starts, ends, victim, lost)
		}
	}
	for k, ends := range sl.ends {
		for _, e := range ends {
			if strings.Contains(e, "FetchFailed") || strings.Contains(e, "fetch of shuffle") {
				t.Errorf("task %v of stage %d: %s (no fetch may fail: the service holds every output)", k[1], k[0], e)
			}
		}
	}
	if why := sl.removed[victim]; why == "" || strings.Contains(why, "released by dynamic allocation") {
		t.Errorf("killed executor %s removed for %q; want its loss", victim, why)
	}
}

// The agents' shuffle service dies with the outputs it held, while dynamic
// allocation has released every executor that wrote them (coarse, two
// hosts; in this test one service on one machine serves both): the
// service is closed, the application's files removed, and the operators'
// supervisor starts a new service on the same directory (a new port and
// certificate). What must happen, and is asserted: the driver's heartbeats
// to the dead service fail UnreachableAfter times and it is reported
// unreachable once, at Error, naming its address, and is sent nothing
// after; the second action's reducers fail to fetch with a FetchFailed
// naming the dead service's address; with
// flint.files.fetchFailure.unRegisterOutputOnHost (Spark's advice with a
// shuffle service: a host's outputs share its service's fate) the DAG core
// drops the lost outputs and the map stage recomputes exactly them — 8
// more map tasks finish, one per lost partition (each fetch failure drops
// its host's outputs, so a resubmission per host at most) — on new executors
// registered with the new service, which the driver then heartbeats; both
// actions' sums equal plain Go's.
func TestDynamicAllocationShuffleServiceDiesWithItsOutputs(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	var svcs []*shuffleservice.Service
	startSvc := func() *shuffleservice.Service {
		svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, svc)
		return svc
	}
	t.Cleanup(func() { // after the driver's goodbye
		for _, s := range svcs {
			s.Close()
		}
	})
	first := startSvc()
	dead := first.Address().BaseURL()
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "svc-dies-host-b", t.TempDir())()
	clk := &jumpClock{}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)},
		"flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.maxExecutors=4",
		"flint.dynamicAllocation.executorIdleTimeout=1h", "flint.executor.heartbeatInterval=200ms",
		"flint.files.fetchFailure.unRegisterOutputOnHost=true", "flint.shuffle.io.maxRetries=1", "flint.shuffle.io.retryWait=100ms",
		"flint.excludeOnFailure.enabled=false", "flint.mesos.executor.maxFailuresPerAgent=1000")
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	sl := newStageLog()
	r.fc.AddListener(sl)
	files := t.TempDir()
	in := burstIn{N: 20000, Gate1: filepath.Join(files, "1"), Gate2: filepath.Join(files, "2")}
	var second *shuffleservice.Service
	between := func() {
		clk.jump(time.Hour + time.Second)
		waitFor(t, 30*time.Second, "every executor released", func() bool { return len(b.Executors()) == 0 })
		waitFor(t, 30*time.Second, "the released executors' processes gone", func() bool { return len(r.executors()) == 0 })
		first.Close()
		if err := os.RemoveAll(shuffleservice.AppsDir(svcDir)); err != nil {
			t.Error(err)
		}
		second = startSvc()
		waitFor(t, 30*time.Second, "the dead service reported unreachable", func() bool {
			return strings.Contains(r.logs.String(), "shuffle service "+dead+" is unreachable")
		})
		if err := os.WriteFile(in.Gate2, nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	betweenActions.Store(&between)
	defer betweenActions.Store(nil)
	go openGateAt(t, b, 4, in.Gate1)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := burstJob.Run(ctx, r.fc, in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{}
	for i := range in.N {
		want[i%101] += int64(i)
	}
	checkSums(t, "first action", out.First, want, 1)
	checkSums(t, "second action", out.Second, want, 2)
	checkRecomputedOnce(t, sl, dead)
	checkUnreachableOnce(t, r.logs.String(), dead)
	app := shuffleAppID(t, svcDir)
	if _, heard := second.LastHeard(app); !heard {
		t.Errorf("the new service never heard from application %s", app)
	}
}

// checkRecomputedOnce asserts that the map stage's tasks finished 16
// times in all: its 8 partitions computed, then the 8 the dead service took
// recomputed exactly once each (every one was lost, so each is recomputed
// at least once; a partition recomputed twice would make more) — a
// resubmitted attempt numbers its tasks 0… within the partitions it
// recomputes, so the events cannot say which partition each was; and that
// a task failed to fetch from the dead service.
func checkRecomputedOnce(t *testing.T, sl *stageLog, dead string) {
	t.Helper()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	finished, fetchFailed := 0, 0
	for k, ends := range sl.ends {
		for _, e := range ends {
			if len(sl.parents[k[0]]) == 0 && e == "FINISHED" {
				finished++
			}
			if strings.Contains(e, "fetch of shuffle") && strings.Contains(e, strings.TrimPrefix(dead, "https://")) {
				fetchFailed++
			}
		}
	}
	if finished != 16 {
		t.Errorf("map tasks finished %d times; want 16 (8 computed, the 8 lost with the service recomputed once each)", finished)
	}
	if fetchFailed == 0 {
		t.Errorf("no task failed to fetch from the dead service %s: %v", dead, sl.ends)
	}
}

// checkUnreachableOnce asserts that the driver reported the dead service
// unreachable once, after UnreachableAfter-1 warned heartbeats, and sent it
// nothing afterwards.
func checkUnreachableOnce(t *testing.T, logs, dead string) {
	t.Helper()
	prefix := "coarse: shuffle service " + dead
	var warned, reported, after int
	for _, line := range strings.Split(logs, "\n") {
		switch {
		case !strings.Contains(line, prefix):
		case strings.Contains(line, "is unreachable: 3 heartbeats in a row failed"):
			reported++
		case reported > 0:
			after++
			t.Errorf("after the report: %s", line)
		case strings.Contains(line, "heartbeat failed"):
			warned++
		}
	}
	if reported != 1 || warned != 2 || after != 0 {
		t.Errorf("the dead service: %d heartbeat failures warned of, %d unreachable reports, %d requests after; want 2, 1, 0", warned, reported, after)
	}
}
