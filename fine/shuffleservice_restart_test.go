package fine_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/indeterminatecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// restartBetween, set by the test in the driver process only, runs
// between serviceRestartJob's actions; executors find it nil.
var restartBetween atomic.Pointer[func()]

// serviceRestartJob writes a shuffle (A: sums by key in 4 partitions of 8
// map tasks), collected; then (after restartBetween) reads it into a
// second shuffle (B: the sums summed by key mod 7 in 3 partitions),
// collected.
var serviceRestartJob = dataset.JobResult("fine_test.service-restart", func(b *dataset.Builder, n int) ([2][]dataset.KV[int, int64], error) {
	kvs := make([]dataset.KV[int, int64], n)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	add := func(x, y int64) int64 { return x + y }
	sums := dataset.ReduceByKey(dataset.Parallelize(b, kvs, 8), add, 4)
	first, err := dataset.Collect(sums)
	if err != nil {
		return [2][]dataset.KV[int, int64]{}, err
	}
	if f := restartBetween.Load(); f != nil {
		(*f)()
	}
	byMod := dataset.Map(sums, func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
		return dataset.KV[int, int64]{Key: kv.Key % 7, Value: kv.Value}
	})
	second, err := dataset.Collect(dataset.ReduceByKey(byMod, add, 3))
	return [2][]dataset.KV[int, int64]{first, second}, err
})

// taskLog records the stages (order, parents, attempts, completions) and
// every task attempt's end and remote blocks read.
type taskLog struct {
	mu        sync.Mutex
	order     []int
	parents   map[int][]int
	submitted map[int]int
	completed map[int][]string
	ends      map[[2]int][]string
	remote    map[int]int64
}

func (l *taskLog) OnEvent(e event.Event) {
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
	case event.TaskEnd:
		end := e.State
		if e.Reason != "" {
			end += ": " + e.Reason
		}
		k := [2]int{e.StageID, e.Index}
		l.ends[k] = append(l.ends[k], end)
		if e.State == "FINISHED" {
			l.remote[e.StageID] += e.ShuffleRead.RemoteBlocks
		}
	}
}

// Fine mode's run of the shuffle service restarting under live executors
// (coarse runs it too: TestDynamicAllocationShuffleServiceRestartRepointsLiveExecutors):
// two hosts, fine executors kept while the driver runs, the service dies
// with its files between the actions and a new one starts on the same
// directory (new port, new certificate). The same two executor processes
// run the second action and re-register with the new service, so the
// outputs they write then name it. Asserted: both actions' results equal
// plain Go's; every fetch failure names the dead service, none the new
// one; the map stage's 8 lost outputs are recomputed exactly once (16 map
// tasks finished); the last stage, reading the shuffle written after the
// restart, runs in one attempt with each task finished once and remote
// blocks read (through the new service); no executor process was
// replaced; the driver heartbeats the new service.
func TestShuffleServiceRestartRepointsLiveExecutors(t *testing.T) {
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
	t.Cleanup(func() {
		for _, s := range svcs {
			s.Close()
		}
	})
	first := startSvc()
	c := startCluster(t, clusterOpts{agents: 1})
	startAgent(t, c, agent.Config{WorkDir: t.TempDir(), Hostname: "fine-restart-host-b",
		Resources: "cpus:4;mem:1024;disk:1024;ports:[31000-31100]", ShutdownGrace: time.Second, KillGrace: time.Second})
	r := mustRun(t, mesosURL(c), "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.executor.heartbeatInterval=200ms", "flint.mesos.fine.executorIdleTimeout=0",
		"flint.files.fetchFailure.unRegisterOutputOnHost=true", "flint.shuffle.io.maxRetries=1", "flint.shuffle.io.retryWait=100ms",
		"flint.excludeOnFailure.enabled=false", "flint.mesos.executor.maxFailuresPerAgent=1000")
	tl := &taskLog{parents: map[int][]int{}, submitted: map[int]int{}, completed: map[int][]string{},
		ends: map[[2]int][]string{}, remote: map[int]int64{}}
	r.fc.AddListener(tl)
	var second *shuffleservice.Service
	var before []proc
	between := func() {
		before = executors(r.mark)
		first.Close()
		if err := os.RemoveAll(shuffleservice.AppsDir(svcDir)); err != nil {
			t.Error(err)
		}
		second = startSvc()
	}
	restartBetween.Store(&between)
	defer restartBetween.Store(nil)

	const n = 20000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := serviceRestartJob.Run(ctx, r.fc, n)
	if err != nil {
		t.Fatal(err)
	}
	sums, buckets := map[int]int64{}, map[int]int64{}
	for i := range n {
		sums[i%101] += int64(i)
		buckets[(i%101)%7] += int64(i)
	}
	for i, want := range []map[int]int64{sums, buckets} {
		got := map[int]int64{}
		for _, kv := range out[i] {
			got[kv.Key] = kv.Value
		}
		if !maps.Equal(got, want) {
			t.Errorf("action %d: wrong sums: %s", i+1, indeterminatecheck.FirstDiff(got, want))
		}
	}
	if after := executors(r.mark); len(before) != 2 || !slices.Equal(after, before) {
		t.Errorf("executor processes at the restart %v, after the job %v; want the same two throughout", before, after)
	}
	checkFineRestart(t, tl, first.Address().HostPort, second.Address().HostPort)
	es, err := os.ReadDir(shuffleservice.AppsDir(svcDir))
	if err != nil || len(es) != 1 {
		t.Fatalf("applications registered with the new service: %v, %v", es, err)
	}
	if _, heard := second.LastHeard(es[0].Name()); !heard {
		t.Errorf("the new service never heard from application %s", es[0].Name())
	}
}

// checkFineRestart asserts the fetch failures (only from dead), the map
// stage's 16 finished tasks and the last stage's single clean attempt.
func checkFineRestart(t *testing.T, tl *taskLog, dead, nu string) {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	mapsFinished, fetchFailed := 0, 0
	for k, ends := range tl.ends {
		for _, e := range ends {
			if len(tl.parents[k[0]]) == 0 && e == "FINISHED" {
				mapsFinished++
			}
			if strings.Contains(e, "fetch of shuffle") || strings.Contains(e, "FetchFailed") {
				fetchFailed++
				if strings.Contains(e, nu) || !strings.Contains(e, dead) {
					t.Errorf("task %d of stage %d: %s; want fetch failures only from the dead service %s", k[1], k[0], e, dead)
				}
			}
		}
	}
	if mapsFinished != 16 || fetchFailed == 0 {
		t.Errorf("map tasks finished %d times, %d fetch failures; want 16 (8, then the 8 lost recomputed once) and some", mapsFinished, fetchFailed)
	}
	last := tl.order[len(tl.order)-1]
	if tl.submitted[last] != 1 || !slices.Equal(tl.completed[last], []string{""}) || tl.remote[last] == 0 {
		t.Errorf("the last stage %d: %d attempts, completions %q, %d remote blocks; want 1, one success, some",
			last, tl.submitted[last], tl.completed[last], tl.remote[last])
	}
	for i := range 3 {
		if ends := tl.ends[[2]int{last, i}]; !slices.Equal(ends, []string{"FINISHED"}) {
			t.Errorf("the last stage's partition %d ended %q; want FINISHED once", i, ends)
		}
	}
}
