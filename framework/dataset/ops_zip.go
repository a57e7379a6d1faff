package dataset

import (
	"fmt"
	"iter"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// EmptyDataset is a dataset of no partitions and no records (Spark's
// emptyRDD).
func EmptyDataset[T any](b *Builder) Dataset[T] {
	return newNode[T](b, "empty", 0, nil, nil, func(*taskContext, int, func([]T) error) error { return nil })
}

// Glom turns each partition into one record holding all its records, an
// empty partition into an empty slice (Spark's glom).
func Glom[T any](ds Dataset[T]) Dataset[[]T] {
	return narrow("glom", ds, func(tc *taskContext, p int, emit func([][]T) error) error {
		xs, err := ds.n.collectPartition(tc, p)
		if err != nil {
			return err
		}
		if xs == nil {
			xs = []T{}
		}
		return emit([][]T{xs})
	})
}

// MapPartitionsWithIndex is Spark's mapPartitionsWithIndex: fn gets the
// partition's index and its records as an iterator and passes its output
// to yield. It is MapPartitions, whose fn already gets the index.
func MapPartitionsWithIndex[T, U any](ds Dataset[T], fn func(index int, records iter.Seq[T], yield func(U)) error) Dataset[U] {
	return MapPartitions(ds, func(p int, records func(func(T) bool), yield func(U)) error {
		return fn(p, records, yield)
	})
}

// Zip pairs the i-th record of each partition of a with the i-th record of
// the same partition of b (Spark's zip). Both must have the same number
// of partitions (else the next action fails) and the same number of
// records in each partition (else the task fails). b's partition is held
// in memory.
func Zip[T, U any](a Dataset[T], b Dataset[U]) Dataset[Pair[T, U]] {
	if a.n.parts != b.n.parts {
		a.n.b.fail(errPartitionCounts("Zip", a.n.parts, b.n.parts))
	}
	deps := []dagscheduler.Dep{{Kind: dagscheduler.OneToOne, Parent: a.n.id}, {Kind: dagscheduler.OneToOne, Parent: b.n.id}}
	out := newNode(a.n.b, "zip", a.n.parts, []node{a.n, b.n}, deps, func(tc *taskContext, p int, emit func([]Pair[T, U]) error) error {
		ys, err := b.n.collectPartition(tc, p)
		if err != nil {
			return err
		}
		i := 0
		var batch []Pair[T, U]
		err = a.n.run(tc, p, func(xs []T) error {
			if i+len(xs) > len(ys) {
				return fmt.Errorf("dataset: Zip: partition %d of the first dataset has more records than the second's %d: can only zip datasets with the same number of records in each partition", p, len(ys))
			}
			batch = batch[:0]
			for _, x := range xs {
				batch = append(batch, Pair[T, U]{Left: x, Right: ys[i]})
				i++
			}
			return emit(batch)
		})
		if err == nil && i != len(ys) {
			err = fmt.Errorf("dataset: Zip: partition %d of the first dataset has %d records, the second's %d: can only zip datasets with the same number of records in each partition", p, i, len(ys))
		}
		return err
	})
	out.n.dependsOnOrder()
	return out
}

// ZipWithIndex pairs every record with its index in the dataset: its
// position in partition order, from 0 (Spark's zipWithIndex). Like
// Spark's, it runs a job counting the records of every partition but the
// last when it is called, unless the dataset has one partition.
func ZipWithIndex[T any](ds Dataset[T]) Dataset[Pair[T, int64]] {
	starts := make([]int64, ds.n.parts)
	if ds.n.parts > 1 {
		parts := make([]int, ds.n.parts-1)
		for i := range parts {
			parts[i] = i
		}
		counts, err := runAction(ds, "zipWithIndex", parts, func(tc *taskContext, p int) (int64, error) {
			var n int64
			err := ds.n.run(tc, p, func(b []T) error { n += int64(len(b)); return nil })
			return n, err
		})
		if err == nil {
			for i, c := range counts {
				starts[i+1] = starts[i] + c
			}
		}
	}
	out := narrow("zipWithIndex", ds, func(tc *taskContext, p int, emit func([]Pair[T, int64]) error) error {
		i := starts[p]
		var batch []Pair[T, int64]
		return ds.n.run(tc, p, func(xs []T) error {
			batch = batch[:0]
			for _, x := range xs {
				batch = append(batch, Pair[T, int64]{Left: x, Right: i})
				i++
			}
			return emit(batch)
		})
	})
	out.n.dependsOnOrder()
	return out
}

// ZipWithUniqueID pairs every record with a unique id: the i-th record of
// partition k of n gets i·n+k (Spark's zipWithUniqueId). It runs no job;
// the ids have gaps.
func ZipWithUniqueID[T any](ds Dataset[T]) Dataset[Pair[T, int64]] {
	n := int64(ds.n.parts)
	out := narrow("zipWithUniqueId", ds, func(tc *taskContext, p int, emit func([]Pair[T, int64]) error) error {
		id := int64(p)
		var batch []Pair[T, int64]
		return ds.n.run(tc, p, func(xs []T) error {
			batch = batch[:0]
			for _, x := range xs {
				batch = append(batch, Pair[T, int64]{Left: x, Right: id})
				id += n
			}
			return emit(batch)
		})
	})
	out.n.dependsOnOrder()
	return out
}
