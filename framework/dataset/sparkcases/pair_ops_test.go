package sparkcases_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

var intCodec = recordcodec.For[int]()

// Ported from Spark's PairRDDFunctionsSuite (core/src/test/scala/org/
// apache/spark/rdd): the inputs and the asserted outputs are Spark's.

type kv = dataset.KV[int, int]

type kc = dataset.KV[int, string]

// runJob runs j on fc, failing the test on an error.
func runJob[R any](t *testing.T, fc *framework.Context, j *dataset.JobDef[int, R]) R {
	t.Helper()
	r, err := j.Run(t.Context(), fc, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sortedStrings formats every record and sorts the lines: Spark's
// collect().toSet comparisons, for any record type.
func sortedStrings[T any](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	slices.Sort(out)
	return out
}

func wantLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func pairs1(b *dataset.Builder) dataset.Dataset[kv] {
	return dataset.Parallelize(b, []kv{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 2, Value: 1}, {Key: 3, Value: 1}}, 0)
}

func pairs2(b *dataset.Builder) dataset.Dataset[kc] {
	return dataset.Parallelize(b, []kc{{Key: 1, Value: "x"}, {Key: 2, Value: "y"}, {Key: 2, Value: "z"}, {Key: 4, Value: "w"}}, 0)
}

func pairs3(b *dataset.Builder) dataset.Dataset[kc] {
	return dataset.Parallelize(b, []kc{{Key: 1, Value: "a"}, {Key: 3, Value: "b"}, {Key: 4, Value: "c"}, {Key: 4, Value: "d"}}, 0)
}

var groupWith3Job = dataset.JobResult("test.ops.groupwith3", func(b *dataset.Builder, _ int) ([]string, error) {
	g, err := dataset.Collect(dataset.CoGroup3(pairs1(b), pairs2(b), pairs3(b), 0))
	return sortedStrings(g), err
})

var groupWith4Job = dataset.JobResult("test.ops.groupwith4", func(b *dataset.Builder, _ int) ([]string, error) {
	four := dataset.Parallelize(b, []kc{{Key: 2, Value: "@"}}, 0)
	g, err := dataset.Collect(dataset.CoGroup4(pairs1(b), pairs2(b), pairs3(b), four, 0))
	return sortedStrings(g), err
})

// Spark: groupWith3 and groupWith4.
func TestCoGroup3And4(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		wantLines(t, "cogroup of 3", runJob(t, fc, groupWith3Job),
			"{1 {[1 2] [x] [a]}}", "{2 {[1] [y z] []}}", "{3 {[1] [] [b]}}", "{4 {[] [w] [c d]}}")
		wantLines(t, "cogroup of 4", runJob(t, fc, groupWith4Job),
			"{1 {[1 2] [x] [a] []}}", "{2 {[1] [y z] [] [@]}}", "{3 {[1] [] [b] []}}", "{4 {[] [w] [c d] []}}")
	})
}

var subtractJob = dataset.JobResult("test.ops.subtract", func(b *dataset.Builder, _ int) ([2][]string, error) {
	a := dataset.Parallelize(b, []int{1, 2, 3}, 2)
	c := dataset.Subtract(a, dataset.Parallelize(b, []int{2, 3, 4}, 4), 0)
	got, err := dataset.Collect(c)
	return [2][]string{sortedStrings(got), {fmt.Sprint(c.Partitions())}}, err
})

// modPartitioner5 sends key k (encoded with recordcodec.For[int]) to
// partition k, as the Spark test's Partitioner does.
type modPartitioner5 struct{}

func (modPartitioner5) NumPartitions() int { return 5 }
func (modPartitioner5) Name() string       { return "key-as-partition(5)" }
func (modPartitioner5) Partition(key []byte) int {
	k, err := intCodec.Decode(key)
	if err != nil {
		panic(err)
	}
	return k
}

var subtractByKeyJob = dataset.JobResult("test.ops.subtractbykey", func(b *dataset.Builder, _ int) ([]string, error) {
	a := dataset.Parallelize(b, []kc{{Key: 1, Value: "a"}, {Key: 1, Value: "a"}, {Key: 2, Value: "b"}, {Key: 3, Value: "c"}}, 2)
	other := dataset.Parallelize(b, []dataset.KV[int, int]{{Key: 2, Value: 20}, {Key: 3, Value: 30}, {Key: 4, Value: 40}}, 4)
	c := dataset.SubtractByKey(a, other, 0)
	got, err := dataset.Collect(c)
	// with narrow dependency: a partitioned by the test's partitioner
	// keeps it
	pa := dataset.PartitionBy(a, modPartitioner5{})
	d := dataset.SubtractByKey(pa, dataset.Parallelize(b, []kc{{Key: 2, Value: "b"}, {Key: 3, Value: "cc"}, {Key: 4, Value: "d"}}, 4), 0)
	got2, err2 := dataset.Collect(d)
	out := append(sortedStrings(got), fmt.Sprintf("parts=%d", c.Partitions()), "|")
	out = append(out, sortedStrings(got2)...)
	return append(out, fmt.Sprintf("partitioner=%v", d.Partitioner())), errorsJoin(err, err2)
})

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Spark: subtract, subtractByKey, subtractByKey with narrow dependency.
func TestSubtract(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if got := runJob(t, fc, subtractJob); !slices.Equal(got[0], []string{"1"}) || got[1][0] != "2" {
			t.Fatalf("subtract = %v with %v partitions, want [1] with a's 2", got[0], got[1])
		}
		got := runJob(t, fc, subtractByKeyJob)
		want := []string{"{1 a}", "{1 a}", "parts=2", "|", "{1 a}", "{1 a}", "partitioner={}"}
		if !slices.Equal(got, want) {
			t.Fatalf("subtractByKey = %q, want %q", got, want)
		}
	})
}

var foldByKeyJob = dataset.JobResult("test.ops.foldbykey", func(b *dataset.Builder, _ int) ([]string, error) {
	in := dataset.Parallelize(b, []kv{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 3}, {Key: 1, Value: 1}, {Key: 2, Value: 1}}, 0)
	sums, err := dataset.Collect(dataset.FoldByKey(in, 0, func(a, b int) int { return a + b }, 0))
	if err != nil {
		return nil, err
	}
	// with a mutable result type, folded in place
	bufs := dataset.Cache(dataset.MapValues(in, func(v int) []int { return []int{v} }))
	folded, err := dataset.Collect(dataset.FoldByKey(bufs, []int{}, func(a, b []int) []int { return append(a, b...) }, 0))
	if err != nil {
		return nil, err
	}
	for i := range folded {
		slices.Sort(folded[i].Value)
	}
	orig, err := dataset.Collect(bufs)
	return append(append(sortedStrings(sums), sortedStrings(folded)...), sortedStrings(orig)...), err
})

// Spark: foldByKey, foldByKey with mutable result type.
func TestFoldByKey(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, foldByKeyJob)
		want := []string{"{1 7}", "{2 1}", "{1 [1 1 2 3]}", "{2 [1]}", "{1 [1]}", "{1 [1]}", "{1 [2]}", "{1 [3]}", "{2 [1]}"}
		if !slices.Equal(got, want) {
			t.Fatalf("foldByKey = %q, want %q", got, want)
		}
	})
}

var lookupJob = dataset.JobResult("test.ops.lookup", func(b *dataset.Builder, _ int) ([]string, error) {
	pairs := dataset.Parallelize(b, []kv{{Key: 1, Value: 2}, {Key: 3, Value: 4}, {Key: 5, Value: 6}, {Key: 5, Value: 7}}, 0)
	shuffled := dataset.PartitionBy(pairs, dataset.HashPartitioner(2))
	var out []string
	for _, ds := range []dataset.Dataset[kv]{pairs, shuffled} {
		for _, k := range []int{1, 5, -1} {
			vs, err := dataset.Lookup(ds, k)
			if err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprint(vs))
		}
	}
	return append(out, fmt.Sprint(pairs.Partitioner() == nil), shuffled.Partitioner().Name()), nil
})

// badPartitioner gives negative partitions for negative keys, as the
// Spark test's hashCode % 2 does.
type badPartitioner struct{}

func (badPartitioner) NumPartitions() int { return 2 }
func (badPartitioner) Name() string       { return "bad" }
func (badPartitioner) Partition(key []byte) int {
	k, _ := intCodec.Decode(key)
	return k % 2
}

var lookupBadJob = dataset.JobResult("test.ops.lookup-bad", func(b *dataset.Builder, _ int) ([]int, error) {
	shuffled := dataset.PartitionBy(dataset.Parallelize(b, []kv{{Key: 1, Value: 2}, {Key: 3, Value: 4}, {Key: 5, Value: 6}, {Key: 5, Value: 7}}, 0), badPartitioner{})
	one, err := dataset.Lookup(shuffled, 1)
	if err != nil || !slices.Equal(one, []int{2}) {
		return nil, fmt.Errorf("lookup(1) = %v, %v; want [2]", one, err)
	}
	return dataset.Lookup(shuffled, -1)
})

// Spark: lookup, lookup with partitioner, lookup with bad partitioner.
func TestLookup(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got := runJob(t, fc, lookupJob)
		want := []string{"[2]", "[6 7]", "[]", "[2]", "[6 7]", "[]", "true", "hash(2)"}
		if !slices.Equal(got, want) {
			t.Fatalf("lookups = %q, want %q", got, want)
		}
		_, err := lookupBadJob.Run(t.Context(), fc, 0)
		if err == nil || !strings.Contains(err.Error(), "dataset: Lookup: partitioner bad gives key -1 partition -1 of 2") {
			t.Fatalf("lookup of -1 with a bad partitioner: %v, want the partition named", err)
		}
	})
}

var collectAsMapJob = dataset.JobResult("test.ops.collectasmap", func(b *dataset.Builder, _ int) (map[int]int, error) {
	pairs := dataset.Parallelize(b, []kv{{Key: 1, Value: 1}, {Key: 1, Value: 2}, {Key: 1, Value: 3}, {Key: 1, Value: 1}, {Key: 2, Value: 1}}, 0)
	return dataset.CollectAsMap(dataset.ReduceByKey(pairs, func(a, b int) int { return a + b }, 0))
})

var countByValueJob = dataset.JobResult("test.ops.countbyvalue", func(b *dataset.Builder, _ int) (map[string]int64, error) {
	return dataset.CountByValue(dataset.Parallelize(b, []string{"a", "b", "a", "c", "a", "b"}, 3))
})

var flatMapValuesJob = dataset.JobResult("test.ops.flatmapvalues", func(b *dataset.Builder, _ int) ([]string, error) {
	in := dataset.PartitionBy(dataset.Parallelize(b, []kc{{Key: 1, Value: "ab"}, {Key: 2, Value: ""}, {Key: 3, Value: "c"}}, 2), dataset.HashPartitioner(3))
	out := dataset.FlatMapValues(in, func(s string, yield func(rune)) {
		for _, r := range s {
			yield(r)
		}
	})
	got, err := dataset.Collect(out)
	return append(sortedStrings(got), out.Partitioner().Name()), err
})

// Spark: reduceByKey with collectAsMap; countByValue and flatMapValues
// from their documented semantics.
func TestCollectAsMapCountByValueFlatMapValues(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if got := runJob(t, fc, collectAsMapJob); !maps.Equal(got, map[int]int{1: 7, 2: 1}) {
			t.Fatalf("collectAsMap = %v, want map[1:7 2:1]", got)
		}
		if got := runJob(t, fc, countByValueJob); !maps.Equal(got, map[string]int64{"a": 3, "b": 2, "c": 1}) {
			t.Fatalf("countByValue = %v", got)
		}
		want := []string{"{1 97}", "{1 98}", "{3 99}", "hash(3)"}
		if got := runJob(t, fc, flatMapValuesJob); !slices.Equal(got, want) {
			t.Fatalf("flatMapValues = %q, want %q", got, want)
		}
	})
}
