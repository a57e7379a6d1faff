package coarse_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// restartOut is what the restart job's two actions collected.
type restartOut struct{ Sums, Buckets []dataset.KV[int, int64] }

// restartJob writes a shuffle (A: 8 map tasks held at Gate1, sums by key
// in 4 partitions, collected); then (after betweenActions) reads A again
// into a second shuffle (B: the sums summed again by key mod 7, in 3
// partitions), collected.
var restartJob = dataset.JobResult("coarse_test.dynalloc-service-restart", func(b *dataset.Builder, in burstIn) (restartOut, error) {
	kvs := make([]dataset.KV[int, int64], in.N)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	gated := dataset.MapPartitions(dataset.Parallelize(b, kvs, 8), gateThen[dataset.KV[int, int64]](in.Gate1))
	sums := dataset.ReduceByKey(gated, func(x, y int64) int64 { return x + y }, 4)
	first, err := dataset.Collect(sums)
	if err != nil {
		return restartOut{}, err
	}
	if f := betweenActions.Load(); f != nil {
		(*f)()
	}
	byMod := dataset.Map(sums, func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
		return dataset.KV[int, int64]{Key: kv.Key % 7, Value: kv.Value}
	})
	second, err := dataset.Collect(dataset.ReduceByKey(byMod, func(x, y int64) int64 { return x + y }, 3))
	return restartOut{first, second}, err
})

// readWatch sums the remote blocks each stage's tasks read.
type readWatch struct {
	mu     sync.Mutex
	remote map[int]int64 // stage → remote blocks read by its finished tasks
}

func (w *readWatch) OnEvent(e event.Event) {
	if te, ok := e.(event.TaskEnd); ok && te.State == "FINISHED" {
		w.mu.Lock()
		w.remote[te.StageID] += te.ShuffleRead.RemoteBlocks
		w.mu.Unlock()
	}
}

// The agent's shuffle service restarts under live executors (coarse, two
// hosts, dynamic allocation with nothing idle long enough to be released;
// in this test one service on one machine serves both hosts): between the
// actions it dies with the outputs it held (its applications' files
// removed) and the operators' supervisor starts a new one on the same
// directory, on a new port with a new certificate. The same 4 executors
// run the second action: each re-registers with the new service before it
// reports an output, so the outputs written after the restart name the new
// service. What must happen, and is asserted: both actions' results equal
// plain Go's; shuffle A's outputs, which the dead service held, fail to
// fetch (every fetch failure names the dead service's address, none the
// new one's) and are recomputed exactly once (16 map tasks finished: 8,
// then the 8 lost); the last stage, which reads shuffle B (written after
// the restart), runs once, in one attempt, every task finished once and
// some of its blocks fetched from the other host — so through the new
// service, the dead one serving nothing — and no executor is lost or
// replaced; the driver heartbeats the new service.
func TestDynamicAllocationShuffleServiceRestartRepointsLiveExecutors(t *testing.T) {
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
	dead := first.Address()
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "svc-restart-host-b", t.TempDir())()
	r, err := newRunWith(t, mesosURL(c), nil,
		"flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.maxExecutors=4",
		"flint.dynamicAllocation.executorIdleTimeout=1h", "flint.executor.heartbeatInterval=200ms",
		"flint.files.fetchFailure.unRegisterOutputOnHost=true", "flint.shuffle.io.maxRetries=1", "flint.shuffle.io.retryWait=100ms",
		"flint.excludeOnFailure.enabled=false", "flint.mesos.executor.maxFailuresPerAgent=1000",
		"flint.locality.wait=0s") // each stage's tasks take the 4 executors' slots at once, on both hosts
	if err != nil {
		t.Fatal(err)
	}
	b := lastBackend.Load()
	sl := newStageLog()
	r.fc.AddListener(sl)
	rw := &readWatch{remote: map[int]int64{}}
	r.fc.AddListener(rw)
	files := t.TempDir()
	in := burstIn{N: 20000, Gate1: filepath.Join(files, "1")}
	var second *shuffleservice.Service
	var live []string
	between := func() {
		for _, e := range b.Executors() {
			live = append(live, e.ID)
		}
		first.Close()
		if err := os.RemoveAll(shuffleservice.AppsDir(svcDir)); err != nil {
			t.Error(err)
		}
		second = startSvc()
	}
	betweenActions.Store(&between)
	defer betweenActions.Store(nil)
	go openGateAt(t, b, 4, in.Gate1)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := restartJob.Run(ctx, r.fc, in)
	if err != nil {
		t.Fatal(err)
	}
	sums, buckets := map[int]int64{}, map[int]int64{}
	for i := range in.N {
		sums[i%101] += int64(i)
		buckets[(i%101)%7] += int64(i)
	}
	checkSums(t, "first action", out.Sums, sums, 1)
	checkSums(t, "second action", out.Buckets, buckets, 1)
	if len(live) != 4 {
		t.Fatalf("executors at the restart %v; want 4", live)
	}
	checkRecomputedOnce(t, sl, dead.BaseURL())
	checkRestartFetches(t, sl, dead.HostPort, second.Address().HostPort)
	checkLastStageReadNewOutputs(t, sl, rw, live)
	app := shuffleAppID(t, svcDir)
	if _, heard := second.LastHeard(app); !heard {
		t.Errorf("the new service never heard from application %s", app)
	}
}

// checkRestartFetches asserts that every fetch failure names the dead
// service and none the new one.
func checkRestartFetches(t *testing.T, sl *stageLog, dead, nu string) {
	t.Helper()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for k, ends := range sl.ends {
		for _, e := range ends {
			if !strings.Contains(e, "fetch of shuffle") && !strings.Contains(e, "FetchFailed") {
				continue
			}
			if strings.Contains(e, nu) || !strings.Contains(e, dead) {
				t.Errorf("task %d of stage %d: %s; want fetch failures only from the dead service %s, none from the new %s", k[1], k[0], e, dead, nu)
			}
		}
	}
}

// checkLastStageReadNewOutputs asserts that the last stage (reading
// shuffle B, written after the restart) ran once, in one attempt, each
// task finished once on an executor that lived through the restart, some
// blocks fetched from the other host; and that no executor was removed.
func checkLastStageReadNewOutputs(t *testing.T, sl *stageLog, rw *readWatch, live []string) {
	t.Helper()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	last := sl.order[len(sl.order)-1]
	if sl.submitted[last] != 1 || !slices.Equal(sl.completed[last], []string{""}) {
		t.Errorf("the last stage %d: %d attempts submitted, completions %q; want 1 and one success (no fetch failure of the new outputs)",
			last, sl.submitted[last], sl.completed[last])
	}
	for i := range 3 {
		k := [2]int{last, i}
		if ends := sl.ends[k]; !slices.Equal(ends, []string{"FINISHED"}) {
			t.Errorf("the last stage's partition %d ended %q; want FINISHED once", i, ends)
		}
		if on := sl.starts[k]; len(on) != 1 || !slices.Contains(live, on[0]) {
			t.Errorf("the last stage's partition %d ran on %v; want one of the executors that lived through the restart %v", i, on, live)
		}
	}
	rw.mu.Lock()
	remote := rw.remote[last]
	rw.mu.Unlock()
	if remote == 0 {
		t.Errorf("the last stage fetched no block from the other host: nothing shows the new service served the new outputs")
	}
	if len(sl.removed) != 0 {
		t.Errorf("executors removed during the job: %v; want the same 4 throughout", sl.removed)
	}
}
