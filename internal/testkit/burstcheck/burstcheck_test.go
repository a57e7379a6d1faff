package burstcheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

// sums of 0..n-1 by key i % 101, written out by hand for n = 103:
// keys 0 and 1 get i and i+101, the others i alone.
func sums103(factor int64) []dataset.KV[int, int64] {
	var kvs []dataset.KV[int, int64]
	for k := range 101 {
		v := int64(k)
		if k < 2 {
			v += int64(k + 101)
		}
		kvs = append(kvs, dataset.KV[int, int64]{Key: k, Value: v * factor})
	}
	return kvs
}

func good() Report {
	return Report{First: sums103(1), Second: sums103(2), AddedFirst: []string{"0", "1"}, AddedSecond: []string{"2"},
		Removed: map[string]string{"0": Released, "1": Released}, MapTasks: 8}
}

// A good run passes both checks; each defect is reported, naming it.
func TestChecks(t *testing.T) {
	rec := &recorder{TB: t}
	CheckSums(rec, good(), 103)
	CheckReleased(rec, good(), 2)
	if len(rec.errs) > 0 {
		t.Fatalf("a good run: %v", rec.errs)
	}
	for name, c := range map[string]struct {
		mutate func(*Report)
		want   string
	}{
		"wrong sum":       {func(r *Report) { r.Second[5].Value++ }, "action 2: sums"},
		"missing key":     {func(r *Report) { r.First = r.First[1:] }, "action 1: sums"},
		"one executor":    {func(r *Report) { r.AddedFirst = r.AddedFirst[:1] }, "want 2 (maxExecutors)"},
		"lost, not freed": {func(r *Report) { r.Removed["1"] = "executor lost" }, `executor 1 removed for "executor lost"`},
		"none after":      {func(r *Report) { r.AddedSecond = nil }, "no executor launched for the second action"},
		"recomputed":      {func(r *Report) { r.MapTasks = 16 }, "ended 16 tasks, want its 8"},
		"a failure":       {func(r *Report) { r.Failures = []string{"task 3 FAILED"} }, "task 3 FAILED"},
	} {
		r := good()
		r.Removed = map[string]string{"0": Released, "1": Released}
		c.mutate(&r)
		rec := &recorder{TB: t}
		CheckSums(rec, r, 103)
		CheckReleased(rec, r, 2)
		if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], c.want) {
			t.Errorf("%s: errors %q, want one containing %q", name, rec.errs, c.want)
		}
	}
}

// Parse reads the last line; a line that is not a report is an error
// showing the output.
func TestParse(t *testing.T) {
	r, err := Parse("log line\n" + `{"First":[{"Key":3,"Value":7}],"AddedFirst":["0"],"MapTasks":8,"Removed":{"0":"x"}}` + "\n")
	if err != nil || len(r.First) != 1 || r.First[0] != (dataset.KV[int, int64]{Key: 3, Value: 7}) || r.MapTasks != 8 || r.Removed["0"] != "x" {
		t.Fatalf("Parse = %+v, %v", r, err)
	}
	if _, err := Parse("panic: boom\n"); err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Fatalf("Parse of no report: %v", err)
	}
}
