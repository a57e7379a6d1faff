package coarse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// benchBurstIn is the bursty benchmark's input: N records in Maps map
// tasks of Work busy time each, reduced into Reduces partitions.
type benchBurstIn struct {
	N, Maps, Reduces int
	Work             time.Duration
}

// benchBurstJob is a wide stage, betweenActions (the idle time), and a
// second action reading the same shuffle again plus a new wide stage.
var benchBurstJob = dataset.JobResult("coarse_test.dynalloc-bench", func(b *dataset.Builder, in benchBurstIn) ([2]int64, error) {
	kvs := make([]dataset.KV[int, int64], in.N)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 1009, Value: int64(i)}
	}
	busy := func(_ int, records func(func(dataset.KV[int, int64]) bool), yield func(dataset.KV[int, int64])) error {
		time.Sleep(in.Work) // the task's work: holds its slot for Work
		records(func(r dataset.KV[int, int64]) bool { yield(r); return true })
		return nil
	}
	sums := dataset.ReduceByKey(dataset.MapPartitions(dataset.Parallelize(b, kvs, in.Maps), busy),
		func(x, y int64) int64 { return x + y }, in.Reduces)
	first, err := dataset.Count(sums)
	if err != nil {
		return [2]int64{}, err
	}
	if f := betweenActions.Load(); f != nil {
		(*f)()
	}
	again := dataset.ReduceByKey(dataset.MapPartitions(sums, busy), func(x, y int64) int64 { return x + y }, in.Reduces)
	second, err := dataset.Count(again)
	return [2]int64{first, second}, err
})

// benchWatch collects the figures: executors' lifetimes, task times, the
// reduce stages' task times.
type benchWatch struct {
	mu        sync.Mutex
	added     map[string]time.Time
	removed   map[string]time.Time
	addedAt   []time.Time
	firstTask time.Time
	taskTime  time.Duration
	stageRun  map[int][]time.Duration // stage → task run times
	fetchWait map[int]time.Duration
	stages    []int // stage ids in submission order
}

func (w *benchWatch) OnEvent(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := e.(type) {
	case event.ExecutorAdded:
		w.added[e.ExecutorID] = e.Time
		w.addedAt = append(w.addedAt, e.Time)
	case event.ExecutorRemoved:
		w.removed[e.ExecutorID] = e.Time
	case event.StageSubmitted:
		if !slices.Contains(w.stages, e.StageID) {
			w.stages = append(w.stages, e.StageID)
		}
		if w.firstTask.IsZero() {
			w.firstTask = e.Time
		}
	case event.TaskEnd:
		w.taskTime += e.RunTime
		w.stageRun[e.StageID] = append(w.stageRun[e.StageID], e.RunTime)
		w.fetchWait[e.StageID] += e.ShuffleRead.FetchWait
	}
}

// executorSeconds is Σ executor lifetime on the driver's clock, an
// executor still up counted until end.
func (w *benchWatch) executorSeconds(end time.Time) time.Duration {
	var sum time.Duration
	for id, at := range w.added {
		until, ok := w.removed[id]
		if !ok {
			until = end
		}
		sum += until.Sub(at)
	}
	return sum
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// The bursty workload's figures for docs/benchmarks.md (set
// FLINT_BENCH_DYNALLOC=1): two agents of 2 cores, 1-core executors, the
// shuffle service on; 16 map tasks of 500 ms, an idle of 10 minutes on the
// driver's clock (skipped, not waited), then 4 reduce tasks reading the
// shuffle again and another wide stage; with dynamic allocation (min 0,
// max 4, executorIdleTimeout 60 s) and without (executors held throughout).
func TestDynamicAllocationBurstFigures(t *testing.T) {
	if os.Getenv("FLINT_BENCH_DYNALLOC") == "" {
		t.Skip("a measurement: set FLINT_BENCH_DYNALLOC=1")
	}
	for _, dyn := range []bool{true, false} {
		t.Run(fmt.Sprintf("dynamic=%t", dyn), func(t *testing.T) { burstFigures(t, dyn) })
	}
}

func burstFigures(t *testing.T, dyn bool) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "bench-host-b", filepath.Join(t.TempDir()))()
	clk := &jumpClock{}
	conf := []string{"flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir=" + svcDir,
		fmt.Sprintf("flint.dynamicAllocation.enabled=%t", dyn), "flint.dynamicAllocation.maxExecutors=4"}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)}, conf...)
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	w := &benchWatch{added: map[string]time.Time{}, removed: map[string]time.Time{},
		stageRun: map[int][]time.Duration{}, fetchWait: map[int]time.Duration{}}
	r.fc.AddListener(w)
	if !dyn {
		waitFor(t, 60*time.Second, "4 executors", func() bool { return registered(b) == 4 })
	}
	const idle = 10 * time.Minute
	between := func() {
		// the idle timeout passes, then the rest of the idle time
		clk.jump(61 * time.Second)
		if dyn {
			waitFor(t, 30*time.Second, "the idle executors released", func() bool { return len(b.Executors()) == 0 })
		}
		clk.jump(idle - 61*time.Second)
	}
	betweenActions.Store(&between)
	defer betweenActions.Store(nil)
	in := benchBurstIn{N: 200000, Maps: 16, Reduces: 4, Work: 500 * time.Millisecond}
	start := clk.now()
	wallStart := time.Now()
	counts, err := benchBurstJob.Run(context.Background(), r.fc, in)
	if err != nil {
		t.Fatal(err)
	}
	end := clk.now()
	wall := time.Since(wallStart)
	if counts != [2]int64{1009, 1009} {
		t.Fatalf("counts %v, want 1009 keys twice", counts)
	}
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	scale := time.Duration(0)
	if dyn && len(w.addedAt) >= 4 {
		scale = w.addedAt[3].Sub(w.firstTask)
	}
	// stages in order: map, reduce (live outputs), [map skipped], reduce
	// of the second action (released outputs), its next stage
	var reduces []int
	for _, s := range w.stages {
		if len(w.stageRun[s]) == in.Reduces {
			reduces = append(reduces, s)
		}
	}
	t.Logf("dynamic=%t: timeline %v (%v idle skipped on the driver's clock, wall %v), executors %d, executor-seconds %.1f, task time %.1f s, min→max %v",
		dyn, end.Sub(start).Round(time.Millisecond), idle, wall.Round(time.Millisecond), len(w.added),
		w.executorSeconds(end).Seconds(), w.taskTime.Seconds(), scale.Round(time.Millisecond))
	for _, s := range reduces {
		t.Logf("dynamic=%t: stage %d (%d tasks): median task %v, fetch wait %v", dyn, s, len(w.stageRun[s]),
			median(w.stageRun[s]).Round(time.Millisecond), w.fetchWait[s].Round(time.Microsecond))
	}
}
