package dataset

import (
	"bytes"
	"io"
	"sort"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
)

// partitioning is how a keyed dataset's records are placed: every record
// of partition p has a key that part, given the key encoded with codec,
// sends to p (Spark's RDD.partitioner). Wide operations set it; the
// narrow operations that keep keys where they are (Filter, MapValues,
// FlatMapValues, Sample, Persist) keep it; everything else drops it.
type partitioning struct {
	part Partitioner
	// codec is the recordcodec.Codec[K] the keys were encoded with for
	// part, and codecName its Name: a partitioner over another encoding
	// of the same keys places them differently.
	codec     any
	codecName string
}

// Partitioner is how the dataset's records are partitioned by key, nil
// when that is not known (sources, Map, and every operation that may
// change keys). A dataset shuffled by key (ReduceByKey, GroupByKey,
// PartitionBy, CoGroup, SortByKey, …) has its operation's partitioner,
// and Filter, MapValues, FlatMapValues and Sample keep their input's.
// Joining or cogrouping datasets already partitioned by the operation's
// partitioner reads them where they are, without a shuffle, and Lookup
// on a partitioned dataset computes only the key's partition.
func (d Dataset[T]) Partitioner() Partitioner {
	if d.n.partitioning == nil {
		return nil
	}
	return d.n.partitioning.part
}

// keepPartitioning gives out its input's partitioning (a narrow operation
// that keeps every record's key and partition).
func keepPartitioning[T, U any](in Dataset[T], out Dataset[U]) Dataset[U] {
	out.n.partitioning = in.n.partitioning
	return out
}

// partitionedLike reports whether n is already partitioned by part over
// keys encoded with codec.
func partitionedLike(n *nodeInfo, part Partitioner, codecName string) bool {
	p := n.partitioning
	return p != nil && p.codecName == codecName && p.part.NumPartitions() == part.NumPartitions() &&
		p.part.Name() == part.Name()
}

// setPartitioning records that out is partitioned by part over keys.
func setPartitioning[K, T any](out Dataset[T], part Partitioner, keys recordcodec.Codec[K]) Dataset[T] {
	out.n.partitioning = &partitioning{part: part, codec: keys, codecName: keys.Name()}
	return out
}

// coSide is one keyed input of a cogroup-like operation: shuffled by the
// operation's partitioner, or, when it is already partitioned that way,
// read where it is (a one-to-one dependency: no shuffle), its partition
// sorted by encoded key in memory.
type coSide struct {
	parent node
	def    *shuffleDef // nil: read narrowly
	open   func(tc *taskContext, p int) (shuffle.Stream, func(), error)
}

func newCoSide[K, V any](ds Dataset[KV[K, V]], part Partitioner, keys recordcodec.Codec[K], vals recordcodec.Codec[V]) coSide {
	if partitionedLike(ds.n.info(), part, keys.Name()) {
		return coSide{parent: ds.n, open: func(tc *taskContext, p int) (shuffle.Stream, func(), error) {
			s, err := sortedPartition(tc, ds.n, p, keys, vals)
			return s, func() {}, err
		}}
	}
	def := addShuffle(ds, part, keys, vals, shuffle.ByteOrder)
	return coSide{parent: ds.n, def: def, open: func(tc *taskContext, p int) (shuffle.Stream, func(), error) {
		return tc.env.read(tc, def.id, p, shuffle.ByteOrder, nil)
	}}
}

// coNode is a node reading partition p of every side: a shuffle
// dependency for shuffled sides, one-to-one for the others.
func coNode[T any](b *Builder, op string, part Partitioner, sides []coSide,
	compute func(tc *taskContext, p int, emit func([]T) error) error) Dataset[T] {
	var parents []node
	var deps []dagscheduler.Dep
	for _, s := range sides {
		parents = append(parents, s.parent)
		id := s.parent.info().id
		if s.def == nil {
			deps = append(deps, dagscheduler.Dep{Kind: dagscheduler.OneToOne, Parent: id})
		} else {
			deps = append(deps, dagscheduler.Dep{Kind: dagscheduler.Shuffle, Parent: id, ShuffleID: s.def.id})
		}
	}
	ds := newNode(b, op, part.NumPartitions(), parents, deps, compute)
	ds.n.typ += " by " + part.Name()
	return ds
}

// sortedPartition is partition p of n, encoded and sorted by key bytes
// (stable: a key's values keep their order), as a shuffle stream.
func sortedPartition[K, V any](tc *taskContext, n *tnode[KV[K, V]], p int, keys recordcodec.Codec[K], vals recordcodec.Codec[V]) (shuffle.Stream, error) {
	var recs []memRecord
	err := n.run(tc, p, func(in []KV[K, V]) error {
		for _, kv := range in {
			k, err := keys.Append(nil, kv.Key)
			if err != nil {
				return err
			}
			v, err := vals.Append(nil, kv.Value)
			if err != nil {
				return err
			}
			recs = append(recs, memRecord{k, v})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(recs, func(i, j int) bool { return bytes.Compare(recs[i].key, recs[j].key) < 0 })
	return &memStream{recs: recs}, nil
}

type memRecord struct{ key, value []byte }

// memStream is a shuffle.Stream over records in memory.
type memStream struct {
	recs []memRecord
	i    int
}

func (s *memStream) Next() ([]byte, []byte, error) {
	if s.i >= len(s.recs) {
		return nil, nil, io.EOF
	}
	r := s.recs[s.i]
	s.i++
	return r.key, r.value, nil
}

// mergeGroups walks the sides' groups in key order: for the smallest key
// of any side, every side holding it adds its group to one output record
// (take), emitted in batches.
func mergeGroups[R any](peeks []func() ([]byte, error), takes []func(*R) error, emit func([]R) error) error {
	batch := make([]R, 0, 64)
	keys := make([][]byte, len(peeks))
	for {
		var least []byte
		for i, peek := range peeks {
			k, err := peek()
			if err != nil {
				return err
			}
			keys[i] = k
			if k != nil && (least == nil || bytes.Compare(k, least) < 0) {
				least = k
			}
		}
		if least == nil {
			break
		}
		least = append([]byte(nil), least...)
		var out R
		for i, k := range keys {
			if k != nil && bytes.Equal(k, least) {
				if err := takes[i](&out); err != nil {
					return err
				}
			}
		}
		batch = append(batch, out)
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
}

// openSides opens partition p of every side, closing what it opened on
// error; close releases them all.
func openSides(tc *taskContext, p int, sides []coSide) ([]shuffle.Stream, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	streams := make([]shuffle.Stream, len(sides))
	for i, s := range sides {
		st, c, err := s.open(tc, p)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		streams[i] = st
		closers = append(closers, c)
	}
	return streams, closeAll, nil
}
