package indeterminatecheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
)

// Args is the input of RepartitionAfterShuffle: Records numbers keyed by
// n % Keys in 6 partitions, shuffled into Reduces partitions by Before
// ("reduceByKey" or "partitionBy", whose reducers read records in fetch
// order), routed round robin into Parts partitions by Repartition, then
// summed by key into 3 partitions.
type Args struct {
	Records, Keys, Reduces, Parts int
	Before                        string
}

// Tasks is how many tasks RepartitionAfterShuffle runs with Reduces 4 and
// Parts 5 and no failure: 6 map tasks, 4 reducers with Repartition's map
// side, 5 Repartition reducers with the last sum's map side, 3 final
// reducers.
const Tasks = 6 + 4 + 5 + 3

// RepartitionAfterShuffle is Spark's SPARK-23207 shape: a shuffle, then
// Repartition (its map side numbers each partition's records in the order
// the shuffle delivered them), then a sum by key (a record the
// repartition loses or duplicates changes a key's total), collected.
var RepartitionAfterShuffle = dataset.JobResult("indeterminatecheck.repartition-after-shuffle", func(b *dataset.Builder, a Args) ([]dataset.KV[int, int64], error) {
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
		return nil, fmt.Errorf("indeterminatecheck: unknown shuffle %q", a.Before)
	}
	return dataset.Collect(dataset.ReduceByKey(dataset.Repartition(shuffled, a.Parts), add, 3))
})

// Want is RepartitionAfterShuffle's answer computed without Flint.
func Want(a Args) map[int]int64 {
	want := map[int]int64{}
	for n := range a.Records {
		want[n%a.Keys] += int64(n)
	}
	return want
}

// Proc is an executor process a Killer may kill.
type Proc struct {
	ExecutorID string
	PID        int
}

// Killer SIGKILLs the executor that ran the armed job's n-th task, once:
// executors die at a point of the job chosen by its events, not by time.
// Procs lists the executor processes; OnError gets a failed kill and a
// task whose executor has no process in Procs.
type Killer struct {
	Procs   func() []Proc
	OnError func(error)

	mu     sync.Mutex
	ended  int
	killAt int
	killed string
}

// Arm makes the at-th task end from now kill its executor.
func (k *Killer) Arm(at int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ended, k.killAt, k.killed = 0, at, ""
}

// Victim is the executor killed since Arm ("" when none was).
func (k *Killer) Victim() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

// OnEvent counts task ends and kills at the armed one.
func (k *Killer) OnEvent(e event.Event) {
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
	for _, p := range k.Procs() {
		if p.ExecutorID == te.ExecutorID {
			k.killed = p.ExecutorID
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				k.OnError(fmt.Errorf("indeterminatecheck: kill executor %q (pid %d): %w", p.ExecutorID, p.PID, err))
			}
			return
		}
	}
	k.OnError(fmt.Errorf("indeterminatecheck: no process for executor %q that ran task %d", te.ExecutorID, k.ended))
}

// Options adjust Kills to a backend.
type Options struct {
	// Ready, when set, waits before each run until the cluster is back to
	// its size (coarse: the killed executor replaced).
	Ready func(t *testing.T)
	// Timeout bounds each run (default 120 s).
	Timeout time.Duration
}

// Kills runs RepartitionAfterShuffle with a on fc once per kill point,
// arming k at it first, and fails t unless every run killed an executor
// and returned exactly Want(a): each key once with its plain-Go sum.
func Kills(t *testing.T, fc *framework.Context, k *Killer, a Args, points []int, o Options) {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 120 * time.Second
	}
	want := Want(a)
	for _, at := range points {
		if o.Ready != nil {
			o.Ready(t)
		}
		k.Arm(at)
		ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
		kvs, err := RepartitionAfterShuffle.Run(ctx, fc, a)
		cancel()
		if err != nil {
			t.Fatalf("executor %q killed after task %d: %v", k.Victim(), at, err)
		}
		if k.Victim() == "" {
			t.Fatalf("no executor was killed after task %d", at)
		}
		got := map[int]int64{}
		for _, kv := range kvs {
			if _, dup := got[kv.Key]; dup {
				t.Fatalf("executor %q killed after task %d: key %d twice in the result", k.Victim(), at, kv.Key)
			}
			got[kv.Key] = kv.Value
		}
		if !maps.Equal(got, want) {
			t.Fatalf("executor %q killed after task %d: wrong sums, e.g. %s", k.Victim(), at, FirstDiff(got, want))
		}
	}
}

// FirstDiff names the first key (in order) whose value differs.
func FirstDiff(got, want map[int]int64) string {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			return fmt.Sprintf("key %d: %d, want %d (%d keys, want %d)", k, got[k], want[k], len(got), len(want))
		}
	}
	return fmt.Sprintf("%d keys, want %d", len(got), len(want))
}
