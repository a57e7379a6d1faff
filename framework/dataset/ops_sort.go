package dataset

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
)

// RepartitionAndSortWithinPartitions moves each record to the partition
// part gives its key (encoded with recordcodec.For, as PartitionBy) and
// sorts every partition by key, in the shuffle (Spark's
// repartitionAndSortWithinPartitions). The result has part as its
// Partitioner.
func RepartitionAndSortWithinPartitions[K cmp.Ordered, V any](ds Dataset[KV[K, V]], part Partitioner) Dataset[KV[K, V]] {
	ordered, plain, vals := recordcodec.Ordered[K](), recordcodec.For[K](), recordcodec.For[V]()
	def := addShuffle(ds, reencoded[K]{part: part, from: ordered, to: plain}, ordered, vals, shuffle.ByteOrder)
	out := shuffled(ds.n.b, "repartitionAndSortWithinPartitions", part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, V]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, shuffle.ByteOrder, nil)
		if err != nil {
			return err
		}
		defer closer()
		return emitDecoded(s, ordered, vals, emit)
	})
	return setPartitioning(out, part, plain)
}

// reencoded is part over keys encoded with to, given keys encoded with
// from.
type reencoded[K any] struct {
	part     Partitioner
	from, to recordcodec.Codec[K]
}

func (r reencoded[K]) NumPartitions() int { return r.part.NumPartitions() }
func (r reencoded[K]) Name() string       { return r.part.Name() }
func (r reencoded[K]) Partition(key []byte) int {
	if r.from.Name() == r.to.Name() {
		return r.part.Partition(key)
	}
	k, err := r.from.Decode(key)
	if err != nil {
		panic(fmt.Sprintf("dataset: decode a shuffle key: %v", err))
	}
	enc, err := r.to.Append(nil, k)
	if err != nil {
		panic(fmt.Sprintf("dataset: encode a shuffle key: %v", err))
	}
	return r.part.Partition(enc)
}

// SortByLess sorts records by key(record) in the order less defines, for
// any key type (SortBy needs cmp.Ordered keys; Spark's sortBy with an
// implicit Ordering). It samples the keys for range bounds like
// SortByKey; the shuffle compares decoded keys with less, so it is slower
// than SortBy's byte comparisons. parts ≤ 0 keeps the input's count.
func SortByLess[T, K any](ds Dataset[T], key func(T) K, less func(a, b K) bool, ascending bool, parts int) Dataset[T] {
	if parts <= 0 {
		parts = max(1, ds.n.parts)
	}
	keyed := KeyBy(ds, key)
	keys, vals := recordcodec.For[K](), recordcodec.For[T]()
	compare := func(a, b K) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
	sampledBy := ds.n.b.actions // the sampling action's index names the bounds
	bounds := sampleLessBounds(keyed, compare, parts)
	part := lessRangePartitioner[K]{bounds: bounds, compare: compare, keys: keys, descending: !ascending, sampledBy: sampledBy}
	order := shuffle.CustomOrder(func(a, b []byte) int {
		ka, errA := keys.Decode(a)
		kb, errB := keys.Decode(b)
		if errA != nil || errB != nil {
			return bytes.Compare(a, b)
		}
		if ascending {
			return compare(ka, kb)
		}
		return compare(kb, ka)
	})
	def := addShuffle(keyed, part, keys, vals, order)
	sorted := shuffled(ds.n.b, "sortBy", part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, T]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, order, nil)
		if err != nil {
			return err
		}
		defer closer()
		return emitDecoded(s, keys, vals, emit)
	})
	return Values(sorted)
}

// sampleLessBounds picks range bounds for parts partitions from a
// weighted sample of ds's keys ordered by compare (rangeBounds).
func sampleLessBounds[K, T any](ds Dataset[KV[K, T]], compare func(a, b K) int, parts int) []K {
	same := func(k K) (K, error) { return k, nil }
	return rangeBounds(ds, same, compare, parts, 0)
}

// lessRangePartitioner is RangePartitioner over decoded keys ordered by
// compare. Its name says which action of the job sampled its bounds, not
// the bounds' encoding: a gob encoding (recordcodec.For of a struct)
// carries type ids that differ from process to process, so the same
// bounds would have another name on an executor.
type lessRangePartitioner[K any] struct {
	bounds     []K
	compare    func(a, b K) int
	keys       recordcodec.Codec[K]
	descending bool
	sampledBy  int
}

func (r lessRangePartitioner[K]) NumPartitions() int { return len(r.bounds) + 1 }

func (r lessRangePartitioner[K]) Partition(key []byte) int {
	k, err := r.keys.Decode(key)
	if err != nil {
		panic(fmt.Sprintf("dataset: decode a shuffle key: %v", err))
	}
	i, _ := slices.BinarySearchFunc(r.bounds, k, func(b, k K) int {
		if r.compare(b, k) <= 0 {
			return -1
		}
		return 1
	})
	if r.descending {
		return len(r.bounds) - i
	}
	return i
}

func (r lessRangePartitioner[K]) Name() string {
	return fmt.Sprintf("rangeLess(%d,desc=%v,sampled by action %d)", len(r.bounds)+1, r.descending, r.sampledBy)
}
