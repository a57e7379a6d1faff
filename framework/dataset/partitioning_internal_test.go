package dataset

import (
	"testing"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// graphBuilder is a driver builder without a Context: enough to build
// graphs and look at them.
func graphBuilder() *Builder { return newDriverBuilder("test.graph", nil, nil, nil) }

func shuffleDeps(n node) int {
	c := 0
	for _, d := range n.info().deps {
		if d.Kind == dagscheduler.Shuffle {
			c++
		}
	}
	return c
}

// Spark's co-partitioned join: inputs already partitioned by the join's
// partitioner are read where they are; only the other side is shuffled.
func TestCoPartitionedJoinAddsNoShuffle(t *testing.T) {
	b := graphBuilder()
	a := PartitionBy(Parallelize(b, []KV[int, int]{{Key: 1, Value: 1}}, 2), HashPartitioner(4))
	c := ReduceByKey(Parallelize(b, []KV[int, string]{{Key: 1, Value: "x"}}, 3), func(x, y string) string { return x + y }, 4)
	before := len(b.shuffles)
	g := CoGroup(a, c, 4)
	if got := len(b.shuffles) - before; got != 0 || shuffleDeps(g.n) != 0 {
		t.Fatalf("cogroup of two inputs partitioned by hash(4) added %d shuffles (%d shuffle deps), want 0", got, shuffleDeps(g.n))
	}
	if g.Partitioner() == nil || g.Partitioner().Name() != "hash(4)" {
		t.Fatalf("cogroup partitioner %v, want hash(4)", g.Partitioner())
	}
	// parts ≤ 0 takes an input's partitioner, as Spark's defaultPartitioner
	j := Join(a, Parallelize(b, []KV[int, bool]{{Key: 1, Value: true}}, 7), 0)
	if got := shuffleDeps(j.n.parents[0]); got != 1 || j.Partitions() != 4 {
		t.Fatalf("join with an unpartitioned input: %d shuffle deps, %d partitions; want 1 (that input) and 4", got, j.Partitions())
	}
	// another partition count is a shuffle of both
	if got := shuffleDeps(CoGroup(a, c, 5).n); got != 2 {
		t.Fatalf("cogroup into 5 partitions: %d shuffle deps, want 2", got)
	}
}

// Spark's "reduceByKey with partitioner": one shuffle only.
func TestReduceByKeyOnItsPartitionerAddsNoShuffle(t *testing.T) {
	b := graphBuilder()
	a := PartitionBy(Parallelize(b, []KV[int, int]{{Key: 1, Value: 1}}, 2), HashPartitioner(2))
	sums := ReduceByKeyWith(Filter(a, func(KV[int, int]) bool { return true }), func(x, y int) int { return x + y }, HashPartitioner(2))
	if len(b.shuffles) != 1 {
		t.Fatalf("%d shuffles, want 1 (partitionBy's)", len(b.shuffles))
	}
	if sums.Partitioner() == nil || sums.Partitioner().Name() != "hash(2)" {
		t.Fatalf("partitioner %v, want hash(2)", sums.Partitioner())
	}
	if Map(sums, func(kv KV[int, int]) KV[int, int] { return kv }).Partitioner() != nil {
		t.Fatal("Map kept the partitioner; it may change keys")
	}
	if MapValues(sums, func(v int) int { return v }).Partitioner() == nil {
		t.Fatal("MapValues dropped the partitioner")
	}
}
