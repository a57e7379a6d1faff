package sparkcases_test

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// keyMod is Spark's test partitioner "getPartition(key) = key": an int
// key k goes to partition k mod n (keys decoded from their record-codec
// encoding, as every Partitioner gets them).
type keyMod int

func (p keyMod) NumPartitions() int { return int(p) }
func (p keyMod) Name() string       { return fmt.Sprintf("keyMod(%d)", int(p)) }
func (p keyMod) Partition(key []byte) int {
	k, err := recordcodec.For[int]().Decode(key)
	if err != nil {
		panic(err)
	}
	return k % int(p)
}

// withOut is one ...With case: its records as "partition key value"
// lines, sorted, and the result's partitioner's name.
type withOut struct {
	Op          string
	Lines       []string
	Partitioner string
}

// placed collects ds as "partition key value" lines (value formatted by
// show), sorted.
func placed[V any](op string, ds dataset.Dataset[dataset.KV[int, V]], show func(V) string) (withOut, error) {
	o := withOut{Op: op}
	if p := ds.Partitioner(); p != nil {
		o.Partitioner = p.Name()
	}
	lines := dataset.MapPartitionsWithIndex(ds, func(i int, recs iter.Seq[dataset.KV[int, V]], yield func(string)) error {
		for kv := range recs {
			yield(fmt.Sprintf("%d %d %s", i, kv.Key, show(kv.Value)))
		}
		return nil
	})
	got, err := dataset.Collect(lines)
	slices.Sort(got)
	o.Lines = got
	return o, err
}

// sorted formats xs sorted, as Spark's tests compare groups as sets.
func sorted[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}

func opt[T any](o dataset.Opt[T]) string {
	if !o.Ok {
		return "None"
	}
	return fmt.Sprintf("Some(%v)", o.Value)
}

var withJob = dataset.JobResult("sparkcases.with", func(b *dataset.Builder, _ struct{}) ([]withOut, error) {
	p := keyMod(2)
	type ii = dataset.KV[int, int]
	type is = dataset.KV[int, string]
	show := func(v int) string { return fmt.Sprint(v) }
	// PairRDDFunctionsSuite's inputs
	rdd1 := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 2, Value: 1}, {Key: 3, Value: 1}}, 2)
	rdd2 := dataset.Parallelize(b, []is{{Key: 1, Value: "x"}, {Key: 2, Value: "y"}, {Key: 2, Value: "z"}, {Key: 4, Value: "w"}}, 2)
	rdd3 := dataset.Parallelize(b, []is{{Key: 1, Value: "a"}, {Key: 3, Value: "b"}, {Key: 4, Value: "c"}, {Key: 4, Value: "d"}}, 2)
	rdd4 := dataset.Parallelize(b, []is{{Key: 2, Value: "@"}}, 1)
	var out []withOut
	add := func(o withOut, err error) error {
		out = append(out, o)
		return err
	}
	sum := func(x, y int) int { return x + y }
	steps := []func() error{
		func() error {
			pairs := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 1}, {Key: 0, Value: 1}}, 2)
			return add(placed("ReduceByKeyWith", dataset.ReduceByKeyWith(pairs, sum, p), show))
		},
		func() error {
			pairs := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 3}, {Key: 1, Value: 1}, {Key: 2, Value: 1}}, 2)
			return add(placed("FoldByKeyWith", dataset.FoldByKeyWith(pairs, 0, sum, p), show))
		},
		func() error {
			pairs := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 1}, {Key: 3, Value: 2}, {Key: 5, Value: 1}, {Key: 5, Value: 3}}, 2)
			sets := dataset.AggregateByKeyWith(pairs, map[int]bool{},
				func(s map[int]bool, v int) map[int]bool { s[v] = true; return s },
				func(a, c map[int]bool) map[int]bool {
					for k := range c {
						a[k] = true
					}
					return a
				}, p)
			return add(placed("AggregateByKeyWith", sets, func(s map[int]bool) string {
				var ks []int
				for k := range s {
					ks = append(ks, k)
				}
				return sorted(ks)
			}))
		},
		func() error {
			pairs := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 3}, {Key: 2, Value: 1}}, 2)
			agg := dataset.Aggregator[int, []int]{CreateCombiner: func(v int) []int { return []int{v} },
				MergeValue:     func(c []int, v int) []int { return append(c, v) },
				MergeCombiners: func(a, c []int) []int { return append(a, c...) }}
			return add(placed("CombineByKeyWith", dataset.CombineByKeyWith(pairs, agg, p), sorted[int]))
		},
		func() error {
			pairs := dataset.Parallelize(b, []ii{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 3}, {Key: 2, Value: 1}}, 2)
			return add(placed("GroupByKeyWith", dataset.GroupByKeyWith(pairs, p), sorted[int]))
		},
		func() error {
			return add(placed("JoinWith", dataset.JoinWith(rdd1, rdd2, p), func(v dataset.Pair[int, string]) string {
				return fmt.Sprintf("(%d,%s)", v.Left, v.Right)
			}))
		},
		func() error {
			return add(placed("LeftOuterJoinWith", dataset.LeftOuterJoinWith(rdd1, rdd2, p), func(v dataset.Pair[int, dataset.Opt[string]]) string {
				return fmt.Sprintf("(%d,%s)", v.Left, opt(v.Right))
			}))
		},
		func() error {
			return add(placed("RightOuterJoinWith", dataset.RightOuterJoinWith(rdd1, rdd2, p), func(v dataset.Pair[dataset.Opt[int], string]) string {
				return fmt.Sprintf("(%s,%s)", opt(v.Left), v.Right)
			}))
		},
		func() error {
			return add(placed("FullOuterJoinWith", dataset.FullOuterJoinWith(rdd1, rdd2, p), func(v dataset.Pair[dataset.Opt[int], dataset.Opt[string]]) string {
				return fmt.Sprintf("(%s,%s)", opt(v.Left), opt(v.Right))
			}))
		},
		func() error {
			return add(placed("CoGroupWith", dataset.CoGroupWith(rdd1, rdd2, p), func(g dataset.Grouped[int, string]) string {
				return fmt.Sprintf("(%s,%s)", sorted(g.Left), sorted(g.Right))
			}))
		},
		func() error {
			return add(placed("CoGroup3With", dataset.CoGroup3With(rdd1, rdd2, rdd3, p), func(g dataset.Grouped3[int, string, string]) string {
				return fmt.Sprintf("(%s,%s,%s)", sorted(g.First), sorted(g.Second), sorted(g.Third))
			}))
		},
		func() error {
			return add(placed("CoGroup4With", dataset.CoGroup4With(rdd1, rdd2, rdd3, rdd4, p), func(g dataset.Grouped4[int, string, string, string]) string {
				return fmt.Sprintf("(%s,%s,%s,%s)", sorted(g.First), sorted(g.Second), sorted(g.Third), sorted(g.Fourth))
			}))
		},
		func() error {
			a := dataset.Parallelize(b, []is{{Key: 1, Value: "a"}, {Key: 1, Value: "a"}, {Key: 2, Value: "b"}, {Key: 3, Value: "c"}}, 2)
			c := dataset.Parallelize(b, []ii{{Key: 2, Value: 20}, {Key: 3, Value: 30}, {Key: 4, Value: 40}}, 4)
			return add(placed("SubtractByKeyWith", dataset.SubtractByKeyWith(a, c, p), func(s string) string { return s }))
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return out, err
		}
	}
	return out, nil
})

// Each wide operation's ...With form, given Spark's test partitioner
// (key k to partition k mod 2: PairRDDFunctionsSuite "reduceByKey with
// partitioner", "subtractByKey with p" and the same suite's inputs for
// foldByKey, aggregateByKey, groupByKey, join, the outer joins and
// cogroup of 2, 3 and 4), gives Spark's records, each in the partition
// the partitioner names, and keeps the partitioner.
func TestWithFormsUseTheirPartitioner(t *testing.T) {
	want := map[string][]string{
		"ReduceByKeyWith":    {"0 0 1", "1 1 4"},
		"FoldByKeyWith":      {"0 2 1", "1 1 7"},
		"AggregateByKeyWith": {"1 1 [1]", "1 3 [2]", "1 5 [1 3]"},
		"CombineByKeyWith":   {"0 2 [1]", "1 1 [1 2 3]"},
		"GroupByKeyWith":     {"0 2 [1]", "1 1 [1 2 3]"},
		"JoinWith":           {"0 2 (1,y)", "0 2 (1,z)", "1 1 (1,x)", "1 1 (2,x)"},
		"LeftOuterJoinWith":  {"0 2 (1,Some(y))", "0 2 (1,Some(z))", "1 1 (1,Some(x))", "1 1 (2,Some(x))", "1 3 (1,None)"},
		"RightOuterJoinWith": {"0 2 (Some(1),y)", "0 2 (Some(1),z)", "0 4 (None,w)", "1 1 (Some(1),x)", "1 1 (Some(2),x)"},
		"FullOuterJoinWith": {"0 2 (Some(1),Some(y))", "0 2 (Some(1),Some(z))", "0 4 (None,Some(w))",
			"1 1 (Some(1),Some(x))", "1 1 (Some(2),Some(x))", "1 3 (Some(1),None)"},
		"CoGroupWith":       {"0 2 ([1],[y z])", "0 4 ([],[w])", "1 1 ([1 2],[x])", "1 3 ([1],[])"},
		"CoGroup3With":      {"0 2 ([1],[y z],[])", "0 4 ([],[w],[c d])", "1 1 ([1 2],[x],[a])", "1 3 ([1],[],[b])"},
		"CoGroup4With":      {"0 2 ([1],[y z],[],[@])", "0 4 ([],[w],[c d],[])", "1 1 ([1 2],[x],[a],[])", "1 3 ([1],[],[b],[])"},
		"SubtractByKeyWith": {"1 1 a", "1 1 a"},
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := withJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d cases ran, want %d", len(got), len(want))
		}
		for _, o := range got {
			if w := want[o.Op]; !slices.Equal(o.Lines, w) {
				t.Errorf("%s: partition/key/value %q, want %q", o.Op, o.Lines, w)
			}
			if o.Partitioner != "keyMod(2)" {
				t.Errorf("%s: partitioner %q, want keyMod(2)", o.Op, o.Partitioner)
			}
		}
	})
}
