package fine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
)

// repartArgs is the input of repartitionAfterShuffle: Records numbers
// keyed by n % Keys, shuffled into Reduces partitions (by Before:
// "reduceByKey" or "partitionBy"), then routed round robin into Parts
// partitions.
type repartArgs struct {
	Records, Keys, Reduces, Parts int
	Before                        string
}

// repartitionAfterShuffle is Spark's SPARK-23207 shape, as in coarse's
// test: a shuffle, Repartition (numbering each partition's records in the
// order the shuffle delivered them), a sum by key, collected.
var repartitionAfterShuffle = dataset.JobResult("fine_test.repartition-after-shuffle", func(b *dataset.Builder, a repartArgs) ([]dataset.KV[int, int64], error) {
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
	return dataset.Collect(dataset.ReduceByKey(dataset.Repartition(shuffled, a.Parts), add, 3))
})

// killer SIGKILLs the fine executor that ran the job's killAt-th task,
// once: executors die at a point of the job chosen by its events.
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
	k.onError(fmt.Errorf("no process for executor %q that ran task %d", te.ExecutorID, k.ended))
}

// Fine mode's copy of coarse's TestRepartitionAfterShuffleSurvivesExecutorLoss:
// Repartition after a shuffle on two hosts, the fine executor that ran the
// 1st, 3rd, … task of the job killed, every run's sums exact (compared
// with sums computed here in plain Go). Repartition's map stage reads an
// unordered shuffle (partitionBy), so it is indeterminate and rerun whole
// with every stage reading it; after reduceByKey it is determinate and a
// lost output is recomputed alone.
func TestRepartitionAfterShuffleSurvivesExecutorLoss(t *testing.T) {
	// 6 map tasks, 4 reducers with Repartition's map side, 5 Repartition
	// reducers with the last sum's map side, 3 final reducers
	const tasks = 6 + 4 + 5 + 3
	var odd []int
	for at := 1; at <= tasks; at += 2 {
		odd = append(odd, at)
	}
	t.Run("partitionBy", func(t *testing.T) { repartitionKills(t, "partitionBy", odd) })
	t.Run("reduceByKey", func(t *testing.T) { repartitionKills(t, "reduceByKey", []int{3, 9, 12, 17}) })
}

func repartitionKills(t *testing.T, before string, killPoints []int) {
	c := startCluster(t, clusterOpts{agents: 1})
	startAgent(t, c, agent.Config{WorkDir: t.TempDir(), Hostname: "repart-host-b",
		Resources: "cpus:4;mem:1024;disk:1024;ports:[31000-31100]", ShutdownGrace: time.Second, KillGrace: time.Second})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=8", "flint.excludeOnFailure.enabled=false",
		"flint.mesos.executor.maxFailuresPerAgent=1000")
	k := &killer{procs: func() []proc { return executors(r.mark) }, onError: func(err error) { t.Error(err) }}
	r.fc.AddListener(k)
	a := repartArgs{Records: 30000, Keys: 997, Reduces: 4, Parts: 5, Before: before}
	want := map[int]int64{}
	for n := range a.Records {
		want[n%a.Keys] += int64(n)
	}
	for _, at := range killPoints {
		k.arm(at)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		kvs, err := repartitionAfterShuffle.Run(ctx, r.fc, a)
		cancel()
		if err != nil {
			t.Fatalf("executor %q killed after task %d: %v", k.victim(), at, err)
		}
		if k.victim() == "" {
			t.Fatalf("no executor was killed after task %d", at)
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
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			return fmt.Sprintf("key %d: %d, want %d (%d keys, want %d)", k, got[k], want[k], len(got), len(want))
		}
	}
	return fmt.Sprintf("%d keys, want %d", len(got), len(want))
}

// checkpointOut is what checkpointAfterShuffle reports: the sums by key
// after the checkpoint, and how often the checkpointed dataset's lineage
// ran before and after it was written.
type checkpointOut struct {
	Sums                      []dataset.KV[int, int64]
	LineageRuns, LineageAfter int64
	Checkpointed              bool
}

// checkpointAfterShuffle checkpoints a sum by key (a shuffle's output),
// writes it with a first action, then sums it again by key mod 7 (a
// shuffle over the checkpoint) while the test kills an executor.
var checkpointAfterShuffle = dataset.JobResult("fine_test.checkpoint-after-shuffle", func(b *dataset.Builder, dir string) (checkpointOut, error) {
	var o checkpointOut
	b.SetCheckpointDir(dir)
	runs := dataset.Counter(b, "lineage runs")
	kvs := make([]dataset.KV[int, int64], 30000)
	for n := range kvs {
		kvs[n] = dataset.KV[int, int64]{Key: n % 997, Value: int64(n)}
	}
	in := dataset.Map(dataset.Parallelize(b, kvs, 6), func(kv dataset.KV[int, int64]) dataset.KV[int, int64] { runs.Add(1); return kv })
	add := func(x, y int64) int64 { return x + y }
	sums := dataset.Checkpoint(dataset.ReduceByKey(in, add, 4))
	if _, err := dataset.Count(sums); err != nil {
		return o, err
	}
	o.LineageRuns, o.Checkpointed = runs.Value(), sums.IsCheckpointed()
	again := dataset.ReduceByKey(dataset.Map(sums, func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
		return dataset.KV[int, int64]{Key: kv.Key % 7, Value: kv.Value}
	}), add, 3)
	var err error
	o.Sums, err = dataset.Collect(again)
	o.LineageAfter = runs.Value() - o.LineageRuns
	return o, err
})

// After Checkpoint is written, a job over the checkpointed dataset whose
// executor is killed recomputes what it lost from the checkpoint's
// files, never from the lineage (whose map stage is no longer part of
// any job): the sums are exact and the lineage's closure ran no more
// after the checkpoint, wherever the executor died.
func TestCheckpointIsReadAfterExecutorLoss(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	startAgent(t, c, agent.Config{WorkDir: t.TempDir(), Hostname: "ckpt-host-b",
		Resources: "cpus:4;mem:1024;disk:1024;ports:[31000-31100]", ShutdownGrace: time.Second, KillGrace: time.Second})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=8", "flint.excludeOnFailure.enabled=false",
		"flint.mesos.executor.maxFailuresPerAgent=1000")
	k := &killer{procs: func() []proc { return executors(r.mark) }, onError: func(err error) { t.Error(err) }}
	r.fc.AddListener(k)
	want := map[int]int64{}
	for n := range 30000 {
		want[(n%997)%7] += int64(n)
	}
	// tasks: 6 maps + 4 sums (Count), 4 checkpoint writes, then 4 maps
	// over the checkpoint + 3 sums: kill during the last job
	for _, at := range []int{15, 17, 19} {
		k.arm(at)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		o, err := checkpointAfterShuffle.Run(ctx, r.fc, t.TempDir())
		cancel()
		if err != nil {
			t.Fatalf("executor %q killed after task %d: %v", k.victim(), at, err)
		}
		if k.victim() == "" {
			t.Fatalf("no executor was killed after task %d", at)
		}
		if !o.Checkpointed || o.LineageRuns == 0 || o.LineageAfter != 0 {
			t.Fatalf("killed after task %d: checkpointed %v, lineage ran %d records before and %d after the checkpoint; want true, >0 and 0",
				at, o.Checkpointed, o.LineageRuns, o.LineageAfter)
		}
		got := map[int]int64{}
		for _, kv := range o.Sums {
			got[kv.Key] = kv.Value
		}
		if !maps.Equal(got, want) {
			t.Fatalf("executor %q killed after task %d: wrong sums, e.g. %s", k.victim(), at, firstDiff(got, want))
		}
	}
}
