package sparkcases_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// basicOut is what RDDSuite's "basic operations" asserts, as far as
// Flint's operations express it.
type basicOut struct {
	Collected, Filtered, FlatMapped, Unioned, PartSums []int
	Strings                                            []string
	Keyed                                              []dataset.KV[string, int]
	DistinctCount, DistinctCount2                      int64
	Sum, Folded                                        int
	SumOK, EmptyOK                                     bool
	Partitions                                         int
}

var basicJob = dataset.JobResult("sparkcases.rdd.basic", func(b *dataset.Builder, _ struct{}) (basicOut, error) {
	var o basicOut
	var err error
	nums := dataset.Parallelize(b, []int{1, 2, 3, 4}, 2)
	o.Partitions = nums.Partitions()
	dups := dataset.Parallelize(b, []int{1, 1, 2, 2, 3, 3, 4, 4}, 2)
	add := func(x, y int) int { return x + y }
	steps := []func() error{
		func() (err error) { o.Collected, err = dataset.Collect(nums); return },
		func() (err error) { o.DistinctCount, err = dataset.Count(dataset.Distinct(dups, 0)); return },
		func() (err error) { o.DistinctCount2, err = dataset.Count(dataset.Distinct(dups, 2)); return },
		func() (err error) { o.Sum, o.SumOK, err = dataset.Reduce(nums, add); return },
		func() (err error) { o.Folded, err = dataset.Fold(nums, 0, add); return },
		func() (err error) { o.Strings, err = dataset.Collect(dataset.Map(nums, strconv.Itoa)); return },
		func() (err error) {
			o.Filtered, err = dataset.Collect(dataset.Filter(nums, func(x int) bool { return x > 2 }))
			return
		},
		func() (err error) {
			o.FlatMapped, err = dataset.Collect(dataset.FlatMap(nums, func(x int, yield func(int)) {
				for i := 1; i <= x; i++ {
					yield(i)
				}
			}))
			return
		},
		func() (err error) { o.Unioned, err = dataset.Collect(dataset.Union(nums, nums)); return },
		func() (err error) { o.Keyed, err = dataset.Collect(dataset.KeyBy(nums, strconv.Itoa)); return },
		func() (err error) {
			o.PartSums, err = dataset.Collect(dataset.MapPartitions(nums, func(_ int, records func(func(int) bool), yield func(int)) error {
				s := 0
				records(func(x int) bool { s += x; return true })
				yield(s)
				return nil
			}))
			return
		},
		func() (err error) {
			_, o.EmptyOK, err = dataset.Reduce(dataset.Filter(nums, func(x int) bool { return x > 5 }), add)
			return
		},
	}
	for _, step := range steps {
		if err = step(); err != nil {
			return o, err
		}
	}
	return o, nil
})

// RDDSuite "basic operations": collect, distinct, reduce, fold, map,
// filter, flatMap, union, keyBy and mapPartitions over
// makeRDD(Array(1, 2, 3, 4), 2). Spark throws on reducing an empty RDD;
// Flint's Reduce says so with ok == false.
func TestRDDBasicOperations(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		o, err := basicJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		kv := func(k string, v int) dataset.KV[string, int] { return dataset.KV[string, int]{Key: k, Value: v} }
		checks := []struct {
			what      string
			got, want any
		}{
			{"partitions", o.Partitions, 2},
			{"collect", o.Collected, []int{1, 2, 3, 4}},
			{"distinct().count", o.DistinctCount, int64(4)},
			{"distinct(2).count", o.DistinctCount2, int64(4)},
			{"reduce", [2]any{o.Sum, o.SumOK}, [2]any{10, true}},
			{"fold", o.Folded, 10},
			{"map(toString)", o.Strings, []string{"1", "2", "3", "4"}},
			{"filter(_ > 2)", o.Filtered, []int{3, 4}},
			{"flatMap(1 to x)", o.FlatMapped, []int{1, 1, 2, 1, 2, 3, 1, 2, 3, 4}},
			{"union", o.Unioned, []int{1, 2, 3, 4, 1, 2, 3, 4}},
			{"keyBy(toString)", o.Keyed, []dataset.KV[string, int]{kv("1", 1), kv("2", 2), kv("3", 3), kv("4", 4)}},
			{"mapPartitions(sum)", o.PartSums, []int{3, 7}},
			{"reduce of empty: ok", o.EmptyOK, false},
		}
		for _, c := range checks {
			if !equal(c.got, c.want) {
				t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
			}
		}
	})
}

// equal compares slices, arrays and scalars of comparable elements.
func equal(a, b any) bool {
	switch x := a.(type) {
	case []int:
		return slices.Equal(x, b.([]int))
	case []string:
		return slices.Equal(x, b.([]string))
	case []dataset.KV[string, int]:
		return slices.Equal(x, b.([]dataset.KV[string, int]))
	}
	return a == b
}
