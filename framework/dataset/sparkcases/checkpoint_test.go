package sparkcases_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// ckOut is one checkpoint case: the records before and after the
// checkpoint was written (formatted, in partition order), the partition
// counts, whether the dataset said it was checkpointed before and after,
// and how often the base's closure ran in the action after the
// checkpoint.
type ckOut struct {
	Name                    string
	Before, After           []string
	PartsBefore, PartsAfter int
	CkptBefore, CkptAfter   bool
	BaseRunsAfter           int64
}

// ckCase is CheckpointSuite's testRDD: op over a base of 1..100 in 4
// partitions (through a map counting its runs) is checkpointed; the
// first collect writes it, the second must give the same records, the
// same partitions, and compute nothing of the base.
func ckCase[U any](b *dataset.Builder, name string, op func(dataset.Dataset[int]) dataset.Dataset[U]) (ckOut, error) {
	o := ckOut{Name: name}
	xs := make([]int, 100)
	for i := range xs {
		xs[i] = i + 1
	}
	runs := dataset.Counter(b, "base runs "+name)
	base := dataset.Map(dataset.Parallelize(b, xs, 4), func(x int) int { runs.Add(1); return x })
	ds := dataset.Checkpoint(op(base))
	o.CkptBefore, o.PartsBefore = ds.IsCheckpointed(), ds.Partitions()
	before, err := dataset.Collect(ds)
	if err != nil {
		return o, err
	}
	o.CkptAfter, o.PartsAfter = ds.IsCheckpointed(), ds.Partitions()
	was := runs.Value()
	after, err := dataset.Collect(ds)
	if err != nil {
		return o, err
	}
	o.BaseRunsAfter = runs.Value() - was
	for _, x := range before {
		o.Before = append(o.Before, fmt.Sprint(x))
	}
	for _, x := range after {
		o.After = append(o.After, fmt.Sprint(x))
	}
	return o, nil
}

var checkpointJob = dataset.JobResult("sparkcases.checkpoint", func(b *dataset.Builder, dir string) ([]ckOut, error) {
	b.SetCheckpointDir(dir)
	type kv = dataset.KV[int, int]
	other := func() dataset.Dataset[int] { return dataset.Parallelize(b, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1) }
	keyed := func(ds dataset.Dataset[int]) dataset.Dataset[kv] {
		return dataset.Map(ds, func(x int) kv { return kv{Key: x % 2, Value: 1} })
	}
	add := func(x, y int) int { return x + y }
	var out []ckOut
	cases := []func() (ckOut, error){
		func() (ckOut, error) {
			return ckCase(b, "map", func(d dataset.Dataset[int]) dataset.Dataset[string] { return dataset.Map(d, strconv.Itoa) })
		},
		func() (ckOut, error) {
			return ckCase(b, "flatMap", func(d dataset.Dataset[int]) dataset.Dataset[int] {
				return dataset.FlatMap(d, func(x int, yield func(int)) {
					for i := 1; i <= x; i++ {
						yield(i)
					}
				})
			})
		},
		func() (ckOut, error) {
			return ckCase(b, "filter", func(d dataset.Dataset[int]) dataset.Dataset[int] {
				return dataset.Filter(d, func(x int) bool { return x%2 == 0 })
			})
		},
		func() (ckOut, error) {
			return ckCase(b, "sample", func(d dataset.Dataset[int]) dataset.Dataset[int] { return dataset.Sample(d, 0.5, 0) })
		},
		func() (ckOut, error) { return ckCase(b, "glom", dataset.Glom[int]) },
		func() (ckOut, error) {
			return ckCase(b, "reduceByKey.mapValues", func(d dataset.Dataset[int]) dataset.Dataset[dataset.KV[int, string]] {
				return dataset.MapValues(dataset.ReduceByKey(keyed(d), add, 0), strconv.Itoa)
			})
		},
		func() (ckOut, error) {
			return ckCase(b, "shuffle", func(d dataset.Dataset[int]) dataset.Dataset[kv] {
				return dataset.PartitionBy(keyed(d), dataset.HashPartitioner(2))
			})
		},
		func() (ckOut, error) {
			return ckCase(b, "union", func(d dataset.Dataset[int]) dataset.Dataset[int] { return dataset.Union(d, other()) })
		},
		func() (ckOut, error) {
			return ckCase(b, "cartesian", func(d dataset.Dataset[int]) dataset.Dataset[dataset.Pair[int, int]] {
				return dataset.Cartesian(d, other())
			})
		},
		func() (ckOut, error) {
			return ckCase(b, "coalesce", func(d dataset.Dataset[int]) dataset.Dataset[int] { return dataset.Coalesce(d, 2) })
		},
		func() (ckOut, error) {
			return ckCase(b, "zip", func(d dataset.Dataset[int]) dataset.Dataset[dataset.Pair[int, int]] {
				return dataset.Zip(d, dataset.Map(d, func(x int) int { return x }))
			})
		},
	}
	for _, c := range cases {
		o, err := c()
		out = append(out, o)
		if err != nil {
			return out, fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	return out, nil
})

// CheckpointSuite "basic checkpointing" and testRDD's cases ("RDDs with
// one-to-one dependencies", "ShuffleRDD", "UnionRDD", "CartesianRDD",
// "CoalescedRDD", "ZippedPartitionsRDD"): a checkpointed dataset is
// written after the first action that computes it, says so
// (IsCheckpointed, false before), keeps its records and partition count,
// and a later action computes nothing of its lineage.
func TestCheckpointTruncatesLineage(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := checkpointJob.Run(t.Context(), fc, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 11 {
			t.Fatalf("%d cases ran, want 11", len(got))
		}
		for _, o := range got {
			if o.CkptBefore || !o.CkptAfter {
				t.Errorf("%s: IsCheckpointed %v before the first action and %v after, want false and true", o.Name, o.CkptBefore, o.CkptAfter)
			}
			if !slices.Equal(o.Before, o.After) || len(o.Before) == 0 {
				t.Errorf("%s: records after the checkpoint %v, want %v", o.Name, o.After, o.Before)
			}
			if o.PartsBefore != o.PartsAfter {
				t.Errorf("%s: %d partitions after the checkpoint, want %d", o.Name, o.PartsAfter, o.PartsBefore)
			}
			if o.BaseRunsAfter != 0 {
				t.Errorf("%s: the action after the checkpoint computed the base %d times, want 0 (lineage not truncated)", o.Name, o.BaseRunsAfter)
			}
		}
	})
}

var checkpointNoDirJob = dataset.JobResult("sparkcases.checkpointNoDir", func(b *dataset.Builder, _ struct{}) (int64, error) {
	return dataset.Count(dataset.Checkpoint(dataset.Parallelize(b, []int{1, 2, 3}, 2)))
})

// Spark's checkpoint() throws when no checkpoint directory is set; Flint's
// next action fails with ErrNoCheckpointDir.
func TestCheckpointWithoutDirFails(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		if fc.Config().IsSet("flint.checkpoint.dir") {
			t.Fatal("the harness sets flint.checkpoint.dir: this case needs a Context without one")
		}
		_, err := checkpointNoDirJob.Run(t.Context(), fc, struct{}{})
		if !errors.Is(err, dataset.ErrNoCheckpointDir) {
			t.Fatalf("count of a checkpointed dataset with no directory: %v, want ErrNoCheckpointDir", err)
		}
	})
}
