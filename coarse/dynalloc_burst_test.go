package coarse_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/indeterminatecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// burstIn is the bursty job's input: n records, and the gate files its map
// tasks (Gate1) and its second action's tasks (Gate2) wait for.
type burstIn struct {
	N            int
	Gate1, Gate2 string
}

// burstOut is what the bursty job's two actions collected.
type burstOut struct{ First, Second []dataset.KV[int, int64] }

// betweenActions, set by a test in the driver process only, runs between
// the bursty job's two actions (the idle time); executors rebuilding the
// job's graph find it nil.
var betweenActions atomic.Pointer[func()]

// burstJob is a wide stage, an idle time, and another stage reading the
// same shuffle: 8 map tasks held at Gate1, sums by key in 4 partitions
// collected; then (after betweenActions) the doubled sums collected by 4
// tasks held at Gate2, which read the first action's map outputs again.
var burstJob = dataset.JobResult("coarse_test.dynalloc-bursts", func(b *dataset.Builder, in burstIn) (burstOut, error) {
	kvs := make([]dataset.KV[int, int64], in.N)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	gated := dataset.MapPartitions(dataset.Parallelize(b, kvs, 8), gateThen[dataset.KV[int, int64]](in.Gate1))
	sums := dataset.ReduceByKey(gated, func(x, y int64) int64 { return x + y }, 4)
	first, err := dataset.Collect(sums)
	if err != nil {
		return burstOut{}, err
	}
	if f := betweenActions.Load(); f != nil {
		(*f)()
	}
	doubled := dataset.Map(dataset.MapPartitions(sums, gateThen[dataset.KV[int, int64]](in.Gate2)),
		func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
			return dataset.KV[int, int64]{Key: kv.Key, Value: 2 * kv.Value}
		})
	second, err := dataset.Collect(doubled)
	return burstOut{first, second}, err
})

// gateThen waits until the gate file exists, then passes the partition's
// records on: the test opens the gate once the executors it expects run.
func gateThen[T any](gate string) func(int, func(func(T) bool), func(T)) error {
	return func(_ int, records func(func(T) bool), yield func(T)) error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("gate %s not opened within 2 minutes", gate)
			}
			time.Sleep(10 * time.Millisecond) // the workload waits; the test waits on events
		}
		records(func(r T) bool { yield(r); return true })
		return nil
	}
}

// allocWatch records executors added and removed and the tasks of the
// first map stage.
type allocWatch struct {
	mu       sync.Mutex
	mapStage int
	added    []string
	removed  map[string]string // executor → reason
	mapTasks int               // task ends of the map stage
	ran      map[string]bool   // executors that started a task
	failures []string          // tasks that did not finish, stages that failed
}

func (w *allocWatch) OnEvent(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := e.(type) {
	case event.ExecutorAdded:
		w.added = append(w.added, e.ExecutorID)
	case event.ExecutorRemoved:
		w.removed[e.ExecutorID] = e.Reason
	case event.TaskStart:
		w.ran[e.ExecutorID] = true
	case event.StageSubmitted:
		if len(e.ParentIDs) == 0 && w.mapStage < 0 {
			w.mapStage = e.StageID
		}
	case event.TaskEnd:
		if e.StageID == w.mapStage {
			w.mapTasks++
		}
		if e.State != "FINISHED" {
			w.failures = append(w.failures, fmt.Sprintf("task %d of stage %d on %s %s: %s", e.Index, e.StageID, e.ExecutorID, e.State, e.Reason))
		}
	case event.StageCompleted:
		if e.FailureReason != "" {
			w.failures = append(w.failures, fmt.Sprintf("stage %d: %s", e.StageID, e.FailureReason))
		}
	}
}

func (w *allocWatch) ranOn(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran[id]
}

func (w *allocWatch) snapshot() (added []string, removed map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.added), maps.Clone(w.removed)
}

// jumpClock is the wall clock plus an offset a test moves forward: the
// driver's timers run in real time and a test skips ahead by a timeout
// instead of waiting it out.
type jumpClock struct{ offset atomic.Int64 }

func (c *jumpClock) now() time.Time       { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *jumpClock) jump(d time.Duration) { c.offset.Add(int64(d)) }

// Dynamic allocation on the embedded master, with the agents' shuffle
// service: starting from no executor, a backlog of 8 map tasks ramps the
// application to maxExecutors (4); once idle for executorIdleTimeout (an
// hour, skipped on the driver's clock) every executor is released; the
// second burst ramps new executors to 4 again, and its tasks read the
// released executors' map outputs from the service — the map stage ran its
// 8 tasks once, no task failed, nothing was fetched in vain — with sums
// equal to plain Go's.
func TestDynamicAllocationRampsReleasesAndReadsReleasedOutputs(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "alloc-host-b", t.TempDir())()
	clk := &jumpClock{}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)},
		"flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.maxExecutors=4",
		"flint.dynamicAllocation.executorIdleTimeout=1h")
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	w := &allocWatch{mapStage: -1, removed: map[string]string{}, ran: map[string]bool{}}
	r.fc.AddListener(w)

	offersAnswered(t, c)
	if n := len(b.Executors()); n != 0 {
		t.Fatalf("%d executors before any task (minExecutors 0, initialExecutors unset)", n)
	}

	gates := t.TempDir()
	in := burstIn{N: 20000, Gate1: filepath.Join(gates, "1"), Gate2: filepath.Join(gates, "2")}
	var first []string
	between := func() {
		added, removed := w.snapshot()
		first = added
		if len(removed) != 0 {
			t.Errorf("executors removed during the first burst: %v", removed)
		}
		clk.jump(time.Hour + time.Second)
		waitFor(t, 30*time.Second, "every executor released", func() bool {
			_, removed := w.snapshot()
			return len(removed) == len(first) && len(b.Executors()) == 0
		})
		waitFor(t, 30*time.Second, "the released executors' processes gone", func() bool { return len(r.executors()) == 0 })
		go openGateAt(t, b, 4, in.Gate2)
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
	checkSums(t, "first burst", out.First, want, 1)
	checkSums(t, "second burst", out.Second, want, 2)

	added, removed := w.snapshot()
	if len(first) != 4 {
		t.Errorf("first burst ran on executors %v; want 4 (maxExecutors)", first)
	}
	second := added[len(first):]
	if len(second) != 4 {
		t.Errorf("second burst ran on executors %v; want 4 new ones", second)
	}
	for _, id := range first {
		if why := removed[id]; why != "released by dynamic allocation: idle past executorIdleTimeout" {
			t.Errorf("executor %s removed for %q; want its release after executorIdleTimeout", id, why)
		}
	}
	for _, id := range second {
		if why, ok := removed[id]; ok {
			t.Errorf("executor %s of the second burst removed before Stop: %s", id, why)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mapTasks != 8 {
		t.Errorf("the map stage ended %d tasks; want its 8, once (nothing recomputed)", w.mapTasks)
	}
	if len(w.failures) > 0 {
		t.Errorf("failures (none expected: the released outputs are served by the shuffle service):\n%s", strings.Join(w.failures, "\n"))
	}
}

// openGateAt opens gate once n executors are registered.
func openGateAt(t *testing.T, b *coarse.Backend, n int, gate string) {
	waitFor(t, 60*time.Second, fmt.Sprintf("%d registered executors", n), func() bool { return registered(b) == n })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Error(err)
	}
}

// checkSums compares collected sums with want × factor.
func checkSums(t *testing.T, what string, kvs []dataset.KV[int, int64], want map[int]int64, factor int64) {
	t.Helper()
	got := map[int]int64{}
	for _, kv := range kvs {
		got[kv.Key] = kv.Value
	}
	scaled := map[int]int64{}
	for k, v := range want {
		scaled[k] = v * factor
	}
	if !maps.Equal(got, scaled) {
		t.Errorf("%s: wrong sums: %s", what, indeterminatecheck.FirstDiff(got, scaled))
	}
}

// cachedIn is the cached job's input: records in 2 persisted partitions.
type cachedIn struct{ N int }

// cachedJob counts a persisted dataset twice, with betweenActions between
// the two counts (while the run's cached partitions live).
var cachedJob = dataset.JobResult("coarse_test.dynalloc-cached", func(b *dataset.Builder, in cachedIn) ([2]int64, error) {
	kept := dataset.Persist(dataset.Parallelize(b, ints(in.N), 2), dataset.MemoryOnly)
	first, err := dataset.Count(kept)
	if err != nil {
		return [2]int64{}, err
	}
	if f := betweenActions.Load(); f != nil {
		(*f)()
	}
	second, err := dataset.Count(kept)
	return [2]int64{first, second}, err
})

// An executor holding cached partitions outlives executorIdleTimeout: with
// 4 initial executors and a persisted dataset of 2 partitions, an hour
// idle releases the executors holding none, while the holders stay until
// cachedExecutorIdleTimeout (2 h) releases them too; the second count then
// runs on new executors with the right answer.
func TestDynamicAllocationCachedExecutorOutlivesIdleTimeout(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	clk := &jumpClock{}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)}, "flint.executor.cores=1",
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.initialExecutors=4", "flint.dynamicAllocation.maxExecutors=4",
		"flint.dynamicAllocation.executorIdleTimeout=1h", "flint.dynamicAllocation.cachedExecutorIdleTimeout=2h")
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	w := &allocWatch{mapStage: -1, removed: map[string]string{}, ran: map[string]bool{}}
	r.fc.AddListener(w)
	waitFor(t, 60*time.Second, "4 initial executors registered", func() bool { return registered(b) == 4 })
	added, _ := w.snapshot()

	between := func() {
		var holders, others []string
		for _, id := range added {
			if w.ranOn(id) {
				holders = append(holders, id)
			} else {
				others = append(others, id)
			}
		}
		if len(holders) == 0 || len(holders) > 2 || len(others) < 2 {
			t.Errorf("the 2 cached partitions were computed on %v of %v", holders, added)
			return
		}
		clk.jump(time.Hour + time.Second)
		waitFor(t, 30*time.Second, "the executors without cached partitions released", func() bool {
			_, removed := w.snapshot()
			return len(removed) == len(others)
		})
		_, removed := w.snapshot()
		for _, id := range others {
			if why := removed[id]; why != "released by dynamic allocation: idle past executorIdleTimeout" {
				t.Errorf("executor %s (no cached partition) removed for %q", id, why)
			}
		}
		live := map[string]bool{}
		for _, e := range b.Executors() {
			live[e.ID] = true
		}
		for _, id := range holders {
			if !live[id] {
				t.Errorf("executor %s holding a cached partition is gone after executorIdleTimeout (removed: %q)", id, removed[id])
			}
		}
		clk.jump(time.Hour)
		waitFor(t, 30*time.Second, "the executors holding cached partitions released", func() bool {
			_, removed := w.snapshot()
			return len(removed) == len(added)
		})
		_, removed = w.snapshot()
		for _, id := range holders {
			if why := removed[id]; why != "released by dynamic allocation: idle past cachedExecutorIdleTimeout" {
				t.Errorf("executor %s (cached partitions) removed for %q", id, why)
			}
		}
	}
	betweenActions.Store(&between)
	defer betweenActions.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 1000
	counts, err := cachedJob.Run(ctx, r.fc, cachedIn{N: n})
	if err != nil {
		t.Fatal(err)
	}
	if counts != [2]int64{n, n} {
		t.Errorf("counts %v, want %d twice", counts, n)
	}
}

// Bad dynamic allocation settings are one error naming the key, at load
// and from NewContext for settings changed after it, before any executor
// (or the embedded cluster) starts.
func TestDynamicAllocationBadSettingsOneError(t *testing.T) {
	for _, tc := range []struct {
		conf []string
		want string
	}{
		{[]string{"flint.dynamicAllocation.minExecutors=3", "flint.dynamicAllocation.maxExecutors=2"},
			"flint.dynamicAllocation.minExecutors (3) is above flint.dynamicAllocation.maxExecutors (2)"},
		{[]string{"flint.dynamicAllocation.executorIdleTimeout=0"},
			"flint.dynamicAllocation.executorIdleTimeout is 0s; it must be > 0"},
	} {
		conf := append([]string{"flint.master=embedded", "flint.dynamicAllocation.enabled=true"}, tc.conf...)
		_, err := config.Load(config.LoadOptions{Conf: conf})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load %v: %v; want one line naming %q", tc.conf, err, tc.want)
		}
		cfg, err := config.Load(config.LoadOptions{Conf: conf[:2]})
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range tc.conf {
			k, v, _ := strings.Cut(kv, "=")
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		fc, err := framework.NewContext(context.Background(), cfg)
		if err == nil {
			_ = fc.Stop(context.Background())
			t.Fatalf("NewContext with %v started", tc.conf)
		}
		if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, allocation.ErrConfig) {
			t.Errorf("NewContext %v: %v; want allocation.ErrConfig naming %q", tc.conf, err, tc.want)
		}
	}
}

// A backlog that comes and goes faster than executorIdleTimeout causes no
// launch/kill thrash: six bursts of 8 tasks of 150 ms, 30 s apart on the
// driver's clock (idle timeout 60 s), run on at most maxExecutors (4)
// executors launched in all, none released.
func TestDynamicAllocationOscillatingBacklogDoesNotThrash(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	clk := &jumpClock{}
	r, err := newRunWith(t, mesosURL(c), []framework.Option{framework.WithClock(clk.now)}, "flint.executor.cores=1",
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.maxExecutors=4")
	if err != nil {
		t.Fatal(err)
	}
	w := &allocWatch{mapStage: -1, removed: map[string]string{}, ran: map[string]bool{}}
	r.fc.AddListener(w)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for burst := range 6 {
		out, err := framework.Map(ctx, r.fc, nap, ints(8))
		if err != nil {
			t.Fatalf("burst %d: %v", burst, err)
		}
		for i, v := range out {
			if v != 2*i {
				t.Fatalf("burst %d: result %d = %d, want %d", burst, i, v, 2*i)
			}
		}
		clk.jump(30 * time.Second)
	}
	if err := r.fc.Stop(context.Background()); err != nil { // delivers every event
		t.Fatal(err)
	}
	added, removed := w.snapshot()
	if len(added) == 0 || len(added) > 4 {
		t.Errorf("%d executors launched over 6 bursts: %v; want 1 to maxExecutors (4)", len(added), added)
	}
	for id, why := range removed {
		if strings.HasPrefix(why, "released by dynamic allocation") {
			t.Errorf("executor %s released between bursts 30 s apart (idle timeout 60 s): %s", id, why)
		}
	}
}
