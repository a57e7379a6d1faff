package sparkcases_test

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// Ported from Spark's RDDSuite (core/src/test/scala/org/apache/spark/rdd):
// the inputs and the asserted outputs are Spark's.

func ints(lo, hi int) []int { // [lo, hi)
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

var basicOpsJob = dataset.JobResult("test.ops.basic", func(b *dataset.Builder, _ int) ([]string, error) {
	nums := dataset.Parallelize(b, []int{1, 2, 3, 4}, 2)
	glom, err := dataset.Collect(dataset.Glom(nums))
	if err != nil {
		return nil, err
	}
	sums, err := dataset.Collect(dataset.MapPartitionsWithIndex(nums, func(i int, records iter.Seq[int], yield func([2]int)) error {
		s := 0
		for x := range records {
			s += x
		}
		yield([2]int{i, s})
		return nil
	}))
	if err != nil {
		return nil, err
	}
	var it []int
	for x, err := range dataset.ToLocalIterator(nums) {
		if err != nil {
			return nil, err
		}
		it = append(it, x)
	}
	return []string{fmt.Sprint(glom), fmt.Sprint(sums), fmt.Sprint(it)}, nil
})

// Spark: basic operations (glom, mapPartitionsWithIndex, toLocalIterator).
func TestGlomMapPartitionsWithIndexToLocalIterator(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, basicOpsJob)
		want := []string{"[[1 2] [3 4]]", "[[0 3] [1 7]]", "[1 2 3 4]"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

var emptyJob = dataset.JobResult("test.ops.empty", func(b *dataset.Builder, _ int) ([]int, error) {
	empty := dataset.EmptyDataset[int](b)
	n, err := dataset.Count(empty)
	if err != nil {
		return nil, err
	}
	xs, err := dataset.Collect(empty)
	if err != nil {
		return nil, err
	}
	_, ok, err := dataset.Reduce(empty, func(a, b int) int { return a + b })
	if err != nil || ok {
		return nil, fmt.Errorf("reduce of empty: ok=%v err=%v", ok, err)
	}
	emptyKV := dataset.EmptyDataset[kv](b)
	rdd := dataset.Map(dataset.Parallelize(b, []int{1, 2}, 2), func(x int) kv { return kv{Key: x, Value: x} })
	sizes := []int{int(n), len(xs)}
	for _, c := range []func() (int64, error){
		func() (int64, error) { return dataset.Count(dataset.Join(rdd, emptyKV, 0)) },
		func() (int64, error) { return dataset.Count(dataset.RightOuterJoin(rdd, emptyKV, 0)) },
		func() (int64, error) { return dataset.Count(dataset.LeftOuterJoin(rdd, emptyKV, 0)) },
		func() (int64, error) { return dataset.Count(dataset.FullOuterJoin(rdd, emptyKV, 0)) },
		func() (int64, error) { return dataset.Count(dataset.CoGroup(rdd, emptyKV, 0)) },
		func() (int64, error) { return dataset.Count(dataset.Union(rdd, emptyKV)) },
		func() (int64, error) { return dataset.Count(dataset.Cartesian(emptyKV, rdd)) },
	} {
		c, err := c()
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, int(c))
	}
	return sizes, nil
})

// Spark: empty RDD; cartesian on empty RDD.
func TestEmptyDataset(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if got, want := runJob(t, fc, emptyJob), []int{0, 0, 0, 0, 2, 2, 2, 2, 0}; !slices.Equal(got, want) {
			t.Fatalf("sizes %v, want %v", got, want)
		}
	})
}

var zipJob = dataset.JobResult("test.ops.zip", func(b *dataset.Builder, _ int) ([]string, error) {
	nums := dataset.Parallelize(b, []int{1, 2, 3, 4}, 2)
	zipped, err := dataset.Collect(dataset.Glom(dataset.Zip(nums, dataset.Map(nums, func(x int) float64 { return float64(x) + 1 }))))
	if err != nil {
		return nil, err
	}
	idx, err := dataset.Collect(dataset.ZipWithIndex(dataset.Parallelize(b, ints(0, 10), 3)))
	if err != nil {
		return nil, err
	}
	one, err := dataset.Collect(dataset.ZipWithIndex(dataset.Parallelize(b, ints(0, 10), 1)))
	if err != nil {
		return nil, err
	}
	chained, err := dataset.Count(dataset.Repartition(dataset.ZipWithIndex(dataset.Parallelize(b, ints(0, 10), 2)), 4))
	if err != nil {
		return nil, err
	}
	ids, err := dataset.Collect(dataset.Distinct(dataset.Values(dataset.Map(dataset.ZipWithUniqueID(dataset.Parallelize(b, ints(0, 10), 3)),
		func(p dataset.Pair[int, int64]) dataset.KV[int, int64] {
			return dataset.KV[int, int64]{Key: p.Left, Value: p.Right}
		})), 0))
	return []string{fmt.Sprint(zipped), fmt.Sprint(idx), fmt.Sprint(one), fmt.Sprint(chained), fmt.Sprint(len(ids))}, err
})

var zipUnequalPartitions = dataset.JobResult("test.ops.zip-unequal-partitions", func(b *dataset.Builder, _ int) ([]dataset.Pair[int, int], error) {
	return dataset.Collect(dataset.Zip(dataset.Parallelize(b, []int{1, 2, 3, 4}, 2), dataset.Parallelize(b, ints(1, 5), 1)))
})

var zipUnequalRecords = dataset.JobResult("test.ops.zip-unequal-records", func(b *dataset.Builder, _ int) ([]dataset.Pair[int, int], error) {
	return dataset.Collect(dataset.Zip(dataset.Parallelize(b, []int{1, 2, 3, 4}, 2), dataset.Parallelize(b, ints(1, 6), 2)))
})

// Spark: zipped RDDs, zipWithIndex (with a single partition, chained with
// other RDDs), zipWithUniqueId.
func TestZip(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, zipJob)
		pairs := func(ps ...[2]any) string {
			var s []string
			for _, p := range ps {
				s = append(s, fmt.Sprintf("{%v %v}", p[0], p[1]))
			}
			return "[" + strings.Join(s, " ") + "]"
		}
		var idx []string
		for i := range 10 {
			idx = append(idx, fmt.Sprintf("{%d %d}", i, i))
		}
		want := []string{
			"[" + pairs([2]any{1, 2}, [2]any{2, 3}) + " " + pairs([2]any{3, 4}, [2]any{4, 5}) + "]",
			"[" + strings.Join(idx, " ") + "]", "[" + strings.Join(idx, " ") + "]", "10", "10",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		if _, err := zipUnequalPartitions.Run(t.Context(), fc, 0); err == nil || !strings.Contains(err.Error(), "unequal numbers of partitions: 2 and 1") {
			t.Fatalf("zip of 2 and 1 partitions: %v, want the partition counts named", err)
		}
		if _, err := zipUnequalRecords.Run(t.Context(), fc, 0); err == nil || !strings.Contains(err.Error(), "same number of records in each partition") {
			t.Fatalf("zip of 4 and 5 records: %v, want a per-partition record count error", err)
		}
	})
}

var setOpsJob = dataset.JobResult("test.ops.set", func(b *dataset.Builder, _ int) ([]string, error) {
	a, bb, c := dataset.Parallelize(b, ints(1, 4), 0), dataset.Parallelize(b, ints(2, 5), 0), dataset.Parallelize(b, ints(1, 2), 0)
	var out []string
	for _, x := range []dataset.Dataset[dataset.Pair[int, int]]{dataset.Cartesian(a, bb), dataset.Cartesian(a, c), dataset.Cartesian(c, a)} {
		got, err := dataset.Collect(x)
		if err != nil {
			return nil, err
		}
		out = append(out, strings.Join(sortedStrings(got), ","))
	}
	all, evens := dataset.Parallelize(b, ints(1, 11), 0), dataset.Parallelize(b, []int{2, 4, 6, 8, 10}, 0)
	dupA, dupB := dataset.Parallelize(b, []int{1, 2, 3, 3}, 0), dataset.Parallelize(b, []int{1, 1, 2, 3}, 0)
	for _, x := range []dataset.Dataset[int]{dataset.Intersection(all, evens, 0), dataset.Intersection(evens, all, 0),
		dataset.Intersection(dupA, dupB, 0), dataset.Intersection(dupB, dupA, 0)} {
		got, err := dataset.Collect(x)
		if err != nil {
			return nil, err
		}
		slices.Sort(got)
		out = append(out, fmt.Sprint(got))
	}
	return out, nil
})

// Spark: cartesian on non-empty RDDs, intersection, intersection strips
// duplicates in an input.
func TestCartesianIntersection(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		want := []string{"{1 2},{1 3},{1 4},{2 2},{2 3},{2 4},{3 2},{3 3},{3 4}", "{1 1},{2 1},{3 1}", "{1 1},{1 2},{1 3}",
			"[2 4 6 8 10]", "[2 4 6 8 10]", "[1 2 3]", "[1 2 3]"}
		if got := runJob(t, fc, setOpsJob); !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

var orderedJob = dataset.JobResult("test.ops.ordered", func(b *dataset.Builder, _ int) ([]string, error) {
	// Spark shuffles 1..99999 with a random permutation; any fixed one
	// will do: i·7919 mod 99999 visits every residue.
	nums := make([]int, 99999)
	for i := range nums {
		nums[i] = i*7919%99999 + 1
	}
	less := func(a, b int) bool { return a < b }
	top, err := dataset.Top(dataset.Parallelize(b, nums, 2), 5, less)
	if err != nil {
		return nil, err
	}
	words := dataset.Parallelize(b, []string{"a", "b", "c", "d"}, 2)
	topRev, err := dataset.Top(words, 2, func(a, b string) bool { return a > b })
	if err != nil {
		return nil, err
	}
	ten := dataset.Parallelize(b, ints(1, 11), 2)
	low, err := dataset.TakeOrdered(ten, 5, less)
	if err != nil {
		return nil, err
	}
	none, err := dataset.TakeOrdered(ten, 0, less)
	if err != nil {
		return nil, err
	}
	rev, err := dataset.TakeOrdered(ten, 5, func(a, b int) bool { return a > b })
	return []string{fmt.Sprint(top), fmt.Sprint(topRev), fmt.Sprint(low), fmt.Sprint(len(none)), fmt.Sprint(rev)}, err
})

// Spark: top with predefined / custom ordering, takeOrdered with
// predefined ordering, limit 0, custom ordering.
func TestTopTakeOrdered(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		want := []string{"[99999 99998 99997 99996 99995]", "[a b]", "[1 2 3 4 5]", "0", "[10 9 8 7 6]"}
		if got := runJob(t, fc, orderedJob); !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

type arr struct{ V []int }

var treeJob = dataset.JobResult("test.ops.tree", func(b *dataset.Builder, _ int) ([]int64, error) {
	rdd := dataset.Parallelize(b, ints(-1000, 1000), 10)
	var out []int64
	for depth := 1; depth < 10; depth++ {
		sum, err := dataset.TreeAggregate(rdd, int64(0), func(c int64, x int) int64 { return c + int64(x) },
			func(a, b int64) int64 { return a + b }, depth)
		if err != nil {
			return nil, err
		}
		// ops modifying their first argument
		arrays := dataset.Map(rdd, func(x int) arr { return arr{[]int{x}} })
		op := func(c, x arr) arr { c.V[0] += x.V[0]; return c }
		a, err := dataset.TreeAggregate(arrays, arr{[]int{0}}, op, op, depth)
		if err != nil {
			return nil, err
		}
		r, ok, err := dataset.TreeReduce(rdd, func(a, b int) int { return a + b }, depth)
		if err != nil || !ok {
			return nil, fmt.Errorf("treeReduce: ok=%v err=%v", ok, err)
		}
		out = append(out, sum, int64(a.V[0]), int64(r))
	}
	return out, nil
})

// Spark: treeAggregate, treeAggregate with ops modifying first args,
// treeReduce (depths 1 to 9).
func TestTreeAggregate(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, treeJob)
		if len(got) != 27 {
			t.Fatalf("got %d results, want 27", len(got))
		}
		for i, v := range got {
			if v != -1000 {
				t.Fatalf("result %d (depth %d) = %d, want -1000", i, i/3+1, v)
			}
		}
	})
}

var statsJob = dataset.JobResult("test.ops.stats", func(b *dataset.Builder, _ int) ([]dataset.StatCounter, error) {
	var out []dataset.StatCounter
	for _, xs := range [][]float64{{1, 2, 3, 4, 5.5}, {}, {-3}} {
		s, err := dataset.Stats(dataset.Parallelize(b, xs, 3))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
})

// Stats from Spark's documented StatCounter semantics: population and
// sample variance computed here directly.
func TestStats(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, statsJob)
		xs := []float64{1, 2, 3, 4, 5.5}
		mean := 15.5 / 5
		ss := 0.0
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		s := got[0]
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
		if s.Count() != 5 || !near(s.Mean(), mean) || !near(s.Sum(), 15.5) || !near(s.Variance(), ss/5) ||
			!near(s.SampleVariance(), ss/4) || !near(s.Stdev(), math.Sqrt(ss/5)) || s.Max() != 5.5 || s.Min() != 1 {
			t.Fatalf("stats %+v: count %d mean %v var %v svar %v, want 5, %v, %v, %v", s, s.Count(), s.Mean(), s.Variance(), s.SampleVariance(), mean, ss/5, ss/4)
		}
		if e := got[1]; e.Count() != 0 || !math.IsNaN(e.Variance()) || !math.IsInf(e.Max(), -1) || !math.IsInf(e.Min(), 1) {
			t.Fatalf("empty stats %+v", e)
		}
		if one := got[2]; one.Count() != 1 || one.Mean() != -3 || one.Variance() != 0 || !math.IsNaN(one.SampleVariance()) {
			t.Fatalf("stats of one %+v", one)
		}
		_ = cmp.Compare[int]
	})
}
