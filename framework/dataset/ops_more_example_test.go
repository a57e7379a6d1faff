package dataset_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flint-mesos/flint/framework/dataset"
)

// Examples of sampling, approximate counting, sorting with a less func
// and the wide operations that take an explicit Partitioner. The
// sampling ones are seeded: the same seed over the same partitions
// draws the same records on every run and in every mode.

func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

var exampleTakeSample = dataset.JobResult("example.takesample", func(b *dataset.Builder, _ int) ([][]int, error) {
	nums := dataset.Parallelize(b, upTo(100), 4)
	without, err := dataset.TakeSample(nums, false, 5, 42)
	if err != nil {
		return nil, err
	}
	// more than the dataset holds: without replacement, all of it
	all, err := dataset.TakeSample(nums, false, 1000, 42)
	return [][]int{without, {len(all)}}, err
})

func ExampleTakeSample() {
	out := runExample(exampleTakeSample)
	fmt.Println("5 of 1..100:", out[0])
	fmt.Println("1000 of 1..100 without replacement:", out[1][0], "records")
	// Output:
	// 5 of 1..100: [29 89 71 63 10]
	// 1000 of 1..100 without replacement: 100 records
}

var exampleSampleWithReplacement = dataset.JobResult("example.samplewithreplacement", func(b *dataset.Builder, _ int) ([]int, error) {
	// each record is drawn a Poisson(0.5) number of times
	return dataset.Collect(dataset.SampleWithReplacement(dataset.Parallelize(b, upTo(10), 2), 0.5, 7))
})

func ExampleSampleWithReplacement() {
	fmt.Println(runExample(exampleSampleWithReplacement))
	// Output: [1 3 7 7 7 10 10]
}

var exampleRandomSplit = dataset.JobResult("example.randomsplit", func(b *dataset.Builder, _ int) ([][]int, error) {
	// weights 1:3 (normalised): about a quarter of the records in the
	// first split, the rest in the second; every record in exactly one
	splits := dataset.RandomSplit(dataset.Parallelize(b, upTo(12), 2), []float64{1, 3}, 3)
	var out [][]int
	for _, s := range splits {
		xs, err := dataset.Collect(s)
		if err != nil {
			return nil, err
		}
		out = append(out, xs)
	}
	return out, nil
})

func ExampleRandomSplit() {
	for i, s := range runExample(exampleRandomSplit) {
		fmt.Println("split", i, s)
	}
	// Output:
	// split 0 [2 6 8 10]
	// split 1 [1 3 4 5 7 9 11 12]
}

// strata keys 1..20 by parity.
func strata(b *dataset.Builder) dataset.Dataset[dataset.KV[string, int]] {
	return dataset.KeyBy(dataset.Parallelize(b, upTo(20), 2), func(x int) string {
		if x%2 == 0 {
			return "even"
		}
		return "odd"
	})
}

// perKey lists each key's values, keys in order.
func perKey(kvs []dataset.KV[string, int]) []string {
	m := map[string][]int{}
	for _, kv := range kvs {
		m[kv.Key] = append(m[kv.Key], kv.Value)
	}
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		slices.Sort(m[k])
		out = append(out, fmt.Sprint(k, " ", m[k]))
	}
	return out
}

var exampleSampleByKey = dataset.JobResult("example.samplebykey", func(b *dataset.Builder, _ int) ([]string, error) {
	// each even record kept with probability 0.5, each odd one with 0.1
	s, err := dataset.Collect(dataset.SampleByKey(strata(b), false, map[string]float64{"even": 0.5, "odd": 0.1}, 11))
	return perKey(s), err
})

func ExampleSampleByKey() {
	for _, l := range runExample(exampleSampleByKey) {
		fmt.Println(l)
	}
	// Output:
	// even [4 6 8 10]
	// odd [9 11]
}

var exampleSampleByKeyExact = dataset.JobResult("example.samplebykeyexact", func(b *dataset.Builder, _ int) ([]string, error) {
	// exactly ⌈10·0.5⌉ = 5 even records and ⌈10·0.2⌉ = 2 odd ones
	s, err := dataset.Collect(dataset.SampleByKeyExact(strata(b), false, map[string]float64{"even": 0.5, "odd": 0.2}, 11))
	return perKey(s), err
})

func ExampleSampleByKeyExact() {
	for _, l := range runExample(exampleSampleByKeyExact) {
		fmt.Println(l)
	}
	// Output:
	// even [2 6 10 12 20]
	// odd [9 11]
}

var exampleCountApproxDistinct = dataset.JobResult("example.countapproxdistinct", func(b *dataset.Builder, _ int) (int64, error) {
	xs := make([]int, 50000)
	for i := range xs {
		xs[i] = i % 10000 // 10,000 distinct values, each five times
	}
	return dataset.CountApproxDistinct(dataset.Parallelize(b, xs, 4), 0.01)
})

func ExampleCountApproxDistinct() {
	n := runExample(exampleCountApproxDistinct)
	// a relative standard deviation of 0.01: within 3% of 10,000 with
	// overwhelming probability (the estimate is the same on every run)
	fmt.Println(n >= 9700 && n <= 10300)
	// Output: true
}

var exampleCountApproxDistinctByKey = dataset.JobResult("example.countapproxdistinctbykey", func(b *dataset.Builder, _ int) ([]dataset.KV[string, int64], error) {
	var visits []dataset.KV[string, int]
	for user := range 300 {
		visits = append(visits, dataset.KV[string, int]{Key: "home", Value: user})
		if user%3 == 0 {
			visits = append(visits, dataset.KV[string, int]{Key: "shop", Value: user}, dataset.KV[string, int]{Key: "shop", Value: user})
		}
	}
	out, err := dataset.Collect(dataset.CountApproxDistinctByKey(dataset.Parallelize(b, visits, 3), 0.01, 0))
	slices.SortFunc(out, func(a, b dataset.KV[string, int64]) int { return strings.Compare(a.Key, b.Key) })
	return out, err
})

func ExampleCountApproxDistinctByKey() {
	// distinct users per page: 300 and 100, estimated
	for _, kv := range runExample(exampleCountApproxDistinctByKey) {
		fmt.Println(kv.Key, kv.Value)
	}
	// Output:
	// home 299
	// shop 100
}

type version struct{ Major, Minor int }

var exampleSortByLess = dataset.JobResult("example.sortbyless", func(b *dataset.Builder, _ int) ([]string, error) {
	releases := dataset.Parallelize(b, []string{"v1.10", "v1.9", "v2.0", "v1.2"}, 2)
	parse := func(s string) version {
		var v version
		fmt.Sscanf(s, "v%d.%d", &v.Major, &v.Minor)
		return v
	}
	// version is not cmp.Ordered: SortBy cannot sort by it, SortByLess can
	less := func(a, b version) bool { return a.Major < b.Major || a.Major == b.Major && a.Minor < b.Minor }
	return dataset.Collect(dataset.SortByLess(releases, parse, less, true, 2))
})

func ExampleSortByLess() {
	fmt.Println(runExample(exampleSortByLess))
	// Output: [v1.2 v1.9 v1.10 v2.0]
}

var exampleRepartitionAndSort = dataset.JobResult("example.repartitionandsort", func(b *dataset.Builder, _ int) ([][]dataset.KV[int, string], error) {
	events := dataset.Parallelize(b, []dataset.KV[int, string]{{Key: 3, Value: "c"}, {Key: 0, Value: "a"}, {Key: 2, Value: "b"}, {Key: 1, Value: "d"}, {Key: 4, Value: "e"}}, 2)
	// hash partitioning, each partition sorted by key in the shuffle
	return dataset.Collect(dataset.Glom(dataset.RepartitionAndSortWithinPartitions(events, dataset.HashPartitioner(2))))
})

func ExampleRepartitionAndSortWithinPartitions() {
	for i, p := range runExample(exampleRepartitionAndSort) {
		fmt.Println("partition", i, p)
	}
	// Output:
	// partition 0 [{0 a} {3 c}]
	// partition 1 [{1 d} {2 b} {4 e}]
}

// The …With forms take a Partitioner where the plain forms take a count:
// the result has that Partitioner, and an input already partitioned by
// it is not shuffled again.

var exampleWith = dataset.JobResult("example.with", func(b *dataset.Builder, _ int) ([]string, error) {
	part := dataset.HashPartitioner(3)
	sales := dataset.PartitionBy(dataset.Parallelize(b, []sc{{Key: "ann", Value: 3}, {Key: "bob", Value: 5}, {Key: "ann", Value: 4}}, 2), part)
	names := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "ann", Value: "Ann"}, {Key: "cat", Value: "Cat"}}, 2)
	add := func(a, b int) int { return a + b }
	var lines []string
	show := func(what string, partitioner dataset.Partitioner, recs any, err error) error {
		if err != nil {
			return err
		}
		var s []string
		switch r := recs.(type) {
		case []sc:
			for _, kv := range r {
				s = append(s, fmt.Sprint(kv.Key, "=", kv.Value))
			}
		case []string:
			s = r
		}
		slices.Sort(s)
		lines = append(lines, fmt.Sprintf("%s %v on %s", what, s, partitioner.Name()))
		return nil
	}
	sums := dataset.ReduceByKeyWith(sales, add, part)
	r, err := dataset.Collect(sums)
	if err := show("ReduceByKeyWith", sums.Partitioner(), r, err); err != nil {
		return nil, err
	}
	// sales is already partitioned by part: FoldByKeyWith shuffles nothing
	// and starts each key from zero once per partition that holds it
	folded := dataset.FoldByKeyWith(sales, 100, add, part)
	r, err = dataset.Collect(folded)
	if err := show("FoldByKeyWith", folded.Partitioner(), r, err); err != nil {
		return nil, err
	}
	larger := func(a, b int) int { return max(a, b) }
	most := dataset.AggregateByKeyWith(sales, 0, larger, larger, part)
	r, err = dataset.Collect(most)
	if err := show("AggregateByKeyWith", most.Partitioner(), r, err); err != nil {
		return nil, err
	}
	counts := dataset.CombineByKeyWith(sales, dataset.Aggregator[int, int]{
		CreateCombiner: func(int) int { return 1 },
		MergeValue:     func(c, _ int) int { return c + 1 },
		MergeCombiners: add,
	}, part)
	r, err = dataset.Collect(counts)
	if err := show("CombineByKeyWith", counts.Partitioner(), r, err); err != nil {
		return nil, err
	}
	grouped := dataset.GroupByKeyWith(sales, part)
	g, err := dataset.Collect(grouped)
	if err := show("GroupByKeyWith", grouped.Partitioner(), fmtAll(g, func(kv dataset.KV[string, []int]) string {
		slices.Sort(kv.Value)
		return fmt.Sprint(kv.Key, "=", kv.Value)
	}), err); err != nil {
		return nil, err
	}
	unnamed := dataset.SubtractByKeyWith(sales, names, part)
	r, err = dataset.Collect(unnamed)
	if err := show("SubtractByKeyWith", unnamed.Partitioner(), r, err); err != nil {
		return nil, err
	}
	return lines, nil
})

// optString is o's value, or "none".
func optString[T any](o dataset.Opt[T]) string {
	if !o.Ok {
		return "none"
	}
	return fmt.Sprint(o.Value)
}

// fmtAll formats every record with f.
func fmtAll[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func ExampleReduceByKeyWith() {
	for _, l := range runExample(exampleWith) {
		fmt.Println(l)
	}
	// Output:
	// ReduceByKeyWith [ann=7 bob=5] on hash(3)
	// FoldByKeyWith [ann=107 bob=105] on hash(3)
	// AggregateByKeyWith [ann=4 bob=5] on hash(3)
	// CombineByKeyWith [ann=2 bob=1] on hash(3)
	// GroupByKeyWith [ann=[3 4] bob=[5]] on hash(3)
	// SubtractByKeyWith [bob=5] on hash(3)
}

var exampleJoinsWith = dataset.JobResult("example.joinswith", func(b *dataset.Builder, _ int) ([]string, error) {
	part := dataset.HashPartitioner(2)
	ages := dataset.Parallelize(b, []sc{{Key: "ann", Value: 31}, {Key: "bob", Value: 42}}, 2)
	towns := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "ann", Value: "Oslo"}, {Key: "cat", Value: "Rome"}}, 2)
	pets := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "bob", Value: "dog"}}, 1)
	cars := dataset.Parallelize(b, []dataset.KV[string, int]{{Key: "cat", Value: 1999}}, 1)
	var lines []string
	add := func(what string, name string, recs []string, err error) error {
		if err != nil {
			return err
		}
		slices.Sort(recs)
		lines = append(lines, fmt.Sprintf("%s %v on %s", what, recs, name))
		return nil
	}
	inner := dataset.JoinWith(ages, towns, part)
	i, err := dataset.Collect(inner)
	if err := add("JoinWith", inner.Partitioner().Name(), fmtAll(i, func(kv dataset.KV[string, dataset.Pair[int, string]]) string {
		return fmt.Sprint(kv.Key, "=", kv.Value.Left, ",", kv.Value.Right)
	}), err); err != nil {
		return nil, err
	}
	left := dataset.LeftOuterJoinWith(ages, towns, part)
	l, err := dataset.Collect(left)
	if err := add("LeftOuterJoinWith", left.Partitioner().Name(), fmtAll(l, func(kv dataset.KV[string, dataset.Pair[int, dataset.Opt[string]]]) string {
		return fmt.Sprint(kv.Key, "=", kv.Value.Left, ",", optString(kv.Value.Right))
	}), err); err != nil {
		return nil, err
	}
	right := dataset.RightOuterJoinWith(ages, towns, part)
	r, err := dataset.Collect(right)
	if err := add("RightOuterJoinWith", right.Partitioner().Name(), fmtAll(r, func(kv dataset.KV[string, dataset.Pair[dataset.Opt[int], string]]) string {
		return fmt.Sprint(kv.Key, "=", optString(kv.Value.Left), ",", kv.Value.Right)
	}), err); err != nil {
		return nil, err
	}
	full := dataset.FullOuterJoinWith(ages, towns, part)
	f, err := dataset.Collect(full)
	if err := add("FullOuterJoinWith", full.Partitioner().Name(), fmtAll(f, func(kv dataset.KV[string, dataset.Pair[dataset.Opt[int], dataset.Opt[string]]]) string {
		return fmt.Sprint(kv.Key, "=", optString(kv.Value.Left), ",", optString(kv.Value.Right))
	}), err); err != nil {
		return nil, err
	}
	co := dataset.CoGroupWith(ages, towns, part)
	c, err := dataset.Collect(co)
	if err := add("CoGroupWith", co.Partitioner().Name(), fmtAll(c, func(kv dataset.KV[string, dataset.Grouped[int, string]]) string {
		return fmt.Sprint(kv.Key, "=", kv.Value.Left, kv.Value.Right)
	}), err); err != nil {
		return nil, err
	}
	co3 := dataset.CoGroup3With(ages, towns, pets, part)
	c3, err := dataset.Collect(co3)
	if err := add("CoGroup3With", co3.Partitioner().Name(), fmtAll(c3, func(kv dataset.KV[string, dataset.Grouped3[int, string, string]]) string {
		return fmt.Sprint(kv.Key, "=", kv.Value.First, kv.Value.Second, kv.Value.Third)
	}), err); err != nil {
		return nil, err
	}
	co4 := dataset.CoGroup4With(ages, towns, pets, cars, part)
	c4, err := dataset.Collect(co4)
	if err := add("CoGroup4With", co4.Partitioner().Name(), fmtAll(c4, func(kv dataset.KV[string, dataset.Grouped4[int, string, string, int]]) string {
		return fmt.Sprint(kv.Key, "=", kv.Value.First, kv.Value.Second, kv.Value.Third, kv.Value.Fourth)
	}), err); err != nil {
		return nil, err
	}
	return lines, nil
})

func ExampleJoinWith() {
	for _, l := range runExample(exampleJoinsWith) {
		fmt.Println(l)
	}
	// Output:
	// JoinWith [ann=31,Oslo] on hash(2)
	// LeftOuterJoinWith [ann=31,Oslo bob=42,none] on hash(2)
	// RightOuterJoinWith [ann=31,Oslo cat=none,Rome] on hash(2)
	// FullOuterJoinWith [ann=31,Oslo bob=42,none cat=none,Rome] on hash(2)
	// CoGroupWith [ann=[31] [Oslo] bob=[42] [] cat=[] [Rome]] on hash(2)
	// CoGroup3With [ann=[31] [Oslo] [] bob=[42] [] [dog] cat=[] [Rome] []] on hash(2)
	// CoGroup4With [ann=[31] [Oslo] [] [] bob=[42] [] [dog] [] cat=[] [Rome] [] [1999]] on hash(2)
}

// printOp prints the line of lines that is about op.
func printOp(lines []string, op string) {
	for _, l := range lines {
		if strings.HasPrefix(l, op+" ") {
			fmt.Println(l)
		}
	}
}

func ExampleFoldByKeyWith() {
	printOp(runExample(exampleWith), "FoldByKeyWith")
	// Output: FoldByKeyWith [ann=107 bob=105] on hash(3)
}

func ExampleAggregateByKeyWith() {
	printOp(runExample(exampleWith), "AggregateByKeyWith")
	// Output: AggregateByKeyWith [ann=4 bob=5] on hash(3)
}

func ExampleCombineByKeyWith() {
	printOp(runExample(exampleWith), "CombineByKeyWith")
	// Output: CombineByKeyWith [ann=2 bob=1] on hash(3)
}

func ExampleGroupByKeyWith() {
	printOp(runExample(exampleWith), "GroupByKeyWith")
	// Output: GroupByKeyWith [ann=[3 4] bob=[5]] on hash(3)
}

func ExampleSubtractByKeyWith() {
	printOp(runExample(exampleWith), "SubtractByKeyWith")
	// Output: SubtractByKeyWith [bob=5] on hash(3)
}

func ExampleLeftOuterJoinWith() {
	printOp(runExample(exampleJoinsWith), "LeftOuterJoinWith")
	// Output: LeftOuterJoinWith [ann=31,Oslo bob=42,none] on hash(2)
}

func ExampleRightOuterJoinWith() {
	printOp(runExample(exampleJoinsWith), "RightOuterJoinWith")
	// Output: RightOuterJoinWith [ann=31,Oslo cat=none,Rome] on hash(2)
}

func ExampleFullOuterJoinWith() {
	printOp(runExample(exampleJoinsWith), "FullOuterJoinWith")
	// Output: FullOuterJoinWith [ann=31,Oslo bob=42,none cat=none,Rome] on hash(2)
}

func ExampleCoGroupWith() {
	printOp(runExample(exampleJoinsWith), "CoGroupWith")
	// Output: CoGroupWith [ann=[31] [Oslo] bob=[42] [] cat=[] [Rome]] on hash(2)
}

func ExampleCoGroup3With() {
	printOp(runExample(exampleJoinsWith), "CoGroup3With")
	// Output: CoGroup3With [ann=[31] [Oslo] [] bob=[42] [] [dog] cat=[] [Rome] []] on hash(2)
}

func ExampleCoGroup4With() {
	printOp(runExample(exampleJoinsWith), "CoGroup4With")
	// Output: CoGroup4With [ann=[31] [Oslo] [] [] bob=[42] [] [dog] [] cat=[] [Rome] [] [1999]] on hash(2)
}
