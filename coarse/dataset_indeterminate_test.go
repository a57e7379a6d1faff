package coarse_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/mesostest"
)

// repartArgs is the input of repartitionAfterShuffle: Records numbers
// keyed by n % Keys, reduced into Reduces partitions, then routed round
// robin into Parts partitions.
type repartArgs struct {
	Records, Keys, Reduces, Parts int
	// Before names the shuffle before Repartition: "reduceByKey" or
	// "partitionBy" (whose reducers read records in fetch order).
	Before string
}

// repartitionAfterShuffle is Spark's SPARK-23207 shape: a shuffle, then
// Repartition (its map side numbers each partition's records in the order
// the shuffle delivered them), then a shuffle by key again, collected.
var repartitionAfterShuffle = dataset.JobResult("coarse_test.repartition-after-shuffle", func(b *dataset.Builder, a repartArgs) ([]dataset.KV[int, int64], error) {
	kvs := make([]dataset.KV[int, int64], a.Records)
	for n := range kvs {
		kvs[n] = dataset.KV[int, int64]{Key: n % a.Keys, Value: int64(n)}
	}
	in := dataset.Parallelize(b, kvs, 6)
	add := func(x, y int64) int64 { return x + y }
	var shuffled dataset.Dataset[dataset.KV[int, int64]]
	switch a.Before {
	case "reduceByKey":
		shuffled = dataset.ReduceByKey(in, add, a.Reduces)
	case "partitionBy":
		shuffled = dataset.PartitionBy(in, dataset.HashPartitioner(a.Reduces))
	default:
		return nil, fmt.Errorf("unknown shuffle %q", a.Before)
	}
	// a second sum by key: a record the repartition loses or duplicates
	// changes a key's total
	return dataset.Collect(dataset.ReduceByKey(dataset.Repartition(shuffled, a.Parts), add, 3))
})

// killer SIGKILLs the executor that ran the run's killAt-th task, once:
// executors die at a point of the job chosen by its events, not by time.
type killer struct {
	mu      sync.Mutex
	ended   int
	killAt  int
	killed  string
	procs   func() []proc
	onError func(error)
}

func (k *killer) arm(at int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ended, k.killAt, k.killed = 0, at, ""
}

func (k *killer) victim() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

func (k *killer) OnEvent(e event.Event) {
	te, ok := e.(event.TaskEnd)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ended++
	if k.ended != k.killAt || k.killed != "" {
		return
	}
	for _, p := range k.procs() {
		if p.executorID == te.ExecutorID {
			k.killed = p.executorID
			if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
				k.onError(err)
			}
			return
		}
	}
}

// Repartition after a shuffle on two hosts, with an executor killed after
// the 1st, 2nd, … task of the job: every run's sums are exact (SPARK-23207:
// a recomputed map task of Repartition sends its records elsewhere when
// its input arrives in another order, so Repartition's map stage is
// indeterminate and rerun as a whole, with every stage reading it). The
// answer is computed here in plain Go.
func TestRepartitionAfterShuffleSurvivesExecutorLoss(t *testing.T) {
	// 6 map tasks, 4 reducers with Repartition's map side, 5 Repartition
	// reducers with the last sum's map side, 3 final reducers
	const tasks = 6 + 4 + 5 + 3
	// after an unordered shuffle Repartition's map stage is indeterminate:
	// kill after every task
	t.Run("partitionBy", func(t *testing.T) { repartitionKills(t, "partitionBy", mesostest.Ints(tasks + 1)[1:]) })
	// after reduceByKey (sorted, one record per key) it is determinate:
	// a lost output is recomputed alone
	t.Run("reduceByKey", func(t *testing.T) { repartitionKills(t, "reduceByKey", []int{3, 7, 9, 12, 15, 17}) })
}

func repartitionKills(t *testing.T, before string, killPoints []int) {
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "repart-host-b", t.TempDir())()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.task.maxFailures=8", "flint.excludeOnFailure.enabled=false",
		"flint.mesos.executor.maxFailuresPerAgent=1000")
	k := &killer{procs: r.executors, onError: func(err error) { t.Error(err) }}
	r.fc.AddListener(k)
	a := repartArgs{Records: 30000, Keys: 997, Reduces: 4, Parts: 5, Before: before}
	want := map[int]int64{}
	for n := range a.Records {
		want[n%a.Keys] += int64(n)
	}
	for _, at := range killPoints {
		waitFor(t, 60*time.Second, "4 executors on 2 hosts", func() bool {
			return len(r.executors()) == 4 && r.fc.DefaultParallelism() == 4
		})
		k.arm(at)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		kvs, err := repartitionAfterShuffle.Run(ctx, r.fc, a)
		cancel()
		if err != nil {
			t.Fatalf("executor %q killed after task %d: %v", k.victim(), at, err)
		}
		got := map[int]int64{}
		for _, kv := range kvs {
			if _, dup := got[kv.Key]; dup {
				t.Fatalf("executor %q killed after task %d: key %d twice in the result", k.victim(), at, kv.Key)
			}
			got[kv.Key] = kv.Value
		}
		if !maps.Equal(got, want) {
			t.Fatalf("executor %q killed after task %d: wrong sums, e.g. %s", k.victim(), at, firstDiff(got, want))
		}
	}
}

// firstDiff names the first key whose value differs.
func firstDiff(got, want map[int]int64) string {
	keys := slices.Sorted(maps.Keys(want))
	for _, k := range keys {
		if got[k] != want[k] {
			return fmt.Sprintf("key %d: %d, want %d (%d keys, want %d)", k, got[k], want[k], len(got), len(want))
		}
	}
	return fmt.Sprintf("%d keys, want %d", len(got), len(want))
}
