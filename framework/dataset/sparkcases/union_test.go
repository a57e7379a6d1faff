package sparkcases_test

import (
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// unionOut is the partitions of the unions RDDSuite and
// PairRDDFunctionsSuite look at, and their partitioners' names ("" for
// none).
type unionOut struct {
	Nums1, Nums2, Union, One, WithEmpty, Mixed [][]kv
	UnionPart, OnePart, WithEmptyPart          string
	MixedPart                                  string
}

// partName is ds's partitioner's name, "" when it has none.
func partName[T any](ds dataset.Dataset[T]) string {
	if p := ds.Partitioner(); p != nil {
		return p.Name()
	}
	return ""
}

var unionJob = dataset.JobResult("sparkcases.union", func(b *dataset.Builder, _ struct{}) (unionOut, error) {
	var o unionOut
	withPartitioner := func(lo, hi int) dataset.Dataset[kv] {
		var xs []kv
		for x := lo; x <= hi; x++ {
			xs = append(xs, kv{Key: x})
		}
		return dataset.PartitionBy(dataset.Parallelize(b, xs, 1), dataset.HashPartitioner(2))
	}
	nums1, nums2 := withPartitioner(1, 4), withPartitioner(5, 8)
	union, one := dataset.Union(nums1, nums2), dataset.Union(nums1)
	withEmpty := dataset.Union(dataset.EmptyDataset[kv](b), nums1)
	mixed := dataset.Union(nums1, dataset.Parallelize(b, []kv{{Key: 9}}, 1))
	o.UnionPart, o.OnePart, o.WithEmptyPart, o.MixedPart = partName(union), partName(one), partName(withEmpty), partName(mixed)
	for _, c := range []struct {
		dst *[][]kv
		ds  dataset.Dataset[kv]
	}{{&o.Nums1, nums1}, {&o.Nums2, nums2}, {&o.Union, union}, {&o.One, one}, {&o.WithEmpty, withEmpty}, {&o.Mixed, mixed}} {
		var err error
		if *c.dst, err = dataset.Collect(dataset.Glom(c.ds)); err != nil {
			return o, err
		}
	}
	return o, nil
})

// RDDSuite "partitioner aware union": the union of two datasets
// partitioned by HashPartitioner(2) has 2 partitions, partition p is
// partition p of the first then of the second, and it keeps the
// partitioner. PairRDDFunctionsSuite: SparkContext.union creates a
// partitioner-aware union if all inputs have partitioners, and a plain
// one when one has none; SPARK-23778: an empty input does not stop it.
func TestPartitionerAwareUnion(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		o, err := unionJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		eq := func(a, b [][]kv) bool { return slices.EqualFunc(a, b, slices.Equal) }
		if len(o.Nums1) != 2 || len(o.Nums2) != 2 {
			t.Fatalf("inputs have %d and %d partitions, want 2 and 2", len(o.Nums1), len(o.Nums2))
		}
		want := [][]kv{slices.Concat(o.Nums1[0], o.Nums2[0]), slices.Concat(o.Nums1[1], o.Nums2[1])}
		if !eq(o.Union, want) {
			t.Errorf("union partitions %v, want %v", o.Union, want)
		}
		var keys []int
		for _, x := range slices.Concat(o.Union...) {
			keys = append(keys, x.Key)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Errorf("union keys %v, want 1..8", keys)
		}
		hash2 := dataset.HashPartitioner(2).Name()
		if !eq(o.One, o.Nums1) || !eq(o.WithEmpty, o.Nums1) {
			t.Errorf("union of nums1 alone = %v, with an empty dataset = %v; want nums1's %v", o.One, o.WithEmpty, o.Nums1)
		}
		if o.UnionPart != hash2 || o.OnePart != hash2 || o.WithEmptyPart != hash2 {
			t.Errorf("partitioners %q, %q, %q; want %q", o.UnionPart, o.OnePart, o.WithEmptyPart, hash2)
		}
		wantMixed := append(slices.Clone(o.Nums1), []kv{{Key: 9}})
		if !eq(o.Mixed, wantMixed) || o.MixedPart != "" {
			t.Errorf("union with an unpartitioned input = %v on %q, want %v and no partitioner", o.Mixed, o.MixedPart, wantMixed)
		}
	})
}
