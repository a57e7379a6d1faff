package dataset

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
)

// CombineByKeyWith is CombineByKey with an explicit partitioner (over keys
// encoded with recordcodec.For). An input already partitioned by part is
// combined where it is, without a shuffle (a partition's keys are held in
// memory at once).
func CombineByKeyWith[K comparable, V, C any](ds Dataset[KV[K, V]], agg Aggregator[V, C], part Partitioner) Dataset[KV[K, C]] {
	return combineByKey(ds, "combineByKey", agg, part, recordcodec.For[K]())
}

// ReduceByKeyWith is ReduceByKey with an explicit partitioner.
func ReduceByKeyWith[K comparable, V any](ds Dataset[KV[K, V]], fn func(V, V) V, part Partitioner) Dataset[KV[K, V]] {
	agg := Aggregator[V, V]{CreateCombiner: func(v V) V { return v }, MergeValue: fn, MergeCombiners: fn}
	return combineByKey(ds, "reduceByKey", agg, part, recordcodec.For[K]())
}

// AggregateByKeyWith is AggregateByKey with an explicit partitioner.
func AggregateByKeyWith[K comparable, V, U any](ds Dataset[KV[K, V]], zero U, seq func(U, V) U, comb func(U, U) U, part Partitioner) Dataset[KV[K, U]] {
	fresh := zeroMaker(ds.n.b, "AggregateByKey", zero)
	agg := Aggregator[V, U]{CreateCombiner: func(v V) U { return seq(fresh(), v) }, MergeValue: seq, MergeCombiners: comb}
	return combineByKey(ds, "aggregateByKey", agg, part, recordcodec.For[K]())
}

// FoldByKey merges each key's values with fn (associative), starting
// every key of every partition from its own copy of zero (the identity
// of fn): Spark's foldByKey. fn may modify and return its first argument.
// parts as ReduceByKey (an input that has a Partitioner keeps it when
// parts ≤ 0, without a shuffle).
func FoldByKey[K comparable, V any](ds Dataset[KV[K, V]], zero V, fn func(V, V) V, parts int) Dataset[KV[K, V]] {
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	return foldByKey(ds, zero, fn, part, keys)
}

// FoldByKeyWith is FoldByKey with an explicit partitioner.
func FoldByKeyWith[K comparable, V any](ds Dataset[KV[K, V]], zero V, fn func(V, V) V, part Partitioner) Dataset[KV[K, V]] {
	return foldByKey(ds, zero, fn, part, recordcodec.For[K]())
}

func foldByKey[K comparable, V any](ds Dataset[KV[K, V]], zero V, fn func(V, V) V, part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, V]] {
	fresh := zeroMaker(ds.n.b, "FoldByKey", zero)
	agg := Aggregator[V, V]{CreateCombiner: func(v V) V { return fn(fresh(), v) }, MergeValue: fn, MergeCombiners: fn}
	return combineByKey(ds, "foldByKey", agg, part, keys)
}

// GroupByKeyWith is GroupByKey with an explicit partitioner. An input
// already partitioned by part is grouped where it is, without a shuffle.
func GroupByKeyWith[K comparable, V any](ds Dataset[KV[K, V]], part Partitioner) Dataset[KV[K, []V]] {
	return groupByKey(ds, part, recordcodec.For[K]())
}

// combineLocally combines each partition of a dataset already partitioned
// by part where it is (Spark's combineByKey when the partitioner is the
// input's): a partition's keys are held in memory and emitted sorted by
// their recordcodec.For encoding. The caller marks the output determinate
// when agg's combiners do not depend on the order of the values.
func combineLocally[K comparable, V, C any](ds Dataset[KV[K, V]], op string, agg Aggregator[V, C]) Dataset[KV[K, C]] {
	out := narrow(op, ds, func(tc *taskContext, p int, emit func([]KV[K, C]) error) error {
		idx := map[K]int{}
		var combs []KV[K, C]
		err := ds.n.run(tc, p, func(in []KV[K, V]) error {
			for _, kv := range in {
				if i, ok := idx[kv.Key]; ok {
					combs[i].Value = agg.MergeValue(combs[i].Value, kv.Value)
					continue
				}
				idx[kv.Key] = len(combs)
				combs = append(combs, KV[K, C]{Key: kv.Key, Value: agg.CreateCombiner(kv.Value)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		// sorted by encoded key, as a combining shuffle's reducer gives
		// them: the order is fixed by the records whatever the input's
		if err := sortByEncodedKey(combs); err != nil {
			return err
		}
		for i := 0; i < len(combs); i += batchSize {
			if err := emit(combs[i:min(len(combs), i+batchSize)]); err != nil {
				return err
			}
		}
		return nil
	})
	return keepPartitioning(ds, out)
}

// distinctLocally drops repeated records within each partition of a
// partitioned dataset, where equal records (equal keys) all are; the
// survivors come sorted by their recordcodec.For encoding.
func distinctLocally[T comparable](ds Dataset[T]) Dataset[T] {
	out := narrow("distinct", ds, func(tc *taskContext, p int, emit func([]T) error) error {
		seen := map[T]bool{}
		var uniq []KV[T, struct{}]
		err := ds.n.run(tc, p, func(in []T) error {
			for _, x := range in {
				if !seen[x] {
					seen[x] = true
					uniq = append(uniq, KV[T, struct{}]{Key: x})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := sortByEncodedKey(uniq); err != nil {
			return err
		}
		batch := make([]T, 0, min(len(uniq), batchSize))
		for _, kv := range uniq {
			batch = append(batch, kv.Key)
			if len(batch) == batchSize {
				if err := emit(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			return emit(batch)
		}
		return nil
	})
	out.n.sortedUnique()
	return keepPartitioning(ds, out)
}

// sortByEncodedKey sorts records by their keys' recordcodec.For encoding.
func sortByEncodedKey[K, C any](kvs []KV[K, C]) error {
	codec := recordcodec.For[K]()
	enc := make([][]byte, len(kvs))
	idx := make([]int, len(kvs))
	for i, kv := range kvs {
		var err error
		if enc[i], err = codec.Append(nil, kv.Key); err != nil {
			return err
		}
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bytes.Compare(enc[idx[a]], enc[idx[b]]) < 0 })
	sorted := make([]KV[K, C], len(kvs))
	for i, j := range idx {
		sorted[i] = kvs[j]
	}
	copy(kvs, sorted)
	return nil
}

// FlatMapValues calls fn for every value of a keyed dataset; each value fn
// passes to yield is paired with the record's key. It keeps the input's
// Partitioner.
func FlatMapValues[K, V, W any](ds Dataset[KV[K, V]], fn func(v V, yield func(W))) Dataset[KV[K, W]] {
	out := FlatMap(ds, func(kv KV[K, V], yield func(KV[K, W])) {
		fn(kv.Value, func(w W) { yield(KV[K, W]{Key: kv.Key, Value: w}) })
	})
	return keepPartitioning(ds, out)
}

// SubtractByKey keeps the records of a whose key is not in b (Spark's
// subtractByKey), partitioned by HashPartitioner(parts) when parts > 0,
// else by a's partitioner if it has one (then a is not shuffled), else by
// a hash partitioner of a's partition count. A key's values in a are held
// in memory at once.
func SubtractByKey[K comparable, V, W any](a Dataset[KV[K, V]], b Dataset[KV[K, W]], parts int) Dataset[KV[K, V]] {
	if parts > 0 {
		return SubtractByKeyWith(a, b, HashPartitioner(parts))
	}
	if p := a.n.partitioning; p != nil {
		if keys, ok := p.codec.(recordcodec.Codec[K]); ok {
			return subtractByKey(a, b, p.part, keys)
		}
	}
	return SubtractByKeyWith(a, b, HashPartitioner(max(1, a.n.parts)))
}

// SubtractByKeyWith is SubtractByKey with an explicit partitioner.
func SubtractByKeyWith[K comparable, V, W any](a Dataset[KV[K, V]], b Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, V]] {
	return subtractByKey(a, b, part, recordcodec.For[K]())
}

func subtractByKey[K comparable, V, W any](a Dataset[KV[K, V]], b Dataset[KV[K, W]], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, V]] {
	sa, ta := coInput(a, part, keys)
	sb, tb := coInput(b, part, keys)
	type R = KV[K, Grouped[V, W]]
	groups := cogrouped(a.n.b, part, keys, []coSide{sa, sb}, func(ss []shuffle.Stream) ([]func() ([]byte, error), []func(*R) error) {
		pa, ga := ta(ss[0])
		pb, gb := tb(ss[1])
		return []func() ([]byte, error){pa, pb}, []func(*R) error{
			func(r *R) error { return ga(&r.Key, &r.Value.Left) },
			func(r *R) error { return gb(&r.Key, &r.Value.Right) },
		}
	})
	out := FlatMap(groups, func(g R, yield func(KV[K, V])) {
		if len(g.Value.Right) > 0 {
			return
		}
		for _, v := range g.Value.Left {
			yield(KV[K, V]{Key: g.Key, Value: v})
		}
	})
	return keepPartitioning(groups, out)
}

// CountByValue counts each distinct record (Spark's countByValue).
func CountByValue[T comparable](ds Dataset[T]) (map[T]int64, error) {
	return CountByKey(Map(ds, func(x T) KV[T, bool] { return KV[T, bool]{Key: x} }))
}

// CollectAsMap returns the records of a keyed dataset as a map; of a
// key's records, the last in partition order wins (Spark's collectAsMap).
func CollectAsMap[K comparable, V any](ds Dataset[KV[K, V]]) (map[K]V, error) {
	kvs, err := Collect(ds)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out, nil
}

// Lookup returns the values of key, in partition order. On a dataset with
// a Partitioner it computes only the partition the partitioner gives key;
// on others it scans every partition.
func Lookup[K comparable, V any](ds Dataset[KV[K, V]], key K) ([]V, error) {
	var parts []int
	if p := ds.n.partitioning; p != nil {
		if c, ok := p.codec.(recordcodec.Codec[K]); ok {
			kb, err := c.Append(nil, key)
			if err != nil {
				return nil, fmt.Errorf("dataset: Lookup: encode the key: %w", err)
			}
			i := p.part.Partition(kb)
			if i < 0 || i >= ds.n.parts {
				return nil, fmt.Errorf("dataset: Lookup: partitioner %s gives key %v partition %d of %d", p.part.Name(), key, i, ds.n.parts)
			}
			parts = []int{i}
		}
	}
	res, err := runAction(ds, "lookup", parts, func(tc *taskContext, p int) ([]V, error) {
		var out []V
		err := ds.n.run(tc, p, func(in []KV[K, V]) error {
			for _, kv := range in {
				if kv.Key == key {
					out = append(out, kv.Value)
				}
			}
			return nil
		})
		return out, err
	})
	var out []V
	for _, r := range res {
		out = append(out, r...)
	}
	return out, err
}
