package dataset_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// runExample runs an example's job on a local[2] Context and returns its
// result (a job's body runs once on the driver and again on executors;
// its result comes back from the driver's run).
func runExample[R any](j *dataset.JobDef[int, R]) R {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		panic(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		panic(err)
	}
	defer fc.Stop(context.Background())
	r, err := j.Run(context.Background(), fc, 0)
	if err != nil {
		panic(err)
	}
	return r
}

var exampleGlom = dataset.JobResult("example.glom", func(b *dataset.Builder, _ int) ([][]int, error) {
	return dataset.Collect(dataset.Glom(dataset.Parallelize(b, []int{1, 2, 3, 4, 5}, 2)))
})

func ExampleGlom() {
	fmt.Println(runExample(exampleGlom))
	// Output: [[1 2] [3 4 5]]
}

var exampleMapPartitionsWithIndex = dataset.JobResult("example.mappartitionswithindex", func(b *dataset.Builder, _ int) ([]string, error) {
	nums := dataset.Parallelize(b, []int{1, 2, 3, 4}, 2)
	return dataset.Collect(dataset.MapPartitionsWithIndex(nums, func(i int, records iter.Seq[int], yield func(string)) error {
		sum := 0
		for x := range records {
			sum += x
		}
		yield(fmt.Sprintf("partition %d sums to %d", i, sum))
		return nil
	}))
})

func ExampleMapPartitionsWithIndex() {
	for _, s := range runExample(exampleMapPartitionsWithIndex) {
		fmt.Println(s)
	}
	// Output:
	// partition 0 sums to 3
	// partition 1 sums to 7
}

var exampleEmpty = dataset.JobResult("example.empty", func(b *dataset.Builder, _ int) (int64, error) {
	return dataset.Count(dataset.EmptyDataset[string](b))
})

func ExampleEmptyDataset() {
	fmt.Println(runExample(exampleEmpty))
	// Output: 0
}

var exampleZip = dataset.JobResult("example.zip", func(b *dataset.Builder, _ int) ([]dataset.Pair[string, int], error) {
	words := dataset.Parallelize(b, []string{"a", "bb", "ccc"}, 2)
	return dataset.Collect(dataset.Zip(words, dataset.Map(words, func(w string) int { return len(w) })))
})

func ExampleZip() {
	fmt.Println(runExample(exampleZip))
	// Output: [{a 1} {bb 2} {ccc 3}]
}

var exampleZipWithIndex = dataset.JobResult("example.zipwithindex", func(b *dataset.Builder, _ int) ([]dataset.Pair[string, int64], error) {
	return dataset.Collect(dataset.ZipWithIndex(dataset.Parallelize(b, []string{"a", "b", "c", "d", "e"}, 3)))
})

func ExampleZipWithIndex() {
	fmt.Println(runExample(exampleZipWithIndex))
	// Output: [{a 0} {b 1} {c 2} {d 3} {e 4}]
}

var exampleZipWithUniqueID = dataset.JobResult("example.zipwithuniqueid", func(b *dataset.Builder, _ int) ([]dataset.Pair[string, int64], error) {
	return dataset.Collect(dataset.ZipWithUniqueID(dataset.Parallelize(b, []string{"a", "b", "c", "d", "e"}, 2)))
})

func ExampleZipWithUniqueID() {
	// partition 0 holds a, b; partition 1 holds c, d, e: ids k, k+2, k+4…
	fmt.Println(runExample(exampleZipWithUniqueID))
	// Output: [{a 0} {b 2} {c 1} {d 3} {e 5}]
}

var exampleCartesian = dataset.JobResult("example.cartesian", func(b *dataset.Builder, _ int) ([]dataset.Pair[int, string], error) {
	return dataset.Collect(dataset.Cartesian(dataset.Parallelize(b, []int{1, 2}, 1), dataset.Parallelize(b, []string{"x", "y"}, 1)))
})

func ExampleCartesian() {
	fmt.Println(runExample(exampleCartesian))
	// Output: [{1 x} {1 y} {2 x} {2 y}]
}

var exampleSubtract = dataset.JobResult("example.subtract", func(b *dataset.Builder, _ int) ([]int, error) {
	out, err := dataset.Collect(dataset.Subtract(dataset.Parallelize(b, []int{1, 2, 2, 3, 4}, 2), dataset.Parallelize(b, []int{3, 4, 5}, 1), 0))
	slices.Sort(out)
	return out, err
})

func ExampleSubtract() {
	fmt.Println(runExample(exampleSubtract))
	// Output: [1 2 2]
}

var exampleIntersection = dataset.JobResult("example.intersection", func(b *dataset.Builder, _ int) ([]int, error) {
	out, err := dataset.Collect(dataset.Intersection(dataset.Parallelize(b, []int{1, 2, 2, 3}, 2), dataset.Parallelize(b, []int{2, 3, 3, 4}, 2), 0))
	slices.Sort(out)
	return out, err
})

func ExampleIntersection() {
	fmt.Println(runExample(exampleIntersection))
	// Output: [2 3]
}

var exampleTop = dataset.JobResult("example.top", func(b *dataset.Builder, _ int) ([2][]string, error) {
	words := dataset.Parallelize(b, []string{"pear", "fig", "apple", "kiwi", "banana"}, 2)
	byLen := func(a, b string) bool { return len(a) < len(b) }
	top, err := dataset.Top(words, 2, byLen)
	if err != nil {
		return [2][]string{}, err
	}
	low, err := dataset.TakeOrdered(words, 2, byLen)
	return [2][]string{top, low}, err
})

func ExampleTop() {
	r := runExample(exampleTop)
	fmt.Println("longest:", r[0])
	fmt.Println("shortest:", r[1])
	// Output:
	// longest: [banana apple]
	// shortest: [fig pear]
}

var exampleTreeAggregate = dataset.JobResult("example.treeaggregate", func(b *dataset.Builder, _ int) ([2]int, error) {
	nums := dataset.Parallelize(b, []int{1, 2, 3, 4, 5, 6, 7, 8}, 8)
	count, err := dataset.TreeAggregate(nums, 0, func(n, _ int) int { return n + 1 }, func(a, b int) int { return a + b }, 2)
	if err != nil {
		return [2]int{}, err
	}
	sum, _, err := dataset.TreeReduce(nums, func(a, b int) int { return a + b }, 2)
	return [2]int{count, sum}, err
})

func ExampleTreeAggregate() {
	r := runExample(exampleTreeAggregate)
	fmt.Println("count", r[0], "sum", r[1])
	// Output: count 8 sum 36
}

var exampleToLocalIterator = dataset.JobResult("example.tolocaliterator", func(b *dataset.Builder, _ int) ([]int64, error) {
	var firstTwo []int64
	for x, err := range dataset.ToLocalIterator(dataset.Range(b, 0, 1000, 4)) {
		if err != nil {
			return nil, err
		}
		firstTwo = append(firstTwo, x)
		if len(firstTwo) == 2 {
			break // only the first partition was computed
		}
	}
	return firstTwo, nil
})

func ExampleToLocalIterator() {
	fmt.Println(runExample(exampleToLocalIterator))
	// Output: [0 1]
}

var exampleStats = dataset.JobResult("example.stats", func(b *dataset.Builder, _ int) (dataset.StatCounter, error) {
	return dataset.Stats(dataset.Parallelize(b, []float64{2, 4, 4, 4, 5, 5, 7, 9}, 3))
})

func ExampleStats() {
	s := runExample(exampleStats)
	fmt.Printf("count %d mean %.1f stdev %.1f min %.0f max %.0f\n", s.Count(), s.Mean(), s.Stdev(), s.Min(), s.Max())
	// Output: count 8 mean 5.0 stdev 2.0 min 2 max 9
}

type sc = dataset.KV[string, int]

var exampleFoldByKey = dataset.JobResult("example.foldbykey", func(b *dataset.Builder, _ int) (map[string][]int, error) {
	pairs := dataset.Parallelize(b, []sc{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "a", Value: 3}}, 2)
	lists := dataset.MapValues(pairs, func(v int) []int { return []int{v} })
	// the zero is copied for every key: appending to it in place is safe
	folded := dataset.FoldByKey(lists, []int{}, func(acc, v []int) []int { return append(acc, v...) }, 2)
	m, err := dataset.CollectAsMap(folded)
	for _, v := range m {
		slices.Sort(v)
	}
	return m, err
})

func ExampleFoldByKey() {
	fmt.Println(runExample(exampleFoldByKey))
	// Output: map[a:[1 3] b:[2]]
}

var exampleFlatMapValues = dataset.JobResult("example.flatmapvalues", func(b *dataset.Builder, _ int) ([]dataset.KV[string, rune], error) {
	in := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "x", Value: "ab"}, {Key: "y", Value: "c"}}, 1)
	return dataset.Collect(dataset.FlatMapValues(in, func(s string, yield func(rune)) {
		for _, r := range s {
			yield(r)
		}
	}))
})

func ExampleFlatMapValues() {
	for _, kv := range runExample(exampleFlatMapValues) {
		fmt.Printf("%s %c\n", kv.Key, kv.Value)
	}
	// Output:
	// x a
	// x b
	// y c
}

var exampleCountByValue = dataset.JobResult("example.countbyvalue", func(b *dataset.Builder, _ int) (map[string]int64, error) {
	return dataset.CountByValue(dataset.Parallelize(b, []string{"a", "b", "a"}, 2))
})

func ExampleCountByValue() {
	fmt.Println(runExample(exampleCountByValue))
	// Output: map[a:2 b:1]
}

var exampleLookup = dataset.JobResult("example.lookup", func(b *dataset.Builder, _ int) ([]int, error) {
	pairs := dataset.Parallelize(b, []sc{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "a", Value: 3}}, 2)
	// partitioned: the lookup computes only the partition of "a"
	byKey := dataset.PartitionBy(pairs, dataset.HashPartitioner(8))
	return dataset.Lookup(byKey, "a")
})

func ExampleLookup() {
	fmt.Println(runExample(exampleLookup))
	// Output: [1 3]
}

var exampleSubtractByKey = dataset.JobResult("example.subtractbykey", func(b *dataset.Builder, _ int) (map[string]int, error) {
	a := dataset.Parallelize(b, []sc{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, 2)
	other := dataset.Parallelize(b, []dataset.KV[string, bool]{{Key: "b", Value: true}}, 1)
	return dataset.CollectAsMap(dataset.SubtractByKey(a, other, 0))
})

func ExampleSubtractByKey() {
	fmt.Println(runExample(exampleSubtractByKey))
	// Output: map[a:1]
}

var exampleCoGroup3 = dataset.JobResult("example.cogroup3", func(b *dataset.Builder, _ int) ([]dataset.KV[string, dataset.Grouped3[int, string, bool]], error) {
	nums := dataset.Parallelize(b, []sc{{Key: "a", Value: 1}, {Key: "a", Value: 2}}, 1)
	names := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "b", Value: "bee"}}, 1)
	flags := dataset.Parallelize(b, []dataset.KV[string, bool]{{Key: "a", Value: true}}, 1)
	out, err := dataset.Collect(dataset.CoGroup3(nums, names, flags, 1))
	return out, err
})

func ExampleCoGroup3() {
	for _, g := range runExample(exampleCoGroup3) {
		fmt.Println(g.Key, g.Value.First, g.Value.Second, g.Value.Third)
	}
	// Output:
	// a [1 2] [] [true]
	// b [] [bee] []
}

var exampleCoGroup4 = dataset.JobResult("example.cogroup4", func(b *dataset.Builder, _ int) ([]dataset.KV[int, dataset.Grouped4[int, int, int, int]], error) {
	one := func(k, v int) dataset.Dataset[dataset.KV[int, int]] {
		return dataset.Parallelize(b, []dataset.KV[int, int]{{Key: k, Value: v}}, 1)
	}
	return dataset.Collect(dataset.CoGroup4(one(1, 10), one(1, 20), one(2, 30), one(1, 40), 1))
})

func ExampleCoGroup4() {
	for _, g := range runExample(exampleCoGroup4) {
		fmt.Println(g.Key, g.Value.First, g.Value.Second, g.Value.Third, g.Value.Fourth)
	}
	// Output:
	// 1 [10] [20] [] [40]
	// 2 [] [] [30] []
}

var examplePartitioner = dataset.JobResult("example.partitioner", func(b *dataset.Builder, _ int) ([]string, error) {
	users := dataset.PartitionBy(dataset.Parallelize(b, []sc{{Key: "ann", Value: 1}, {Key: "bob", Value: 2}}, 2), dataset.HashPartitioner(4))
	events := dataset.Parallelize(b, []dataset.KV[string, string]{{Key: "ann", Value: "login"}, {Key: "ann", Value: "logout"}}, 3)
	// users is already partitioned by hash(4): only events is shuffled,
	// and the join's output keeps hash(4)
	joined := dataset.JoinWith(users, events, dataset.HashPartitioner(4))
	out, err := dataset.Collect(joined)
	var lines []string
	for _, kv := range out {
		lines = append(lines, fmt.Sprintf("%s %d %s", kv.Key, kv.Value.Left, kv.Value.Right))
	}
	slices.Sort(lines)
	return append(lines, "partitioner "+joined.Partitioner().Name()), err
})

func ExampleDataset_Partitioner() {
	for _, l := range runExample(examplePartitioner) {
		fmt.Println(l)
	}
	// Output:
	// ann 1 login
	// ann 1 logout
	// partitioner hash(4)
}
