package dataset

import (
	"testing"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// Which nodes the DAG core is told are indeterminate: those choosing
// records by position over input whose order is not fixed, those declared
// nondeterministic, and everything computed from them.
func TestIndeterminateNodes(t *testing.T) {
	type kv = KV[int, int]
	src := func(b *Builder) Dataset[kv] { return Parallelize(b, []kv{{Key: 1, Value: 1}}, 2) }
	add := func(x, y int) int { return x + y }
	keep := func(_ int, records func(func(kv) bool), yield func(kv)) error {
		records(func(x kv) bool { yield(x); return true })
		return nil
	}
	cases := []struct {
		name  string
		build func(b *Builder) node
		want  order
	}{
		{"source", func(b *Builder) node { return src(b).n }, determinate},
		{"repartition of a source", func(b *Builder) node { return Repartition(src(b), 3).n }, unordered},
		{"partitionBy", func(b *Builder) node { return PartitionBy(src(b), HashPartitioner(2)).n }, unordered},
		{"reduceByKey of partitionBy", func(b *Builder) node {
			return ReduceByKey(PartitionBy(src(b), HashPartitioner(2)), add, 2).n
		}, determinate},
		{"repartition of partitionBy", func(b *Builder) node { return Repartition(PartitionBy(src(b), HashPartitioner(2)), 3).n }, indeterminate},
		{"repartition of reduceByKey", func(b *Builder) node { return Repartition(ReduceByKey(src(b), add, 2), 3).n }, unordered},
		{"repartition of groupByKey", func(b *Builder) node { return Repartition(GroupByKey(src(b), 2), 3).n }, indeterminate},
		{"sample of a source", func(b *Builder) node { return Sample(src(b), 0.5, 1).n }, determinate},
		{"sample of partitionBy", func(b *Builder) node { return Sample(PartitionBy(src(b), HashPartitioner(2)), 0.5, 1).n }, indeterminate},
		{"mapPartitions of partitionBy", func(b *Builder) node { return MapPartitions(PartitionBy(src(b), HashPartitioner(2)), keep).n }, indeterminate},
		{"order-insensitive mapPartitions of partitionBy", func(b *Builder) node {
			return MapPartitions(PartitionBy(src(b), HashPartitioner(2)), keep, OrderInsensitive).n
		}, unordered},
		{"nondeterministic mapPartitions of a source", func(b *Builder) node { return MapPartitions(src(b), keep, Nondeterministic).n }, indeterminate},
		{"map of an indeterminate node", func(b *Builder) node {
			return Map(MapPartitions(src(b), keep, Nondeterministic), func(x kv) kv { return x }).n
		}, indeterminate},
		{"reduceByKey of an indeterminate node", func(b *Builder) node {
			return ReduceByKey(Sample(PartitionBy(src(b), HashPartitioner(2)), 0.5, 1), add, 2).n
		}, indeterminate},
		{"union with an indeterminate node", func(b *Builder) node {
			return Union(src(b), MapPartitions(src(b), keep, Nondeterministic)).n
		}, indeterminate},
	}
	for _, c := range cases {
		b := newDriverBuilder("test.order", nil, nil, nil)
		n := c.build(b)
		if got := n.info().order; got != c.want {
			t.Errorf("%s: order %d, want %d", c.name, got, c.want)
		}
		spec := b.jobSpec(n, nil, "")
		var final dagscheduler.Node
		for _, sn := range spec.Nodes {
			if sn.ID == n.info().id {
				final = sn
			}
		}
		if final.Indeterminate != (c.want == indeterminate) {
			t.Errorf("%s: the DAG core's node has Indeterminate=%v", c.name, final.Indeterminate)
		}
	}
}

// MapPartitions takes one Determinism at most.
func TestMapPartitionsTwoDeterminismsPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	b := newDriverBuilder("test.order", nil, nil, nil)
	MapPartitions(Parallelize(b, []int{1}, 1), func(int, func(func(int) bool), func(int)) error { return nil }, OrderInsensitive, Nondeterministic)
}
