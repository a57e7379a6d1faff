package sparkcases_test

import (
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// partsOut is the partition counts and groupings the partitioning cases
// check.
type partsOut struct {
	ReduceByKey, GroupByKey, CoGroup, Join, Distinct, DistinctOf int
	Coalesced2, Coalesced3                                       [][]int
}

// glom is each partition's records (Spark's glom), in partition order.
func glom(ds dataset.Dataset[int]) ([][]int, error) {
	tagged := dataset.MapPartitions(ds, func(p int, records func(func(int) bool), yield func(dataset.KV[int, int])) error {
		records(func(x int) bool { yield(dataset.KV[int, int]{Key: p, Value: x}); return true })
		return nil
	}, dataset.OrderInsensitive)
	kvs, err := dataset.Collect(tagged)
	out := make([][]int, ds.Partitions())
	for _, kv := range kvs {
		out[kv.Key] = append(out[kv.Key], kv.Value)
	}
	return out, err
}

var partsJob = dataset.JobResult("sparkcases.partitions", func(b *dataset.Builder, _ struct{}) (partsOut, error) {
	var o partsOut
	kv := func(n, parts int) dataset.Dataset[dataset.KV[int, int]] {
		xs := make([]dataset.KV[int, int], n)
		for i := range xs {
			xs[i] = dataset.KV[int, int]{Key: i % 100, Value: i}
		}
		return dataset.Parallelize(b, xs, parts)
	}
	add := func(x, y int) int { return x + y }
	big, small := kv(2000, 2000), kv(100, 10)
	o.ReduceByKey = dataset.ReduceByKey(big, add, 0).Partitions()
	o.GroupByKey = dataset.GroupByKey(kv(100, 37), 0).Partitions()
	o.CoGroup = dataset.CoGroup(kv(1000, 1000), small, 0).Partitions()
	o.Join = dataset.Join(small, kv(100, 150), 0).Partitions()
	ints := make([]int, 10)
	for i := range ints {
		ints[i] = i + 1
	}
	o.Distinct = dataset.Distinct(dataset.Parallelize(b, ints, 7), 0).Partitions()
	distinct, err := dataset.Count(dataset.Distinct(dataset.Parallelize(b, append(ints, ints...), 7), 0))
	o.DistinctOf = int(distinct)
	if err != nil {
		return o, err
	}
	data := dataset.Parallelize(b, ints, 10)
	if o.Coalesced2, err = glom(dataset.Coalesce(data, 2)); err != nil {
		return o, err
	}
	o.Coalesced3, err = glom(dataset.Coalesce(data, 3))
	return o, err
})

// Wide operations not told a partition count take Spark's
// defaultPartitioner count when flint.default.parallelism is unset: the
// largest input's (PartitioningSuite "defaultPartitioner" without
// partitioners: a 2000-partition input reduced by key keeps 2000, a
// cogroup of 1000 and 10 partitions has 1000); Distinct keeps its
// input's count (RDDSuite "basic operations": distinct() ==
// distinct(partitions)). Coalesce groups consecutive parents as Spark's
// coalescer without locality (RDDSuite "coalesced RDDs": 10 to 2 is
// [1..5] [6..10], 10 to 3 is [1 2 3] [4 5 6] [7 8 9 10]).
func TestPartitioningDefaultCountsAndCoalesceGroups(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if fc.Config().IsSet("flint.default.parallelism") {
			t.Fatal("the harness set flint.default.parallelism; this case is about its default")
		}
		o, err := partsJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what      string
			got, want int
		}{
			{"reduceByKey of 2000 partitions", o.ReduceByKey, 2000},
			{"groupByKey of 37 partitions", o.GroupByKey, 37},
			{"cogroup of 1000 and 10 partitions", o.CoGroup, 1000},
			{"join of 10 and 150 partitions", o.Join, 150},
			{"distinct of 7 partitions", o.Distinct, 7},
			{"distinct count of 1..10 twice", o.DistinctOf, 10},
		} {
			if c.got != c.want {
				t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
			}
		}
		eq := func(a, b [][]int) bool { return slices.EqualFunc(a, b, slices.Equal) }
		if want := [][]int{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}; !eq(o.Coalesced2, want) {
			t.Errorf("coalesce(2) of 1..10 in 10 = %v, want %v", o.Coalesced2, want)
		}
		if want := [][]int{{1, 2, 3}, {4, 5, 6}, {7, 8, 9, 10}}; !eq(o.Coalesced3, want) {
			t.Errorf("coalesce(3) of 1..10 in 10 = %v, want %v", o.Coalesced3, want)
		}
	})
}
