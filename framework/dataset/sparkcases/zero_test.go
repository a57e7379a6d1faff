package sparkcases_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// zeroOut is what the zero-value cases return.
type zeroOut struct {
	Fold      []int
	Aggregate map[string]int
	ByKey     map[int][]int
}

var zeroJob = dataset.JobResult("sparkcases.zero", func(b *dataset.Builder, _ struct{}) (zeroOut, error) {
	var o zeroOut
	// RDDSuite "fold with op modifying first arg"
	arrays := dataset.Map(dataset.Range(b, -1000, 1000, 10), func(x int64) []int { return []int{int(x)} })
	var err error
	o.Fold, err = dataset.Fold(arrays, []int{0}, func(c, x []int) []int { c[0] += x[0]; return c })
	if err != nil {
		return o, err
	}
	// RDDSuite "aggregate": into a map that mergeElement modifies
	type pair = dataset.KV[string, int]
	pairs := dataset.Parallelize(b, []pair{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "a", Value: 2}, {Key: "c", Value: 5}, {Key: "a", Value: 3}}, 0)
	o.Aggregate, err = dataset.Aggregate(pairs, map[string]int{},
		func(m map[string]int, p pair) map[string]int { m[p.Key] += p.Value; return m },
		func(m1, m2 map[string]int) map[string]int {
			for k, v := range m2 {
				m1[k] += v
			}
			return m1
		})
	if err != nil {
		return o, err
	}
	// PairRDDFunctionsSuite "aggregateByKey": a set per key
	type ip = dataset.KV[int, int]
	ints := dataset.Parallelize(b, []ip{{Key: 1, Value: 1}, {Key: 1, Value: 1}, {Key: 3, Value: 2}, {Key: 5, Value: 1}, {Key: 5, Value: 3}}, 2)
	sets, err := dataset.Collect(dataset.AggregateByKey(ints, map[int]bool{},
		func(s map[int]bool, v int) map[int]bool { s[v] = true; return s },
		func(s1, s2 map[int]bool) map[int]bool { maps.Copy(s1, s2); return s1 }, 0))
	if err != nil {
		return o, err
	}
	o.ByKey = map[int][]int{}
	for _, kv := range sets {
		o.ByKey[kv.Key] = slices.Sorted(maps.Keys(kv.Value))
	}
	return o, nil
})

// Fold, Aggregate and AggregateByKey give every task and every key its
// own copy of the zero value, so functions modifying their first argument
// (Spark's "fold with op modifying first arg", "aggregate" into a mutable
// map, PairRDDFunctionsSuite's "aggregateByKey" into a HashSet) give
// Spark's answers: -1000; a→6, b→2, c→5; 1→[1], 3→[2], 5→[1 3].
func TestRDDZeroValueIsCopiedPerTaskAndKey(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		o, err := zeroJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		if want := -1000; len(o.Fold) != 1 || o.Fold[0] != want {
			t.Errorf("fold(Array(0)) with c(0) += x(0) = %v, want [%d]", o.Fold, want)
		}
		if want := map[string]int{"a": 6, "b": 2, "c": 5}; !maps.Equal(o.Aggregate, want) {
			t.Errorf("aggregate into a map = %v, want %v", o.Aggregate, want)
		}
		want := map[int][]int{1: {1}, 3: {2}, 5: {1, 3}}
		if !maps.EqualFunc(o.ByKey, want, slices.Equal) {
			t.Errorf("aggregateByKey into a set = %v, want %v", o.ByKey, want)
		}
	})
}
