package sparkcases_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// Ported from Spark's SortingSuite and PartitioningSuite: sortByKey's
// results, its partition counts and the balance of its range partitions.

// sortingArgs is the sorting cases' input, made by the test so that the
// driver and the executors see the same records.
type sortingArgs struct {
	Pairs, Ten []kv // 1000 and 10 pairs with distinct random keys
}

// sortingOut is every case's partitions, in order.
type sortingOut struct {
	Asc, One, Many, Desc, DescOne, DescMany, MoreParts, Empty, Balance, BalanceDesc [][]kv
	Unbalanced, Skewed, SkewedLess                                                  []int
}

// unbalancedDoubles is PartitioningSuite's "RangePartitioner should work
// well on unbalanced data" input: partition i holds i·i random keys in
// [0, 1) (seeded by i).
func unbalancedDoubles(b *dataset.Builder) dataset.Dataset[dataset.KV[float64, int]] {
	return dataset.FlatMap(dataset.Parallelize(b, ints(0, 20), 20), func(i int, yield func(dataset.KV[float64, int])) {
		r := rand.New(rand.NewPCG(uint64(i), 0))
		for range i * i {
			yield(dataset.KV[float64, int]{Key: r.Float64(), Value: i})
		}
	})
}

// skewedRanges is skewed both in size and in keys: partition i holds i·i
// keys, all in [1000·i, 1000·i + i·i). Sampling every partition alike
// without weighting by its size puts as many bounds in partition 6's 36
// keys as in partition 19's 361.
func skewedRanges(b *dataset.Builder) dataset.Dataset[kv] {
	return dataset.FlatMap(dataset.Parallelize(b, ints(0, 20), 20), func(i int, yield func(kv)) {
		for j := range i * i {
			yield(kv{Key: 1000*i + j, Value: i})
		}
	})
}

// sizes is the number of records in each partition.
func sizes[T any](parts [][]T) []int {
	out := make([]int, len(parts))
	for i, p := range parts {
		out[i] = len(p)
	}
	return out
}

var sortingJob = dataset.JobResult("sparkcases.sorting", func(b *dataset.Builder, a sortingArgs) (sortingOut, error) {
	var o sortingOut
	pairs, pairs1 := dataset.Parallelize(b, a.Pairs, 2), dataset.Parallelize(b, a.Pairs, 1)
	seq := make([]kv, 1000)
	for i := range seq {
		seq[i] = kv{Key: i + 1, Value: i + 1}
	}
	seq4 := dataset.Parallelize(b, seq, 4)
	glom := func(dst *[][]kv, ds dataset.Dataset[kv]) func() error {
		return func() (err error) { *dst, err = dataset.Collect(dataset.Glom(ds)); return }
	}
	steps := []func() error{
		glom(&o.Asc, dataset.SortByKey(pairs, true, 0)),
		glom(&o.One, dataset.SortByKey(pairs, true, 1)),
		glom(&o.Many, dataset.SortByKey(pairs, true, 20)),
		glom(&o.Desc, dataset.SortByKey(pairs, false, 0)),
		glom(&o.DescOne, dataset.SortByKey(pairs1, false, 1)),
		glom(&o.DescMany, dataset.SortByKey(pairs, false, 20)),
		glom(&o.MoreParts, dataset.SortByKey(dataset.Parallelize(b, a.Ten, 30), true, 0)),
		glom(&o.Empty, dataset.SortByKey(dataset.Parallelize(b, []kv{}, 2), true, 0)),
		glom(&o.Balance, dataset.SortByKey(seq4, true, 0)),
		glom(&o.BalanceDesc, dataset.SortByKey(seq4, false, 0)),
		func() error {
			parts, err := dataset.Collect(dataset.Glom(dataset.SortByKey(unbalancedDoubles(b), true, 10)))
			o.Unbalanced = sizes(parts)
			return err
		},
		func() error {
			parts, err := dataset.Collect(dataset.Glom(dataset.SortByKey(skewedRanges(b), true, 10)))
			o.Skewed = sizes(parts)
			return err
		},
		func() error {
			key := func(x kv) int { return x.Key }
			parts, err := dataset.Collect(dataset.Glom(dataset.SortByLess(skewedRanges(b), key, func(a, b int) bool { return a < b }, true, 10)))
			o.SkewedLess = sizes(parts)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return o, err
		}
	}
	return o, nil
})

// randomPairs is n pairs with distinct random keys (Spark's
// (rand.nextInt(), rand.nextInt()), made distinct so that a sort by key
// has one answer).
func randomPairs(r *rand.Rand, n int) []kv {
	seen := map[int]bool{}
	var out []kv
	for len(out) < n {
		k := int(r.Int32()) - 1<<30
		if !seen[k] {
			seen[k] = true
			out = append(out, kv{Key: k, Value: int(r.Int32())})
		}
	}
	return out
}

// SortingSuite: sortByKey, large array (2 partitions kept, with one split,
// with many partitions), sort descending (with one split, with many
// partitions), more partitions than elements, empty RDD, partition
// balancing ascending and descending (4 partitions of 1..1000, each over
// 180 records, in order); PartitioningSuite: RangePartitioner should work
// well on unbalanced data (max < 3 × min). And a skew in both sizes and
// key ranges, where only weighting the sample by partition size balances
// the output (max < 3 × min over all 10 partitions).
func TestSortByKeyResultsAndBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 4))
	args := sortingArgs{Pairs: randomPairs(r, 1000), Ten: randomPairs(r, 10)}
	byKey := func(a, b kv) int { return cmp.Compare(a.Key, b.Key) }
	asc := slices.SortedFunc(slices.Values(args.Pairs), byKey)
	desc := slices.Clone(asc)
	slices.Reverse(desc)
	ten := slices.SortedFunc(slices.Values(args.Ten), byKey)
	seq := make([]kv, 1000)
	for i := range seq {
		seq[i] = kv{Key: i + 1, Value: i + 1}
	}
	seqDesc := slices.Clone(seq)
	slices.Reverse(seqDesc)
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		o, err := sortingJob.Run(t.Context(), fc, args)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what  string
			parts [][]kv
			n     int // partitions; 0: any
			want  []kv
		}{
			{"large array", o.Asc, 2, asc}, {"large array with one split", o.One, 1, asc},
			{"large array with many partitions", o.Many, 20, asc}, {"sort descending", o.Desc, 2, desc},
			{"sort descending with one split", o.DescOne, 1, desc}, {"sort descending with many partitions", o.DescMany, 20, desc},
			{"more partitions than elements", o.MoreParts, 0, ten}, {"empty RDD", o.Empty, 0, nil},
			{"partition balancing", o.Balance, 4, seq}, {"partition balancing for descending sort", o.BalanceDesc, 4, seqDesc},
		} {
			if got := slices.Concat(c.parts...); !slices.Equal(got, c.want) {
				t.Errorf("%s: %d records not in order (first %v)", c.what, len(got), got[:min(3, len(got))])
			}
			if c.n != 0 && len(c.parts) != c.n {
				t.Errorf("%s: %d partitions, want %d", c.what, len(c.parts), c.n)
			}
		}
		for _, c := range []struct {
			what  string
			parts [][]kv
		}{{"partition balancing", o.Balance}, {"partition balancing for descending sort", o.BalanceDesc}} {
			for i, p := range c.parts {
				if len(p) <= 180 {
					t.Errorf("%s: partition %d has %d records, want > 180 (sizes %v)", c.what, i, len(p), sizes(c.parts))
				}
			}
		}
		wantBalanced(t, "unbalanced data", o.Unbalanced, 2470, false)
		wantBalanced(t, "skewed sizes and ranges", o.Skewed, 2470, true)
		wantBalanced(t, "skewed sizes and ranges, SortByLess", o.SkewedLess, 2470, true)
	})
}

// wantBalanced checks that the partition sizes add up to total and that
// the largest is under 3 × the smallest (over every partition when all,
// else over the non-empty ones, as Spark's countByValue sees them).
func wantBalanced(t *testing.T, what string, sizes []int, total int, all bool) {
	t.Helper()
	sum, lo, hi := 0, total, 0
	for _, n := range sizes {
		sum += n
		if n > 0 || all {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	if sum != total || hi >= 3*lo {
		t.Errorf("%s: partition sizes %v (sum %d, want %d): max %d, want < 3 × min %d", what, sizes, sum, total, hi, lo)
	}
	if len(sizes) != 10 {
		t.Errorf("%s: %d partitions, want 10", what, len(sizes))
	}
}
