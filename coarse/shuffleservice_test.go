package coarse_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/indeterminatecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// sumByKey sums numbers by key across a shuffle: 6 map tasks, 4 reducers.
var sumByKey = dataset.JobResult("coarse_test.sum-by-key", func(b *dataset.Builder, n int) ([]dataset.KV[int, int64], error) {
	kvs := make([]dataset.KV[int, int64], n)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	return dataset.Collect(dataset.ReduceByKey(dataset.Parallelize(b, kvs, 6), func(x, y int64) int64 { return x + y }, 4))
})

// stageWatch SIGKILLs, when the job's map stage completes, every executor
// that ran one of its tasks, and records each task end and stage
// completion.
type stageWatch struct {
	mu       sync.Mutex
	procs    func() []proc
	onError  func(error)
	mapStage int
	ranMap   map[string]bool // executors that ran map tasks
	finished map[int]int     // stage → tasks finished
	attempts map[int]int     // stage → attempts completed
	failures []string
	killed   []string
	// svcDir is the agents' shuffle service's directory; held, the
	// directories of the shuffles each killed executor had written there
	// when it was killed.
	svcDir string
	held   map[string][]string
}

func (w *stageWatch) OnEvent(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		if len(e.ParentIDs) == 0 {
			w.mapStage = e.StageID
		}
	case event.TaskEnd:
		if e.State == "FINISHED" {
			w.finished[e.StageID]++
			if e.StageID == w.mapStage {
				w.ranMap[e.ExecutorID] = true
			}
		} else if e.ExecutorID != "" && !contains(w.killed, e.ExecutorID) {
			w.failures = append(w.failures, e.State+": "+e.Reason)
		}
	case event.StageCompleted:
		w.attempts[e.StageID]++
		if e.StageID != w.mapStage || len(w.killed) > 0 {
			return
		}
		for _, p := range w.procs() {
			if w.ranMap[p.executorID] {
				w.killed = append(w.killed, p.executorID)
				if w.svcDir != "" {
					w.held[p.executorID], _ = filepath.Glob(filepath.Join(shuffleservice.AppsDir(w.svcDir), "*", p.executorID, "shuffle_*"))
				}
				if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
					w.onError(err)
				}
			}
		}
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// With the agents' shuffle service, the executors that wrote a shuffle
// are killed the moment its map stage completes: the reducers read every
// output from the service — the map stage ran once, no task saw a fetch
// failure — and the sums are exact. (Without the service the outputs go
// with their executors and the map stage runs again.) When the run ends
// the dataset layer releases its shuffle: the service deletes the killed
// executors' files of it, which it held until then.
func TestReducersReadKilledExecutorsOutputsFromTheShuffleService(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "svc-host-b", t.TempDir())()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.task.maxFailures=8", "flint.excludeOnFailure.enabled=false", "flint.mesos.executor.maxFailuresPerAgent=1000")
	w := &stageWatch{procs: r.executors, onError: func(err error) { t.Error(err) }, mapStage: -1,
		ranMap: map[string]bool{}, finished: map[int]int{}, attempts: map[int]int{}, svcDir: svcDir, held: map[string][]string{}}
	r.fc.AddListener(w)
	waitFor(t, 60*time.Second, "4 executors on 2 hosts", func() bool { return len(r.executors()) == 4 })
	const n = 50000
	want := map[int]int64{}
	for i := range n {
		want[i%101] += int64(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	kvs, err := sumByKey.Run(ctx, r.fc, n)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]int64{}
	for _, kv := range kvs {
		got[kv.Key] = kv.Value
	}
	if !maps.Equal(got, want) {
		t.Fatalf("wrong sums: %s", indeterminatecheck.FirstDiff(got, want))
	}
	w.mu.Lock()
	killed, held := slices.Clone(w.killed), maps.Clone(w.held)
	w.mu.Unlock()
	// the listener must not wait on w.mu while the driver releases the shuffle
	waitFor(t, 30*time.Second, "the service to delete the released shuffle's files of the killed executors", func() bool {
		for _, id := range killed {
			for _, d := range held[id] {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					return false
				}
			}
		}
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.killed) == 0 {
		t.Fatal("no executor was killed when the map stage completed")
	}
	if w.finished[w.mapStage] != 6 || w.attempts[w.mapStage] != 1 {
		t.Errorf("map stage %d: %d tasks finished in %d attempts after %v were killed; want 6 in 1 (nothing recomputed)",
			w.mapStage, w.finished[w.mapStage], w.attempts[w.mapStage], w.killed)
	}
	for _, f := range w.failures {
		if strings.Contains(f, "FetchFailed") || strings.Contains(strings.ToLower(f), "fetch") {
			t.Errorf("a task saw a fetch failure: %s", f)
		}
	}
	for _, id := range w.killed {
		if len(w.held[id]) == 0 {
			t.Errorf("killed executor %s had no shuffle in the service's directory when it was killed", id)
		}
	}
}

// shuffleAppID is the one application registered with the service.
func shuffleAppID(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(shuffleservice.AppsDir(dir))
	if err != nil || len(es) != 1 {
		t.Fatalf("applications registered with the service: %v, %v", es, err)
	}
	return es[0].Name()
}

// The driver keeps its application registered with the agents' shuffle
// services while it runs and says goodbye when it stops: after a shuffle,
// with the service's clock moved past its --app-timeout, a heartbeat comes
// at the new time and the sweep keeps the application's files; Stop
// removes them at once (no sweep).
func TestDriverHeartbeatsTheShuffleServiceAndSaysGoodbye(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	fk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log,
		AppTimeout: time.Minute, SweepEvery: -1, Clock: fk})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	c := startCluster(t, clusterOpts{agents: 1})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.executor.heartbeatInterval=200ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sumByKey.Run(ctx, r.fc, 1000); err != nil {
		t.Fatal(err)
	}
	app := shuffleAppID(t, svcDir)
	appDir := shuffleservice.AppDir(svcDir, app)

	fk.Advance(2 * time.Minute)
	waitFor(t, 30*time.Second, "a heartbeat after the service's clock moved", func() bool {
		last, ok := svc.LastHeard(app)
		return ok && last.Equal(fk.Now())
	})
	if removed := svc.Sweep(); len(removed) != 0 {
		t.Fatalf("the sweep removed %v while the driver runs", removed)
	}
	if _, err := os.Stat(appDir); err != nil {
		t.Fatalf("the application's files while the driver runs: %v", err)
	}

	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(appDir); !os.IsNotExist(err) {
		t.Fatalf("the application's files after the driver stopped: %v (want them removed)", err)
	}
}
