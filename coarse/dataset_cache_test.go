package coarse_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
)

// cacheRuns counts, per run, the records the cached dataset's closure
// computed, and the two actions' counts.
var cacheRuns = map[int][3]int64{}

var cachedTwice = dataset.Job("coarse_test.cached-twice", func(b *dataset.Builder, n int) error {
	computed := dataset.Counter(b, "computed")
	sq := dataset.Cache(dataset.Map(dataset.Range(b, 0, int64(n), 4), func(x int64) int64 { computed.Add(1); return x * x }))
	first, err := dataset.Count(sq)
	if err != nil {
		return err
	}
	second, err := dataset.Count(dataset.Filter(sq, func(x int64) bool { return x%2 == 0 }))
	if b.Driver() {
		cacheRuns[n] = [3]int64{computed.Value(), first, second}
	}
	return err
})

// taskPlaces records where each stage's tasks started, by partition.
type taskPlaces struct {
	mu     sync.Mutex
	starts map[int]map[int]string // stage → index → executor
	execs  int
}

func (p *taskPlaces) OnEvent(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case event.TaskStart:
		if p.starts[e.StageID] == nil {
			p.starts[e.StageID] = map[int]string{}
		}
		p.starts[e.StageID][e.Index] = e.ExecutorID
	case event.ExecutorAdded:
		p.execs++
	}
}

// Cached partitions are reported to the driver's DAG core, so a later
// action's tasks prefer the executor holding them: each runs where its
// partition was computed and reads it from that executor's cache, and the
// cached dataset's closure ran once per record in all (an accumulator in
// it counts n, not 2n).
func TestCachedPartitionsPreferTheirExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	// a long locality wait: a task waits for the executor holding its
	// partition instead of recomputing it elsewhere
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.locality.wait=60s")
	pl := &taskPlaces{starts: map[int]map[int]string{}}
	r.fc.AddListener(pl)
	waitFor(t, 30*time.Second, "four registered executors", func() bool { return r.fc.DefaultParallelism() == 4 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const n = 1000
	if _, err := cachedTwice.Run(ctx, r.fc, n); err != nil {
		t.Fatal(err)
	}
	if got, want := cacheRuns[n], [3]int64{n, n, n / 2}; got != want {
		t.Fatalf("computed, first and second counts %v, want %v (the second action read every partition from the cache)", got, want)
	}
	waitFor(t, 10*time.Second, "the second action's task starts", func() bool {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		return len(pl.starts[0]) == 4 && len(pl.starts[1]) == 4
	})
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for p := range 4 {
		if a, b := pl.starts[0][p], pl.starts[1][p]; a != b {
			t.Errorf("partition %d computed on executor %s, then read on %s", p, a, b)
		}
	}
}

type persistedArgs struct {
	N        int
	LocalDir string
}

// persistedRuns holds, per run, what the persisted closure computed, the
// cache files seen after the first action, and the second action's sum.
var persistedRuns = map[string]struct {
	computed int64
	files    []string
	sum      int64
}{}

// betweenPersistedActions runs on the driver between the two actions.
var betweenPersistedActions = func() {}

var persistedOnDisk = dataset.Job("coarse_test.persisted-on-disk", func(b *dataset.Builder, a persistedArgs) error {
	computed := dataset.Counter(b, "computed")
	sq := dataset.Persist(dataset.Map(dataset.Range(b, 0, int64(a.N), 4), func(x int64) int64 { computed.Add(1); return x * x }), dataset.MemoryAndDisk)
	if _, err := dataset.Count(sq); err != nil {
		return err
	}
	var files []string
	if b.Driver() {
		files, _ = filepath.Glob(filepath.Join(a.LocalDir, "*", "cache", "part-*"))
		betweenPersistedActions()
	}
	sum, _, err := dataset.Reduce(sq, func(x, y int64) int64 { return x + y })
	if b.Driver() {
		persistedRuns[a.LocalDir] = struct {
			computed int64
			files    []string
			sum      int64
		}{computed.Value(), files, sum}
	}
	return err
})

// Persist(MemoryAndDisk) on Mesos executors with a storage budget smaller
// than a partition: each executor writes its partitions to its local
// directory and a later action reads them back there, except those of an
// executor killed between the actions, which are recomputed from lineage
// elsewhere — the result is exact and the closure ran once per record plus
// once per record of the lost partitions.
func TestPersistedOnDiskSurvivesALostExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	dir := t.TempDir()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.locality.wait=60s", "flint.storage.memory=1k",
		"flint.local.dir="+dir, "flint.task.maxFailures=4", "flint.excludeOnFailure.enabled=false")
	pl := &taskPlaces{starts: map[int]map[int]string{}}
	r.fc.AddListener(pl)
	waitFor(t, 30*time.Second, "four registered executors", func() bool { return r.fc.DefaultParallelism() == 4 })
	const n = 4000
	lost := 0
	betweenPersistedActions = func() {
		defer func() { betweenPersistedActions = func() {} }()
		waitFor(t, 10*time.Second, "the first action's task starts", func() bool {
			pl.mu.Lock()
			defer pl.mu.Unlock()
			return len(pl.starts[0]) == 4
		})
		pl.mu.Lock()
		victim := pl.starts[0][0]
		for _, e := range pl.starts[0] {
			if e == victim {
				lost++
			}
		}
		pl.mu.Unlock()
		for _, p := range r.executors() {
			if p.executorID == victim {
				if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
					t.Error(err)
				}
			}
		}
		waitFor(t, 30*time.Second, "executor "+victim+"'s loss", func() bool {
			return strings.Contains(r.logs.String(), "executor "+victim+" lost")
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := persistedOnDisk.Run(ctx, r.fc, persistedArgs{N: n, LocalDir: dir}); err != nil {
		t.Fatal(err)
	}
	var want int64
	for x := range int64(n) {
		want += x * x
	}
	got := persistedRuns[dir]
	if got.sum != want {
		t.Fatalf("sum of squares %d, want %d", got.sum, want)
	}
	if len(got.files) != 4 {
		t.Errorf("cache files after the first action: %v, want one per partition", got.files)
	}
	if wantComputed := int64(n + lost*n/4); got.computed != wantComputed {
		t.Errorf("the persisted closure ran %d times, want %d (%d partitions lost with their executor)", got.computed, wantComputed, lost)
	}
}
