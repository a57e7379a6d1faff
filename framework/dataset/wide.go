package dataset

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/shuffle"
)

// shuffleDef is the write side of a wide dependency: how a map task turns
// partition mapIndex of the parent into shuffle output.
type shuffleDef struct {
	id         int
	parent     node
	numReduces int
	write      func(tc *taskContext, mapIndex int, attempt int) (shuffle.Result, error)
	// keys is the recordcodec.Codec[K] the partitioner sees keys in
	keys     any
	keysName string
}

// newShuffleID names the builder's next shuffle: an id of the Context's,
// so map stages of different runs never meet in its DAG core, frozen with
// the job so executors rebuilding the graph name it the same.
func (b *Builder) newShuffleID() int {
	key := fmt.Sprintf("flint.shuffle:%d", len(b.shuffles))
	if r := b.replay; r != nil && r.captured != nil {
		if _, ok := b.values[key]; !ok {
			// past the task's action (a body that went on after an
			// action's errReplayed): nothing built now is run here
			return -1 - len(b.shuffles)
		}
	}
	var id int
	b.freeze(key, func() any {
		if b.fc != nil {
			return driverseam.Of(b.fc).Driver.NewShuffleID()
		}
		return len(b.shuffles)
	}, &id)
	return id
}

// shuffleByID is the builder's shuffle id, if any.
func (b *Builder) shuffleByID(id int) *shuffleDef {
	for _, d := range b.shuffles {
		if d.id == id {
			return d
		}
	}
	return nil
}

// Aggregator combines the values of a key (Spark's Aggregator):
// CreateCombiner makes a key's first combiner, MergeValue adds a value,
// MergeCombiners merges two combiners of the same key.
type Aggregator[V, C any] = shuffle.Aggregator[V, C]

// addShuffle registers the write side of a shuffle of ds's records by
// key, passed as they are (map-side combine: addCombiningShuffle).
func addShuffle[K, V any](ds Dataset[KV[K, V]], part Partitioner, keys recordcodec.Codec[K], vals recordcodec.Codec[V],
	order shuffle.Order) *shuffleDef {
	b := ds.n.b
	def := &shuffleDef{id: b.newShuffleID(), parent: ds.n, numReduces: part.NumPartitions(), keys: keys, keysName: keys.Name()}
	def.write = func(tc *taskContext, mapIndex, attempt int) (shuffle.Result, error) {
		cfg := tc.env.writerConfig(def, mapIndex, attempt, order)
		var kbuf, vbuf []byte
		w, err := shuffle.NewWriter(cfg)
		if err != nil {
			return shuffle.Result{}, err
		}
		err = ds.n.run(tc, mapIndex, func(in []KV[K, V]) error {
			for _, kv := range in {
				if kbuf, err = keys.Append(kbuf[:0], kv.Key); err != nil {
					return err
				}
				if vbuf, err = vals.Append(vbuf[:0], kv.Value); err != nil {
					return err
				}
				if err := w.Add(part.Partition(kbuf), kbuf, vbuf); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			w.Abort()
			return shuffle.Result{}, err
		}
		return w.Commit()
	}
	b.shuffles = append(b.shuffles, def)
	return def
}

// shuffled is a node reading reduce partitions of the given shuffles.
func shuffled[T any](b *Builder, op string, part Partitioner, defs []*shuffleDef,
	compute func(tc *taskContext, p int, emit func([]T) error) error) Dataset[T] {
	var parents []node
	var deps []dagscheduler.Dep
	for _, d := range defs {
		parents = append(parents, d.parent)
		deps = append(deps, dagscheduler.Dep{Kind: dagscheduler.Shuffle, Parent: d.parent.info().id, ShuffleID: d.id})
	}
	ds := newNode(b, op, part.NumPartitions(), parents, deps, compute)
	ds.n.typ += " by " + part.Name()
	if len(defs) > 0 {
		ds.n.partitioning = &partitioning{part: part, codec: defs[0].keys, codecName: defs[0].keysName}
		for _, d := range defs[1:] {
			if d.keysName != defs[0].keysName {
				ds.n.partitioning = nil
			}
		}
	}
	return ds
}

// defaultPartitioner is Spark's Partitioner.defaultPartitioner for a wide
// operation over inputs keyed by K, with the key encoding the chosen
// partitioner reads: parts > 0 is HashPartitioner(parts) over
// recordcodec.For keys. For parts ≤ 0, the default count is
// flint.default.parallelism when set, else the largest input's partition
// count (so the same job partitions the same however many executors have
// registered). Of the inputs already partitioned by key, the one with the
// most partitions lends its partitioner (and its key encoding) when that
// partitioner is eligible — its count is not ten or more times smaller
// than the largest input's (Spark's isEligiblePartitioner, compared in
// log10) — or is at least the default count; otherwise the result is
// HashPartitioner(default count). A single partitioned input is always
// eligible, so ReduceByKey, GroupByKey, … over a partitioned dataset keep
// its partitioner and combine where it is, without a shuffle.
func defaultPartitioner[K any](b *Builder, parts int, inputs ...node) (Partitioner, recordcodec.Codec[K]) {
	plain := recordcodec.For[K]()
	if parts > 0 {
		return HashPartitioner(parts), plain
	}
	largest := 0
	var lender *partitioning
	lenderParts := 0
	for _, in := range inputs {
		info := in.info()
		largest = max(largest, info.parts)
		p := info.partitioning
		if p == nil || p.part.NumPartitions() <= 0 {
			continue
		}
		if _, ok := p.codec.(recordcodec.Codec[K]); !ok {
			continue
		}
		if lender == nil || info.parts > lenderParts {
			lender, lenderParts = p, info.parts
		}
	}
	count := max(1, largest)
	if b.settings.ParallelismSet || len(inputs) == 0 {
		count = b.DefaultParallelism()
	}
	if lender != nil && (eligiblePartitioner(lenderParts, largest) || count <= lenderParts) {
		return lender.part, lender.codec.(recordcodec.Codec[K])
	}
	return HashPartitioner(count), plain
}

// eligiblePartitioner is Spark's isEligiblePartitioner: a partitioner of
// parts partitions is worth keeping over inputs whose largest has largest
// partitions unless it has at least ten times fewer (compared in log10,
// as Spark, so 150 against 10 is not eligible and 99 against 10 is).
func eligiblePartitioner(parts, largest int) bool {
	return math.Log10(float64(largest))-math.Log10(float64(parts)) < 1
}

// emitDecoded decodes a merged stream of (key, value) records and emits
// them in batches.
func emitDecoded[K, V any](s shuffle.Stream, keys recordcodec.Codec[K], vals recordcodec.Codec[V], emit func([]KV[K, V]) error) error {
	batch := make([]KV[K, V], 0, batchSize)
	// strings share arena chunks: one allocation per 2 KiB, not two per record
	var arena recordcodec.Arena
	decodeKey, decodeValue := recordcodec.Decoder(keys, &arena), recordcodec.Decoder(vals, &arena)
	for {
		kb, vb, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var kv KV[K, V]
		if kv.Key, err = decodeKey(kb); err != nil {
			return err
		}
		if kv.Value, err = decodeValue(vb); err != nil {
			return err
		}
		batch = append(batch, kv)
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
}

// CombineByKey combines the values of each key with agg, map-side first,
// into HashPartitioner(parts) partitions. parts ≤ 0 is Spark's default
// partitioner: an input that already has a Partitioner keeps it and is
// combined where it is, without a shuffle (a partition's keys are held in
// memory at once); otherwise flint.default.parallelism partitions when
// set, else as many as the input has.
func CombineByKey[K comparable, V, C any](ds Dataset[KV[K, V]], agg Aggregator[V, C], parts int) Dataset[KV[K, C]] {
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	return combineByKey(ds, "combineByKey", agg, part, keys)
}

// combineByKey combines ds's values by key into part's partitions, part
// reading keys encoded with keys: where it is when ds is already
// partitioned so, else through a combining shuffle.
func combineByKey[K comparable, V, C any](ds Dataset[KV[K, V]], op string, agg Aggregator[V, C], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, C]] {
	combs := recordcodec.For[C]()
	if partitionedLike(ds.n.info(), part, keys.Name()) {
		out := combineLocally(ds, op, agg)
		out.n.sortedUnique()
		return out
	}
	def := addCombiningShuffle(ds, part, keys, combs, agg)
	combine := shuffle.CombineBytes(combs, agg.MergeCombiners)
	out := shuffled(ds.n.b, op, part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, C]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, shuffle.ByteOrder, combine)
		if err != nil {
			return err
		}
		defer closer()
		return emitDecoded(s, keys, combs, emit)
	})
	out.n.sortedUnique()
	return out
}

// ReduceByKey merges the values of each key with fn (associative and
// commutative), map-side first (Spark's reduceByKey), partitioned as
// CombineByKey: over an input that has a Partitioner and parts ≤ 0, in
// place with that partitioner.
func ReduceByKey[K comparable, V any](ds Dataset[KV[K, V]], fn func(V, V) V, parts int) Dataset[KV[K, V]] {
	agg := Aggregator[V, V]{CreateCombiner: func(v V) V { return v }, MergeValue: fn, MergeCombiners: fn}
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	return combineByKey(ds, "reduceByKey", agg, part, keys)
}

// AggregateByKey folds each key's values into a copy of zero with seq and
// merges the partial results with comb. seq and comb may modify and return
// their first argument: every key in every task starts from its own copy
// of zero, made as Aggregate makes them. parts as CombineByKey.
func AggregateByKey[K comparable, V, U any](ds Dataset[KV[K, V]], zero U, seq func(U, V) U, comb func(U, U) U, parts int) Dataset[KV[K, U]] {
	fresh := zeroMaker(ds.n.b, "aggregateByKey", zero)
	agg := Aggregator[V, U]{CreateCombiner: func(v V) U { return seq(fresh(), v) }, MergeValue: seq, MergeCombiners: comb}
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	return combineByKey(ds, "aggregateByKey", agg, part, keys)
}

// GroupByKey gathers each key's values (no map-side combine, as Spark).
// A key's values are held in memory at once. parts as CombineByKey: an
// input that has a Partitioner is grouped where it is when parts ≤ 0.
func GroupByKey[K comparable, V any](ds Dataset[KV[K, V]], parts int) Dataset[KV[K, []V]] {
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	return groupByKey(ds, part, keys)
}

// groupByKey groups ds's values by key into part's partitions (part
// reading keys encoded with keys): where they are when ds is already
// partitioned so (Spark's combineByKey without map-side combine on its
// own partitioner), else through a shuffle.
func groupByKey[K comparable, V any](ds Dataset[KV[K, V]], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, []V]] {
	if partitionedLike(ds.n.info(), part, keys.Name()) {
		// a group's values keep their input order, which is no more
		// determinate than the input's: no sortedUnique
		return combineLocally(ds, "groupByKey", Aggregator[V, []V]{
			CreateCombiner: func(v V) []V { return []V{v} },
			MergeValue:     func(vs []V, v V) []V { return append(vs, v) },
			MergeCombiners: func(a, b []V) []V { return append(a, b...) },
		})
	}
	vals := recordcodec.For[V]()
	def := addShuffle(ds, part, keys, vals, shuffle.ByteOrder)
	return shuffled(ds.n.b, "groupByKey", part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, []V]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, shuffle.ByteOrder, nil)
		if err != nil {
			return err
		}
		defer closer()
		g := &grouper[K, V]{s: s, keys: keys, vals: vals}
		batch := make([]KV[K, []V], 0, 64)
		for {
			kv, ok, err := g.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			batch = append(batch, kv)
			if len(batch) == cap(batch) {
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
}

// grouper reads a stream sorted by key bytes one key's values at a time.
type grouper[K, V any] struct {
	s       shuffle.Stream
	keys    recordcodec.Codec[K]
	vals    recordcodec.Codec[V]
	pendK   []byte
	pendV   V
	hasPend bool
	done    bool
}

// peekKey is the encoded key of the next group, nil at the end.
func (g *grouper[K, V]) peekKey() ([]byte, error) {
	if !g.hasPend && !g.done {
		if err := g.advance(); err != nil {
			return nil, err
		}
	}
	if !g.hasPend {
		return nil, nil
	}
	return g.pendK, nil
}

func (g *grouper[K, V]) advance() error {
	kb, vb, err := g.s.Next()
	if err == io.EOF {
		g.done, g.hasPend = true, false
		return nil
	}
	if err != nil {
		return err
	}
	g.pendK = append(g.pendK[:0], kb...)
	if g.pendV, err = g.vals.Decode(vb); err != nil {
		return err
	}
	g.hasPend = true
	return nil
}

// next is the next key with all its values.
func (g *grouper[K, V]) next() (KV[K, []V], bool, error) {
	var out KV[K, []V]
	kb, err := g.peekKey()
	if err != nil || kb == nil {
		return out, false, err
	}
	cur := append([]byte(nil), kb...)
	if out.Key, err = g.keys.Decode(cur); err != nil {
		return out, false, err
	}
	for g.hasPend && bytes.Equal(g.pendK, cur) {
		out.Value = append(out.Value, g.pendV)
		if err := g.advance(); err != nil {
			return out, false, err
		}
	}
	return out, true, nil
}

// Distinct is the distinct records, in parts partitions (≤ 0: as many as
// ds has, as Spark's distinct()). A dataset that has a Partitioner holds
// equal records in one partition, so with its own partition count it is
// deduplicated where it is, without a shuffle, and keeps its Partitioner
// (Spark's distinct on a partitioned RDD; a partition's records are held
// in memory at once).
func Distinct[T comparable](ds Dataset[T], parts int) Dataset[T] {
	if parts <= 0 {
		parts = ds.n.parts
	}
	if ds.n.partitioning != nil && parts == ds.n.parts {
		return distinctLocally(ds)
	}
	kv := Map(ds, func(x T) KV[T, bool] { return KV[T, bool]{Key: x, Value: true} })
	return Keys(ReduceByKey(kv, func(a, b bool) bool { return a }, parts))
}

// PartitionBy moves each record to the partition part gives its key,
// without ordering or combining.
func PartitionBy[K, V any](ds Dataset[KV[K, V]], part Partitioner) Dataset[KV[K, V]] {
	keys, vals := recordcodec.For[K](), recordcodec.For[V]()
	def := addShuffle(ds, part, keys, vals, shuffle.Unordered)
	return shuffled(ds.n.b, "partitionBy", part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, V]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, shuffle.Unordered, nil)
		if err != nil {
			return err
		}
		defer closer()
		return emitDecoded(s, keys, vals, emit)
	})
}

// Repartition spreads the records evenly over parts partitions
// (round-robin from a start fixed per input partition, as Spark). A
// recomputed input partition whose records come in another order (after
// a shuffle that does not sort and combine them) would send other
// records elsewhere, so that stage is rerun as a whole when any of its
// output is lost (Spark's SPARK-23207).
func Repartition[T any](ds Dataset[T], parts int) Dataset[T] {
	if parts <= 0 {
		parts = ds.n.b.DefaultParallelism()
	}
	numbered := MapPartitions(ds, func(p int, records func(func(T) bool), yield func(KV[int64, T])) error {
		i := int64(hashKey([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)}) % uint64(parts))
		records(func(x T) bool { yield(KV[int64, T]{Key: i, Value: x}); i++; return true })
		return nil
	})
	return Values(PartitionBy(numbered, modPartitioner(parts)))
}

// modPartitioner sends integer key i (encoded with recordcodec.For[int64])
// to partition i mod n.
type modPartitioner int

func (m modPartitioner) NumPartitions() int { return int(m) }
func (m modPartitioner) Name() string       { return fmt.Sprintf("mod(%d)", int(m)) }
func (m modPartitioner) Partition(key []byte) int {
	i, err := recordcodec.For[int64]().Decode(key)
	if err != nil {
		return 0
	}
	return int(uint64(i) % uint64(m))
}

// SortByKey sorts a keyed dataset by key into range partitions (bounds
// from a sample of the keys weighted by input partition size, as Spark's
// RangePartitioner): reading
// the partitions in order gives all records in key order. parts ≤ 0 keeps
// the input's partition count.
func SortByKey[K cmp.Ordered, V any](ds Dataset[KV[K, V]], ascending bool, parts int) Dataset[KV[K, V]] {
	return sortByKey(ds, ascending, parts, recordcodec.For[V]())
}

func sortByKey[K cmp.Ordered, V any](ds Dataset[KV[K, V]], ascending bool, parts int, vals recordcodec.Codec[V]) Dataset[KV[K, V]] {
	if parts <= 0 {
		parts = ds.n.parts
	}
	keys := recordcodec.Ordered[K]()
	bounds := sampleBounds(ds, keys, parts)
	part := NewRangePartitioner(bounds, !ascending)
	order := shuffle.ByteOrder
	if !ascending {
		order = shuffle.CustomOrder(func(a, b []byte) int { return bytes.Compare(b, a) })
	}
	def := addShuffle(ds, part, keys, vals, order)
	return shuffled(ds.n.b, "sortByKey", part, []*shuffleDef{def}, func(tc *taskContext, p int, emit func([]KV[K, V]) error) error {
		s, closer, err := tc.env.read(tc, def.id, p, order, nil)
		if err != nil {
			return err
		}
		defer closer()
		return emitDecoded(s, keys, vals, emit)
	})
}

// SortBy sorts records by key(record).
func SortBy[T any, K cmp.Ordered](ds Dataset[T], key func(T) K, ascending bool, parts int) Dataset[T] {
	return Values(SortByKey(KeyBy(ds, key), ascending, parts))
}

// sampleBounds picks range bounds for parts partitions from a weighted
// sample of ds's encoded keys (rangeBounds). The bounds are frozen like
// every action's result, so executors rebuild the same partitioner.
func sampleBounds[K cmp.Ordered, V any](ds Dataset[KV[K, V]], keys recordcodec.Codec[K], parts int) [][]byte {
	encode := func(k K) ([]byte, error) { return keys.Append(nil, k) }
	return rangeBounds(ds, encode, bytes.Compare, parts, 0)
}

// Sort sorts records of an ordered type by their own value (the record is
// the key, nothing else is shuffled): Sort(lines, true, n) orders lines
// by bytes, as LC_ALL=C sort does.
func Sort[T cmp.Ordered](ds Dataset[T], ascending bool, parts int) Dataset[T] {
	keyed := Map(ds, func(x T) KV[T, unit] { return KV[T, unit]{Key: x} })
	return Keys(sortByKey(keyed, ascending, parts, unitCodec{}))
}

// unit is a value that takes no bytes.
type unit struct{}

type unitCodec struct{}

func (unitCodec) Append(dst []byte, _ unit) ([]byte, error) { return dst, nil }
func (unitCodec) Decode(src []byte) (unit, error) {
	if len(src) != 0 {
		return unit{}, fmt.Errorf("recordcodec: corrupt record: %d bytes for an empty value", len(src))
	}
	return unit{}, nil
}
func (unitCodec) Name() string { return "unit" }
