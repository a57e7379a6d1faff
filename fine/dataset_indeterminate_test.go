package fine_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/indeterminatecheck"
)

// fineKiller is an indeterminatecheck.Killer of the fine executors of the
// run marked mark.
func fineKiller(t *testing.T, mark string) *indeterminatecheck.Killer {
	return &indeterminatecheck.Killer{Procs: func() []indeterminatecheck.Proc {
		var out []indeterminatecheck.Proc
		for _, p := range executors(mark) {
			out = append(out, indeterminatecheck.Proc{ExecutorID: p.executorID, PID: p.pid})
		}
		return out
	}, OnError: func(err error) { t.Error(err) }}
}

// Fine mode's run of internal/testkit/indeterminatecheck's SPARK-23207 scenario
// (coarse runs it too): Repartition after a shuffle on two hosts, the
// fine executor that ran the 1st, 3rd, … task of the job killed, every
// run's sums exact. Repartition's map stage reads an unordered shuffle
// (partitionBy), so it is indeterminate and rerun whole with every stage
// reading it; after reduceByKey it is determinate and a lost output is
// recomputed alone.
func TestRepartitionAfterShuffleSurvivesExecutorLoss(t *testing.T) {
	var odd []int
	for at := 1; at <= indeterminatecheck.Tasks; at += 2 {
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
	k := fineKiller(t, r.mark)
	r.fc.AddListener(k)
	a := indeterminatecheck.Args{Records: 30000, Keys: 997, Reduces: 4, Parts: 5, Before: before}
	indeterminatecheck.Kills(t, r.fc, k, a, killPoints, indeterminatecheck.Options{})
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
	k := fineKiller(t, r.mark)
	r.fc.AddListener(k)
	want := map[int]int64{}
	for n := range 30000 {
		want[(n%997)%7] += int64(n)
	}
	// tasks: 6 maps + 4 sums (Count), 4 checkpoint writes, then 4 maps
	// over the checkpoint + 3 sums: kill during the last job
	for _, at := range []int{15, 17, 19} {
		k.Arm(at)
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		o, err := checkpointAfterShuffle.Run(ctx, r.fc, t.TempDir())
		cancel()
		if err != nil {
			t.Fatalf("executor %q killed after task %d: %v", k.Victim(), at, err)
		}
		if k.Victim() == "" {
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
			t.Fatalf("executor %q killed after task %d: wrong sums, e.g. %s", k.Victim(), at, indeterminatecheck.FirstDiff(got, want))
		}
	}
}
