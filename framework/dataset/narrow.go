package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/recordcodec"
)

// KV is a key and a value: the record of keyed datasets.
type KV[K, V any] = recordcodec.KV[K, V]

// Map applies fn to every record.
func Map[T, U any](ds Dataset[T], fn func(T) U) Dataset[U] {
	return narrow("map", ds, func(tc *taskContext, p int, emit func([]U) error) error {
		var out []U
		return ds.n.run(tc, p, func(in []T) error {
			out = out[:0]
			for _, x := range in {
				out = append(out, fn(x))
			}
			return emit(out)
		})
	})
}

// Filter keeps the records for which keep is true (and the input's
// Partitioner).
func Filter[T any](ds Dataset[T], keep func(T) bool) Dataset[T] {
	return keepPartitioning(ds, filter(ds, keep))
}

func filter[T any](ds Dataset[T], keep func(T) bool) Dataset[T] {
	return narrow("filter", ds, func(tc *taskContext, p int, emit func([]T) error) error {
		var out []T
		return ds.n.run(tc, p, func(in []T) error {
			out = out[:0]
			for _, x := range in {
				if keep(x) {
					out = append(out, x)
				}
			}
			if len(out) == 0 {
				return nil
			}
			return emit(out)
		})
	})
}

// FlatMap calls fn for every record; fn passes any number of records to
// yield.
func FlatMap[T, U any](ds Dataset[T], fn func(x T, yield func(U))) Dataset[U] {
	return narrow("flatMap", ds, func(tc *taskContext, p int, emit func([]U) error) error {
		var out []U
		var err error
		yield := func(u U) {
			out = append(out, u)
			if len(out) >= batchSize && err == nil {
				err = emit(out)
				out = out[:0]
			}
		}
		if rerr := ds.n.run(tc, p, func(in []T) error {
			for _, x := range in {
				fn(x, yield)
				if err != nil {
					return err
				}
			}
			return nil
		}); rerr != nil {
			return rerr
		}
		if len(out) > 0 {
			return emit(out)
		}
		return nil
	})
}

// MapPartitions calls fn once per partition with an iterator over its
// records; fn passes its output to yield. The iterator streams the
// partition from its parent (nothing is collected first); calling it a
// second time computes the partition again.
//
// By default fn is taken to depend on the order of its input
// (OrderSensitive): over a shuffle's output, whose order may differ when
// a lost partition is recomputed, the stage is then rerun as a whole.
// Pass OrderInsensitive when fn's output depends only on which records
// the partition holds, or Nondeterministic when it may differ even for
// the same input (see Determinism). Spark trusts mapPartitions to be
// order-insensitive unless told otherwise; Flint assumes the safe side.
func MapPartitions[T, U any](ds Dataset[T], fn func(part int, records func(func(T) bool), yield func(U)) error, det ...Determinism) Dataset[U] {
	if len(det) > 1 {
		panic("dataset: MapPartitions takes at most one Determinism")
	}
	out := mapPartitions(ds, fn)
	if len(det) == 0 {
		det = []Determinism{OrderSensitive}
	}
	det[0].apply(&out.n.nodeInfo)
	return out
}

func mapPartitions[T, U any](ds Dataset[T], fn func(part int, records func(func(T) bool), yield func(U)) error) Dataset[U] {
	return mapPartitionsTask(ds, func(_ *taskContext, p int, records func(func(T) bool), yield func(U)) error {
		return fn(p, records, yield)
	})
}

// mapPartitionsTask is mapPartitions whose fn also gets the task.
func mapPartitionsTask[T, U any](ds Dataset[T], fn func(tc *taskContext, part int, records func(func(T) bool), yield func(U)) error) Dataset[U] {
	return narrow("mapPartitions", ds, func(tc *taskContext, p int, emit func([]U) error) error {
		var out []U
		var eerr, rerr error
		yield := func(u U) {
			out = append(out, u)
			if len(out) >= batchSize && eerr == nil {
				eerr = emit(out)
				out = out[:0]
			}
		}
		seq := func(y func(T) bool) {
			if rerr != nil {
				return
			}
			err := ds.n.run(tc, p, func(in []T) error {
				for _, x := range in {
					if !y(x) {
						return errStopRecords
					}
				}
				return nil
			})
			if err != nil && !errors.Is(err, errStopRecords) {
				rerr = err
			}
		}
		err := fn(tc, p, seq, yield)
		if rerr != nil { // the input failed: fn saw part of it
			return rerr
		}
		if err != nil {
			return err
		}
		if eerr != nil {
			return eerr
		}
		if len(out) > 0 {
			return emit(out)
		}
		return nil
	})
}

// errStopRecords ends a MapPartitions input early when fn's iteration
// stops.
var errStopRecords = errors.New("dataset: iteration stopped")

// KeyBy pairs every record with key(record).
func KeyBy[T any, K any](ds Dataset[T], key func(T) K) Dataset[KV[K, T]] {
	return Map(ds, func(x T) KV[K, T] { return KV[K, T]{Key: key(x), Value: x} })
}

// MapValues applies fn to the values of a keyed dataset (it keeps the
// input's Partitioner).
func MapValues[K, V, W any](ds Dataset[KV[K, V]], fn func(V) W) Dataset[KV[K, W]] {
	return keepPartitioning(ds, Map(ds, func(kv KV[K, V]) KV[K, W] { return KV[K, W]{Key: kv.Key, Value: fn(kv.Value)} }))
}

// Keys and Values project a keyed dataset.
func Keys[K, V any](ds Dataset[KV[K, V]]) Dataset[K] {
	return Map(ds, func(kv KV[K, V]) K { return kv.Key })
}

// Values is the values of a keyed dataset.
func Values[K, V any](ds Dataset[KV[K, V]]) Dataset[V] {
	return Map(ds, func(kv KV[K, V]) V { return kv.Value })
}

// Union is the partitions of every dataset, in order (no shuffle). When
// every input with partitions has the same Partitioner, it is instead
// partitioner-aware, as Spark's SparkContext.union: partition p holds
// partition p of each input, and the result keeps the Partitioner and its
// partition count.
func Union[T any](first Dataset[T], rest ...Dataset[T]) Dataset[T] {
	all := append([]Dataset[T]{first}, rest...)
	if u, ok := partitionerAwareUnion(all); ok {
		return u
	}
	var parents []node
	var deps []dagscheduler.Dep
	starts := make([]int, len(all))
	total := 0
	for i, d := range all {
		parents = append(parents, d.n)
		deps = append(deps, dagscheduler.Dep{Kind: dagscheduler.Range, Parent: d.n.id, Offset: total})
		starts[i] = total
		total += d.n.parts
	}
	return newNode(first.n.b, "union", total, parents, deps, func(tc *taskContext, p int, emit func([]T) error) error {
		for i := len(all) - 1; i >= 0; i-- {
			if p >= starts[i] {
				return all[i].n.run(tc, p-starts[i], emit)
			}
		}
		return fmt.Errorf("dataset: union partition %d out of range", p)
	})
}

// Sample keeps each record with probability fraction (Bernoulli sampling,
// without replacement), with a random stream per partition derived from
// seed, so a recomputed partition keeps the same records — when its input
// comes in the same order; after a shuffle the stage sampling is rerun as
// a whole when any of its output is lost.
func Sample[T any](ds Dataset[T], fraction float64, seed uint64) Dataset[T] {
	out := sample(ds, fraction, seed)
	out.n.data = digestOf(fraction, seed)
	out.n.dependsOnOrder()
	return keepPartitioning(ds, out)
}

func sample[T any](ds Dataset[T], fraction float64, seed uint64) Dataset[T] {
	return narrow("sample", ds, func(tc *taskContext, p int, emit func([]T) error) error {
		r := rand.New(rand.NewPCG(seed, uint64(p)+0x9e3779b97f4a7c15))
		var out []T
		return ds.n.run(tc, p, func(in []T) error {
			out = out[:0]
			for _, x := range in {
				if r.Float64() < fraction {
					out = append(out, x)
				}
			}
			if len(out) == 0 {
				return nil
			}
			return emit(out)
		})
	})
}
