package dataset_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

// bodyRuns counts how often a body ran in this process (TestValueIsFrozenOnTheDriver).
var bodyRuns atomic.Int64

// nondeterministic builds 2 partitions on the driver and 3 on executors,
// as a body reading something from outside without freezing it would: the
// graph differs in every run, however many ran before (-count=N).
var nondeterministic = dataset.Job("test.nondeterministic", func(b *dataset.Builder, _ int) error {
	parts := 3
	if b.Driver() {
		parts = 2
	}
	xs := dataset.Parallelize(b, []int{1, 2, 3, 4}, parts)
	_, err := dataset.Count(dataset.Map(xs, func(x int) int { return x * 2 }))
	return err
})

func TestGraphMismatchFailsTheTaskNamingTheFirstDifferingNode(t *testing.T) {
	fc := localContext(t, "flint.task.maxFailures", "1")
	_, err := nondeterministic.Run(context.Background(), fc, 0)
	if err == nil {
		t.Fatal("a job whose executors rebuild another graph succeeded")
	}
	for _, want := range []string{"graph mismatch", `job "test.nondeterministic" at node 0`,
		"the driver built parallelize@dataset/mismatch_test.go:", "int p=2", "this executor built parallelize@dataset/mismatch_test.go:", "int p=3"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q lacks %q", err, want)
		}
	}
}

var frozen = dataset.JobResult("test.frozen", func(b *dataset.Builder, _ int) (int64, error) {
	parts := dataset.Value(b, "parts", func() int { return 2 + int(bodyRuns.Add(1)) })
	xs := dataset.Parallelize(b, []int{1, 2, 3, 4, 5}, parts)
	return dataset.Count(dataset.Filter(xs, func(x int) bool { return x%2 == 1 }))
})

func TestValueIsFrozenOnTheDriver(t *testing.T) {
	fc := localContext(t, "flint.task.maxFailures", "1")
	n, err := frozen.Run(context.Background(), fc, 0)
	if err != nil || n != 3 {
		t.Fatalf("count = %d, %v; want 3 (the driver's value replayed on executors)", n, err)
	}
}

type apiOut struct {
	Take     []int64
	First    int64
	Sum      int64
	Fold     int64
	Distinct []int64
	Sorted   []int64
	Desc     []int64
	ByKey    map[int64]int64
	Groups   int
	Outer    int
	Union    int64
	Coal     int
	Repart   int64
}

var api = dataset.JobResult("test.api", func(b *dataset.Builder, n int64) (apiOut, error) {
	var o apiOut
	var err error
	xs := dataset.Range(b, 0, n, 5)
	if o.Take, err = dataset.Take(xs, 7); err != nil {
		return o, err
	}
	if o.First, _, err = dataset.First(dataset.Filter(xs, func(x int64) bool { return x > 50 })); err != nil {
		return o, err
	}
	if o.Sum, _, err = dataset.Reduce(xs, func(a, b int64) int64 { return a + b }); err != nil {
		return o, err
	}
	if o.Fold, err = dataset.Fold(xs, 0, func(a, b int64) int64 { return max(a, b) }); err != nil {
		return o, err
	}
	mod := dataset.Map(xs, func(x int64) int64 { return x % 10 })
	if o.Distinct, err = dataset.Collect(dataset.Sort(dataset.Distinct(mod, 3), true, 2)); err != nil {
		return o, err
	}
	rev := dataset.Map(xs, func(x int64) int64 { return (x * 7919) % n })
	if o.Sorted, err = dataset.Collect(dataset.SortBy(rev, func(x int64) int64 { return x }, true, 4)); err != nil {
		return o, err
	}
	if o.Desc, err = dataset.Collect(dataset.Sort(rev, false, 3)); err != nil {
		return o, err
	}
	kv := dataset.KeyBy(xs, func(x int64) int64 { return x % 4 })
	if o.ByKey, err = dataset.CountByKey(kv); err != nil {
		return o, err
	}
	g, err := dataset.Collect(dataset.GroupByKey(kv, 2))
	o.Groups = len(g)
	if err != nil {
		return o, err
	}
	other := dataset.KeyBy(dataset.Range(b, 2, 6, 2), func(x int64) int64 { return x })
	full, err := dataset.Collect(dataset.FullOuterJoin(kv, other, 3))
	o.Outer = len(full)
	if err != nil {
		return o, err
	}
	if o.Union, err = dataset.Count(dataset.Union(xs, xs, dataset.Range(b, 0, 3, 1))); err != nil {
		return o, err
	}
	o.Coal = dataset.Coalesce(xs, 2).Partitions()
	o.Repart, err = dataset.Count(dataset.Repartition(xs, 3))
	return o, err
})

func TestActionsAndWideOperations(t *testing.T) {
	fc := localContext(t)
	const n = 200
	o, err := api.Run(context.Background(), fc, n)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %+v", what, o)
		}
	}
	check("take", len(o.Take) == 7 && o.Take[0] == 0 && o.Take[6] == 6)
	check("first", o.First == 51)
	check("reduce", o.Sum == n*(n-1)/2)
	check("fold", o.Fold == n-1)
	check("distinct", len(o.Distinct) == 10 && o.Distinct[0] == 0 && o.Distinct[9] == 9)
	ok := len(o.Sorted) == n && len(o.Desc) == n
	for i := 1; ok && i < n; i++ {
		ok = o.Sorted[i-1] <= o.Sorted[i] && o.Desc[i-1] >= o.Desc[i]
	}
	check("sorted", ok)
	check("countByKey", len(o.ByKey) == 4 && o.ByKey[0] == n/4)
	check("groupByKey", o.Groups == 4)
	// keys 0..3 from the left (50 values each) against 2..5 on the right:
	// 0 and 1 left-only (100 rows), 2 and 3 matched (100), 4 and 5 right-only (2)
	check("fullOuterJoin", o.Outer == 202)
	check("union", o.Union == 2*n+3)
	check("coalesce", o.Coal == 2)
	check("repartition", o.Repart == n)
}

var failing = dataset.Job("test.failing", func(b *dataset.Builder, _ int) error {
	_, err := dataset.Count(dataset.TextFile(b, "/no/such/input/file"))
	return err
})

func TestAMissingInputFailsTheActionBeforeAnyTask(t *testing.T) {
	fc := localContext(t)
	_, err := failing.Run(context.Background(), fc, 0)
	if err == nil || !strings.Contains(err.Error(), "/no/such/input/file") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("err = %v", err)
	}
}
