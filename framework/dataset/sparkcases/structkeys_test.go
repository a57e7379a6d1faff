package sparkcases_test

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// dayKey is a struct key, as a Spark job's case class key.
type dayKey struct {
	User string
	Day  int32
}

// gobPrimer is a type only the driver gob-encodes, so the driver's gob
// type ids differ from the executors'.
type gobPrimer struct{ A, B, C int64 }

type structKeysOut struct {
	Sums    []dataset.KV[dayKey, int]
	Lookups map[string][]int
}

var structKeysJob = dataset.JobResult("sparkcases.structkeys", func(b *dataset.Builder, _ struct{}) (structKeysOut, error) {
	out := structKeysOut{Lookups: map[string][]int{}}
	recs := structKeyRecords()
	ds := dataset.Parallelize(b, recs, 6)
	sums, err := dataset.Collect(dataset.ReduceByKey(ds, func(a, b int) int { return a + b }, 4))
	if err != nil {
		return out, err
	}
	out.Sums = sums
	parted := dataset.PartitionBy(ds, dataset.HashPartitioner(4))
	for _, k := range []dayKey{{"u0", 0}, {"u3", 1}, {"u6", 2}} {
		vs, err := dataset.Lookup(parted, k)
		if err != nil {
			return out, err
		}
		slices.Sort(vs)
		out.Lookups[fmt.Sprint(k)] = vs
	}
	return out, nil
})

func structKeyRecords() []dataset.KV[dayKey, int] {
	var recs []dataset.KV[dayKey, int]
	for i := range 300 {
		recs = append(recs, dataset.KV[dayKey, int]{Key: dayKey{fmt.Sprintf("u%d", i%9), int32(i % 3)}, Value: i})
	}
	return recs
}

// Struct keys group and look up alike whichever process encodes them: the
// shuffle hashes a key's bytes, and the driver (Lookup picks the partition
// there) and every executor must agree on them. With gob as the struct
// codec the driver's encoding differed from the executors' (gob numbers
// types in the order a process meets them) and Lookup searched the wrong
// partition.
func TestStructKeysGroupAndLookUpAcrossProcesses(t *testing.T) {
	if err := gob.NewEncoder(new(bytes.Buffer)).Encode(gobPrimer{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	want := map[dayKey]int{}
	lookups := map[string][]int{}
	for _, r := range structKeyRecords() {
		want[r.Key] += r.Value
		lookups[fmt.Sprint(r.Key)] = append(lookups[fmt.Sprint(r.Key)], r.Value)
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		o, err := structKeysJob.Run(t.Context(), fc, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[dayKey]int{}
		for _, kv := range o.Sums {
			if _, dup := got[kv.Key]; dup {
				t.Errorf("key %v reduced into two records", kv.Key)
			}
			got[kv.Key] = kv.Value
		}
		if !maps.Equal(got, want) {
			t.Errorf("sums by struct key: got %v, want %v", got, want)
		}
		for k, vs := range o.Lookups {
			w := slices.Clone(lookups[k])
			slices.Sort(w)
			if !slices.Equal(vs, w) {
				t.Errorf("Lookup(%s) = %v, want %v", k, vs, w)
			}
		}
		if len(o.Lookups) != 3 {
			t.Errorf("%d lookups, want 3", len(o.Lookups))
		}
	})
}
