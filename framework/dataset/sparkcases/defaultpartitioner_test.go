package sparkcases_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

type ii = dataset.KV[int, int]

// pairsTo is (x, x) for x in lo..hi.
func pairsTo(lo, hi int) []ii {
	out := make([]ii, 0, hi-lo+1)
	for x := lo; x <= hi; x++ {
		out = append(out, ii{Key: x, Value: x})
	}
	return out
}

// defaultCounts is the partition counts of the wide operations with
// parts 0 in PartitioningSuite's "defaultPartitioner" cases and
// PairRDDFunctionsSuite's cogroup cases (SPARK-22465), and the records of
// the ones small enough to run in every mode.
type defaultCounts struct {
	Counts  map[string]int
	Records map[string][]string
}

var defaultCountsJob = dataset.JobResult("sparkcases.defaultcounts", func(b *dataset.Builder, _ struct{}) (defaultCounts, error) {
	o := defaultCounts{Counts: map[string]int{}, Records: map[string][]string{}}
	four := []ii{{Key: 1, Value: 2}, {Key: 2, Value: 3}, {Key: 2, Value: 4}, {Key: 3, Value: 4}}
	rdd1 := dataset.Parallelize(b, pairsTo(1, 1000), 150)
	rdd2 := dataset.PartitionBy(dataset.Parallelize(b, four, 0), dataset.HashPartitioner(10))
	rdd3 := dataset.PartitionBy(dataset.Parallelize(b, []ii{{Key: 1, Value: 6}, {Key: 7, Value: 8}, {Key: 3, Value: 10}, {Key: 5, Value: 12}, {Key: 13, Value: 14}}, 0),
		dataset.HashPartitioner(100))
	rdd4 := dataset.PartitionBy(dataset.Parallelize(b, four, 0), dataset.HashPartitioner(9))
	rdd5 := dataset.Parallelize(b, pairsTo(1, 10), 11)
	rdd6 := dataset.PartitionBy(dataset.Parallelize(b, four, 0), dataset.HashPartitioner(3))
	o.Counts["partitioner1 (rdd1, rdd2)"] = dataset.CoGroup(rdd1, rdd2, 0).Partitions()
	o.Counts["partitioner2 (rdd2, rdd3)"] = dataset.CoGroup(rdd2, rdd3, 0).Partitions()
	o.Counts["partitioner3 (rdd3, rdd1)"] = dataset.CoGroup(rdd3, rdd1, 0).Partitions()
	o.Counts["partitioner4 (rdd1, rdd2, rdd3)"] = dataset.CoGroup3(rdd1, rdd2, rdd3, 0).Partitions()
	o.Counts["partitioner5 (rdd4, rdd5)"] = dataset.CoGroup(rdd4, rdd5, 0).Partitions()
	o.Counts["partitioner6 (rdd5, rdd5)"] = dataset.CoGroup(rdd5, rdd5, 0).Partitions()
	o.Counts["partitioner7 (rdd1, rdd6)"] = dataset.CoGroup(rdd1, rdd6, 0).Partitions()
	// single inputs: a partitioned one keeps its partitioner
	add := func(x, y int) int { return x + y }
	o.Counts["reduceByKey (rdd6)"] = dataset.ReduceByKey(rdd6, add, 0).Partitions()
	o.Counts["reduceByKey (rdd1)"] = dataset.ReduceByKey(rdd1, add, 0).Partitions()

	// PairRDDFunctionsSuite "cogroup between multiple RDD …"
	small := []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 2, Value: 1}, {Key: 3, Value: 1}}
	hashed10 := dataset.PartitionBy(dataset.Parallelize(b, small, 0), dataset.HashPartitioner(10))
	o.Counts["order of magnitude (1000, hash 10)"] = dataset.CoGroup(dataset.Parallelize(b, pairsTo(1, 1000), 1000), hashed10, 0).Partitions()
	similar := dataset.CoGroup(dataset.Parallelize(b, pairsTo(1, 1000), 20), hashed10, 0)
	o.Counts["similar order (20, hash 10)"] = similar.Partitions()
	o.Counts["without proper partitioner (20, 10)"] = dataset.CoGroup(dataset.Parallelize(b, pairsTo(1, 1000), 20), dataset.Parallelize(b, small, 10), 0).Partitions()

	var err error
	if o.Records["cogroup (rdd4, rdd5)"], err = groupLines(dataset.CoGroup(rdd4, rdd5, 0)); err != nil {
		return o, err
	}
	o.Records["cogroup (20, hash 10)"], err = groupLines(similar)
	return o, err
})

// groupLines is a cogroup's records as "key [left] [right]", sorted.
func groupLines(ds dataset.Dataset[dataset.KV[int, dataset.Grouped[int, int]]]) ([]string, error) {
	recs, err := dataset.Collect(ds)
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d %s %s", r.Key, sorted(r.Value.Left), sorted(r.Value.Right))
	}
	slices.Sort(out)
	return out, err
}

// wantGroupLines is groupLines computed without Flint.
func wantGroupLines(left, right []ii) []string {
	l, r := map[int][]int{}, map[int][]int{}
	for _, kv := range left {
		l[kv.Key] = append(l[kv.Key], kv.Value)
	}
	for _, kv := range right {
		r[kv.Key] = append(r[kv.Key], kv.Value)
	}
	var out []string
	for k := range l {
		out = append(out, fmt.Sprintf("%d %s %s", k, sorted(l[k]), sorted(r[k])))
	}
	for k := range r {
		if _, ok := l[k]; !ok {
			out = append(out, fmt.Sprintf("%d %s %s", k, sorted(l[k]), sorted(r[k])))
		}
	}
	slices.Sort(out)
	return out
}

// checkCounts compares o's counts with want.
func checkCounts(t *testing.T, got, want map[string]int) {
	t.Helper()
	for what, n := range want {
		if got[what] != n {
			t.Errorf("%s: %d partitions, want %d", what, got[what], n)
		}
	}
}

// PartitioningSuite "defaultPartitioner" and PairRDDFunctionsSuite
// "cogroup between multiple RDD with an order of magnitude difference in
// number of partitions" / "… with number of partitions similar in order
// of magnitude" (SPARK-22465), flint.default.parallelism unset: of the
// inputs that have a partitioner, the one with the most partitions lends
// it unless the largest input has ten or more times as many partitions;
// then the largest input's count. rdd1 has 150 partitions and no
// partitioner, rdd2 hash(10), rdd3 hash(100), rdd4 hash(9), rdd5 11
// partitions, rdd6 hash(3). The cogroup of rdd4 and rdd5 reads rdd4 where
// it is: its job runs rdd4's partitionBy, rdd5's shuffle and the result
// (3 stages).
func TestPartitioningSuiteDefaultPartitioner(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if fc.Config().IsSet("flint.default.parallelism") {
			t.Fatal("the harness set flint.default.parallelism; this case is about its default")
		}
		log := stagesOf(fc)
		mark := log.mark()
		o, err := defaultCountsJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, o.Counts, map[string]int{
			"partitioner1 (rdd1, rdd2)":           150,
			"partitioner2 (rdd2, rdd3)":           100,
			"partitioner3 (rdd3, rdd1)":           100,
			"partitioner4 (rdd1, rdd2, rdd3)":     100,
			"partitioner5 (rdd4, rdd5)":           9,
			"partitioner6 (rdd5, rdd5)":           11,
			"partitioner7 (rdd1, rdd6)":           150,
			"reduceByKey (rdd6)":                  3,
			"reduceByKey (rdd1)":                  150,
			"order of magnitude (1000, hash 10)":  1000,
			"similar order (20, hash 10)":         10,
			"without proper partitioner (20, 10)": 20,
		})
		four := []ii{{Key: 1, Value: 2}, {Key: 2, Value: 3}, {Key: 2, Value: 4}, {Key: 3, Value: 4}}
		small := []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 2, Value: 1}, {Key: 3, Value: 1}}
		for what, want := range map[string][]string{
			"cogroup (rdd4, rdd5)":  wantGroupLines(four, pairsTo(1, 10)),
			"cogroup (20, hash 10)": wantGroupLines(pairsTo(1, 1000), small),
		} {
			if got := o.Records[what]; !slices.Equal(got, want) {
				t.Errorf("%s: %d records %.200v, want %d %.200v", what, len(got), got, len(want), want)
			}
		}
		if got, want := log.since(t, mark, defaultCountsJob.Name(), 2), []string{"collect 3", "collect 3"}; !slices.Equal(got, want) {
			t.Errorf("jobs and their stages %v, want %v (the partitioned side read where it is)", got, want)
		}
	})
}

// PartitioningSuite "defaultPartitioner when defaultParallelism is set"
// and PairRDDFunctionsSuite "cogroup between multiple RDD when
// defaultParallelism is set without proper partitioner" / "… with proper
// partitioner" / "…; with huge number of partitions in upstream RDDs",
// with flint.default.parallelism=4: an input's partitioner is kept when
// eligible or at least as large as the default 4, else 4 partitions.
// The counts are the graph's, the same in every mode, so this case runs
// in local mode on a Context of its own (the shared ones leave the
// setting unset).
func TestPartitioningSuiteDefaultPartitionerWithDefaultParallelism(t *testing.T) {
	cfg := framework.NewConfig()
	for _, kv := range [][2]string{{"flint.master", "local[2,4]"}, {"flint.default.parallelism", "4"},
		{"flint.ui.enabled", "false"}, {"flint.ui.showConsoleProgress", "false"}} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(t.Context(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	o, err := defaultCountsJob.Run(t.Context(), fc, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, o.Counts, map[string]int{
		"partitioner1 (rdd1, rdd2)":           10,
		"partitioner2 (rdd2, rdd3)":           100,
		"partitioner3 (rdd3, rdd1)":           100,
		"partitioner4 (rdd1, rdd2, rdd3)":     100,
		"partitioner5 (rdd4, rdd5)":           9,
		"partitioner6 (rdd5, rdd5)":           4,
		"partitioner7 (rdd1, rdd6)":           4,
		"reduceByKey (rdd6)":                  3,
		"reduceByKey (rdd1)":                  4,
		"order of magnitude (1000, hash 10)":  10,
		"similar order (20, hash 10)":         10,
		"without proper partitioner (20, 10)": 4,
	})
}

// keyedOut is what the single-input cases check: records as sorted
// lines and the result's partitioner.
type keyedOut struct {
	Op          string
	Lines       []string
	Partitioner string
}

func keyed[V any](op string, ds dataset.Dataset[dataset.KV[int, V]], show func(V) string) (keyedOut, error) {
	o := keyedOut{Op: op}
	if p := ds.Partitioner(); p != nil {
		o.Partitioner = p.Name()
	}
	recs, err := dataset.Collect(ds)
	for _, r := range recs {
		o.Lines = append(o.Lines, fmt.Sprintf("%d %s", r.Key, show(r.Value)))
	}
	slices.Sort(o.Lines)
	return o, err
}

var existingPartitionerJob = dataset.JobResult("sparkcases.existingpartitioner", func(b *dataset.Builder, _ struct{}) ([]keyedOut, error) {
	p := keyMod(2)
	pairs := dataset.PartitionBy(dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 1}, {Key: 0, Value: 1}}, 0), p)
	add := func(x, y int) int { return x + y }
	show := func(v int) string { return fmt.Sprint(v) }
	var out []keyedOut
	steps := []func() (keyedOut, error){
		func() (keyedOut, error) { return keyed("reduceByKey", dataset.ReduceByKey(pairs, add, 0), show) },
		func() (keyedOut, error) { return keyed("foldByKey", dataset.FoldByKey(pairs, 0, add, 0), show) },
		func() (keyedOut, error) {
			return keyed("aggregateByKey", dataset.AggregateByKey(pairs, 0, add, add, 0), show)
		},
		func() (keyedOut, error) {
			agg := dataset.Aggregator[int, []int]{CreateCombiner: func(v int) []int { return []int{v} },
				MergeValue:     func(c []int, v int) []int { return append(c, v) },
				MergeCombiners: func(a, c []int) []int { return append(a, c...) }}
			return keyed("combineByKey", dataset.CombineByKey(pairs, agg, 0), sorted[int])
		},
		func() (keyedOut, error) { return keyed("groupByKey", dataset.GroupByKey(pairs, 0), sorted[int]) },
		func() (keyedOut, error) {
			return keyed("countApproxDistinctByKey", dataset.CountApproxDistinctByKey(pairs, 0.05, 0),
				func(n int64) string { return fmt.Sprint(n) })
		},
		func() (keyedOut, error) {
			return keyed("distinct", dataset.Distinct(pairs, 0), show)
		},
		func() (keyedOut, error) {
			counts, err := dataset.CountByKey(pairs)
			o := keyedOut{Op: "countByKey"}
			for k, n := range counts {
				o.Lines = append(o.Lines, fmt.Sprintf("%d %d", k, n))
			}
			slices.Sort(o.Lines)
			return o, err
		},
	}
	for _, step := range steps {
		o, err := step()
		out = append(out, o)
		if err != nil {
			return out, err
		}
	}
	return out, nil
})

// PairRDDFunctionsSuite "reduceByKey with partitioner": reduceByKey
// without a partition count over pairs partitionBy'd by Spark's test
// partitioner (key k to partition k mod 2) keeps that partitioner and
// adds no shuffle — its job is the partitionBy's map stage and the result
// stage. Spark's defaultPartitioner rule is the same for every
// single-input wide operation (foldByKey, aggregateByKey, combineByKey,
// groupByKey, countApproxDistinctByKey) and distinct() keeps an existing
// partitioner (RDDSuite "distinct with known partitioner preserves
// partitioning"); countByKey is mapValues then reduceByKey. Each is
// checked the same way: Spark's records, the partitioner kept, and no
// stage but the result's (the first job also runs partitionBy's map
// stage; later jobs reuse its output, as Spark skips a computed stage).
func TestPairRDDFunctionsReduceByKeyWithExistingPartitioner(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		log := stagesOf(fc)
		mark := log.mark()
		got, err := existingPartitionerJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		p := keyMod(2).Name()
		want := []keyedOut{
			{"reduceByKey", []string{"0 1", "1 4"}, p},
			{"foldByKey", []string{"0 1", "1 4"}, p},
			{"aggregateByKey", []string{"0 1", "1 4"}, p},
			{"combineByKey", []string{"0 [1]", "1 [1 1 2]"}, p},
			{"groupByKey", []string{"0 [1]", "1 [1 1 2]"}, p},
			{"countApproxDistinctByKey", []string{"0 1", "1 2"}, p},
			{"distinct", []string{"0 1", "1 1", "1 2"}, p},
			{"countByKey", []string{"0 1", "1 3"}, ""},
		}
		if len(got) != len(want) {
			t.Fatalf("%d cases ran, want %d: %v", len(got), len(want), got)
		}
		for i, w := range want {
			g := got[i]
			if g.Op != w.Op || !slices.Equal(g.Lines, w.Lines) || g.Partitioner != w.Partitioner {
				t.Errorf("%s: records %v, partitioner %q; want %v, %q", w.Op, g.Lines, g.Partitioner, w.Lines, w.Partitioner)
			}
		}
		var stages []string
		for i, w := range want {
			action, n := "collect", 1
			if w.Op == "countByKey" {
				action = "countByKey"
			}
			if i == 0 {
				n = 2
			}
			stages = append(stages, fmt.Sprintf("%s %d", action, n))
		}
		if g := log.since(t, mark, existingPartitionerJob.Name(), len(stages)); !slices.Equal(g, stages) {
			t.Errorf("jobs and their stages %v, want %v (no shuffle but partitionBy's)", g, stages)
		}
	})
}

// preservationOut is PartitioningSuite "partitioner preservation"'s
// partitioners by case, and the records and jobs of its runs.
type preservationOut struct {
	Partitioners map[string]string
	Regrouped    []string
	Joined       []string
}

var preservationJob = dataset.JobResult("sparkcases.preservation", func(b *dataset.Builder, _ struct{}) (preservationOut, error) {
	o := preservationOut{Partitioners: map[string]string{}}
	name := func(p dataset.Partitioner) string {
		if p == nil {
			return "None"
		}
		return p.Name()
	}
	rdd := dataset.Parallelize(b, pairsTo(1, 10), 4)
	add := func(x, y int) int { return x + y }
	grouped2, grouped4 := dataset.GroupByKey(rdd, 2), dataset.GroupByKey(rdd, 4)
	reduced2, reduced4 := dataset.ReduceByKey(rdd, add, 2), dataset.ReduceByKey(rdd, add, 4)
	set := func(what string, p dataset.Partitioner) { o.Partitioners[what] = name(p) }
	set("rdd", rdd.Partitioner())
	set("grouped2", grouped2.Partitioner())
	set("grouped4", grouped4.Partitioner())
	set("reduced2", reduced2.Partitioner())
	set("reduced4", reduced4.Partitioner())
	regrouped := dataset.GroupByKey(grouped2, 0)
	set("grouped2.groupByKey()", regrouped.Partitioner())
	set("grouped2.groupByKey(3)", dataset.GroupByKey(grouped2, 3).Partitioner())
	set("grouped2.groupByKey(2)", dataset.GroupByKey(grouped2, 2).Partitioner())
	set("grouped4.groupByKey()", dataset.GroupByKey(grouped4, 0).Partitioner())
	set("grouped4.groupByKey(3)", dataset.GroupByKey(grouped4, 3).Partitioner())
	set("grouped4.groupByKey(4)", dataset.GroupByKey(grouped4, 4).Partitioner())
	set("reduced2.reduceByKey()", dataset.ReduceByKey(reduced2, add, 0).Partitioner())
	joined := dataset.Join(grouped2, grouped4, 0)
	set("grouped2.join(grouped4)", joined.Partitioner())
	set("grouped2.leftOuterJoin(grouped4)", dataset.LeftOuterJoin(grouped2, grouped4, 0).Partitioner())
	set("grouped2.rightOuterJoin(grouped4)", dataset.RightOuterJoin(grouped2, grouped4, 0).Partitioner())
	set("grouped2.fullOuterJoin(grouped4)", dataset.FullOuterJoin(grouped2, grouped4, 0).Partitioner())
	set("grouped2.cogroup(grouped4)", dataset.CoGroup(grouped2, grouped4, 0).Partitioner())
	set("grouped2.join(reduced2)", dataset.Join(grouped2, reduced2, 0).Partitioner())
	set("grouped2.leftOuterJoin(reduced2)", dataset.LeftOuterJoin(grouped2, reduced2, 0).Partitioner())
	set("grouped2.rightOuterJoin(reduced2)", dataset.RightOuterJoin(grouped2, reduced2, 0).Partitioner())
	set("grouped2.fullOuterJoin(reduced2)", dataset.FullOuterJoin(grouped2, reduced2, 0).Partitioner())
	set("grouped2.cogroup(reduced2)", dataset.CoGroup(grouped2, reduced2, 0).Partitioner())
	set("grouped2.map", dataset.Map(grouped2, func(kv dataset.KV[int, []int]) dataset.KV[int, int] { return ii{Key: kv.Key, Value: 1} }).Partitioner())
	set("grouped2.mapValues", dataset.MapValues(grouped2, func([]int) int { return 1 }).Partitioner())
	set("grouped2.flatMapValues", dataset.FlatMapValues(grouped2, func(_ []int, yield func(int)) { yield(1) }).Partitioner())
	set("grouped2.filter", dataset.Filter(grouped2, func(kv dataset.KV[int, []int]) bool { return kv.Key > 4 }).Partitioner())
	recs, err := dataset.Collect(regrouped)
	if err != nil {
		return o, err
	}
	for _, r := range recs {
		o.Regrouped = append(o.Regrouped, fmt.Sprintf("%d %v", r.Key, r.Value))
	}
	slices.Sort(o.Regrouped)
	pairs, err := dataset.Collect(joined)
	for _, r := range pairs {
		o.Joined = append(o.Joined, fmt.Sprintf("%d %v %v", r.Key, r.Value.Left, r.Value.Right))
	}
	slices.Sort(o.Joined)
	return o, err
})

// PartitioningSuite "partitioner preservation": groupByKey() of a
// dataset grouped into 2 (or 4) partitions keeps its partitioner, and
// with another count does not; a join or cogroup of grouped2 and grouped4
// takes grouped4's, of grouped2 and reduced2 grouped2's; Map drops it,
// MapValues, FlatMapValues and Filter keep it. Flint compares
// partitioners by name. The regrouping runs without a shuffle of its own
// (its job: grouped2's map stage and the result); the join then reads
// grouped4 where it is (its job: grouped4's map stage, grouped2 — already
// computed, so skipped — shuffled again into 4, the result).
func TestPartitioningSuitePartitionerPreservation(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		log := stagesOf(fc)
		mark := log.mark()
		o, err := preservationJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		h2, h4 := dataset.HashPartitioner(2).Name(), dataset.HashPartitioner(4).Name()
		for what, want := range map[string]string{
			"rdd": "None", "grouped2": h2, "grouped4": h4, "reduced2": h2, "reduced4": h4,
			"grouped2.groupByKey()": h2, "grouped2.groupByKey(3)": dataset.HashPartitioner(3).Name(), "grouped2.groupByKey(2)": h2,
			"grouped4.groupByKey()": h4, "grouped4.groupByKey(3)": dataset.HashPartitioner(3).Name(), "grouped4.groupByKey(4)": h4,
			"reduced2.reduceByKey()":            h2,
			"grouped2.join(grouped4)":           h4,
			"grouped2.leftOuterJoin(grouped4)":  h4,
			"grouped2.rightOuterJoin(grouped4)": h4,
			"grouped2.fullOuterJoin(grouped4)":  h4,
			"grouped2.cogroup(grouped4)":        h4,
			"grouped2.join(reduced2)":           h2,
			"grouped2.leftOuterJoin(reduced2)":  h2,
			"grouped2.rightOuterJoin(reduced2)": h2,
			"grouped2.fullOuterJoin(reduced2)":  h2,
			"grouped2.cogroup(reduced2)":        h2,
			"grouped2.map":                      "None",
			"grouped2.mapValues":                h2,
			"grouped2.flatMapValues":            h2,
			"grouped2.filter":                   h2,
		} {
			if got := o.Partitioners[what]; got != want {
				t.Errorf("%s: partitioner %s, want %s", what, got, want)
			}
		}
		var regrouped, joined []string
		for x := 1; x <= 10; x++ {
			regrouped = append(regrouped, fmt.Sprintf("%d [[%d]]", x, x))
			joined = append(joined, fmt.Sprintf("%d [%d] [%d]", x, x, x))
		}
		slices.Sort(regrouped)
		slices.Sort(joined)
		if !slices.Equal(o.Regrouped, regrouped) {
			t.Errorf("grouped2.groupByKey() = %v, want %v", o.Regrouped, regrouped)
		}
		if !slices.Equal(o.Joined, joined) {
			t.Errorf("grouped2.join(grouped4) = %v, want %v", o.Joined, joined)
		}
		if got, want := log.since(t, mark, preservationJob.Name(), 2), []string{"collect 2", "collect 3"}; !slices.Equal(got, want) {
			t.Errorf("jobs and their stages %v, want %v", got, want)
		}
	})
}

// distinctOut is RDDSuite "distinct with known partitioner preserves
// partitioning"'s partitioners and records.
type distinctOut struct {
	Sorted, Distinct, Distinct5, Reduced string
	Same, Different, Sums                []string
}

var distinctKnownJob = dataset.JobResult("sparkcases.distinctknown", func(b *dataset.Builder, _ struct{}) (distinctOut, error) {
	var o distinctOut
	xs := make([]int, 100)
	for i := range xs {
		xs[i] = i + 1
	}
	pairs := dataset.Map(dataset.Parallelize(b, xs, 10), func(x int) ii { return ii{Key: x % 10, Value: x % 10} })
	rdd := dataset.SortByKey(pairs, true, 0)
	name := func(p dataset.Partitioner) string {
		if p == nil {
			return "None"
		}
		return p.Name()
	}
	same, different := dataset.Distinct(rdd, 0), dataset.Distinct(rdd, 5)
	// reduceByKey() over a range-partitioned input keeps that partitioner
	sums := dataset.ReduceByKey(rdd, func(x, y int) int { return x + y }, 0)
	o.Sorted, o.Distinct, o.Distinct5, o.Reduced = name(rdd.Partitioner()), name(same.Partitioner()), name(different.Partitioner()), name(sums.Partitioner())
	lines := func(ds dataset.Dataset[ii]) ([]string, error) {
		recs, err := dataset.Collect(ds)
		var out []string
		for _, r := range recs {
			out = append(out, fmt.Sprintf("%d %d", r.Key, r.Value))
		}
		slices.Sort(out)
		return out, err
	}
	var err error
	if o.Same, err = lines(same); err != nil {
		return o, err
	}
	if o.Different, err = lines(different); err != nil {
		return o, err
	}
	o.Sums, err = lines(sums)
	return o, err
})

// RDDSuite "distinct with known partitioner preserves partitioning":
// distinct() of a sortByKey'd dataset keeps its range partitioner and
// deduplicates where it is (its job: sortByKey's map stage and the
// result), distinct(5) does not keep it (its job: its own shuffle's map
// stage and the result; sortByKey's is computed) and both give the same
// records. ReduceByKey without a count over the same input keeps the
// range partitioner too and adds no stage but the result's (Spark's
// defaultPartitioner: reduceByKey() after sortByKey() does not shuffle).
func TestRDDSuiteDistinctWithKnownPartitioner(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		log := stagesOf(fc)
		mark := log.mark()
		o, err := distinctKnownJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Sorted == "None" || o.Distinct != o.Sorted || o.Distinct5 == o.Sorted || o.Reduced != o.Sorted {
			t.Errorf("partitioners: sortByKey %s, distinct() %s, distinct(5) %s, reduceByKey() %s; want distinct() and reduceByKey() to keep sortByKey's, distinct(5) another",
				o.Sorted, o.Distinct, o.Distinct5, o.Reduced)
		}
		var want, sums []string
		for k := range 10 {
			want = append(want, fmt.Sprintf("%d %d", k, k))
			sums = append(sums, fmt.Sprintf("%d %d", k, 10*k))
		}
		if !slices.Equal(o.Same, want) || !slices.Equal(o.Different, want) {
			t.Errorf("distinct() = %v, distinct(5) = %v, want %v", o.Same, o.Different, want)
		}
		if !slices.Equal(o.Sums, sums) {
			t.Errorf("reduceByKey() = %v, want %v", o.Sums, sums)
		}
		// sortByKey samples its input in a job of its own (one stage)
		if got, want := log.since(t, mark, distinctKnownJob.Name(), 4), []string{"sortByKey 1", "collect 2", "collect 2", "collect 1"}; !slices.Equal(got, want) {
			t.Errorf("jobs and their stages %v, want %v (distinct() and reduceByKey() add no shuffle)", got, want)
		}
	})
}
