package dataset

import (
	"unsafe"

	"github.com/flint-mesos/flint/framework/dataset/internal/detach"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
)

// precombiner is a map task's front combiner for comparable keys: records
// are merged into C in a typed map (one lookup per record — no key
// encoding, partition hash or byte-keyed lookup per record, which the
// shuffle's combining writer would do), and each distinct key's combiner
// goes to that writer once per flush. It holds at most precombineEntries
// keys and about precombineBytes (measured when a key is first seen);
// past either, everything is flushed and it starts again, so its memory
// is bounded beside the writer's accounted, spilling one. Flushes go in
// first-seen order, so a partition's merges happen in the same order on
// every attempt.
type precombiner[K comparable, V, C any] struct {
	agg     Aggregator[V, C]
	keys    recordcodec.Codec[K]
	part    Partitioner
	w       *shuffle.CombiningWriter[K, C, C]
	idx     map[K]int32
	entries []precombined[K, C]
	bytes   int64
	kbuf    []byte
	// detachKey copies the strings of a key kept in the map (package
	// detach; nil: K holds none): a word cut from a TextFile line would
	// otherwise keep the line's whole 256 KiB chunk until the flush — a
	// map task's every chunk, for rare keys spread through its input.
	detachKey func([]K)
	one       [1]K
}

type precombined[K, C any] struct {
	key  K
	c    C
	part int32
}

const (
	precombineEntries = 1 << 16
	precombineBytes   = 8 << 20
)

// entryOverhead approximates a precombined entry's cost besides its
// encoded key: the map's slot and index, the entry itself.
const entryOverhead = 48

func (p *precombiner[K, V, C]) add(in []KV[K, V]) error {
	for i := range in {
		kv := &in[i]
		if j, ok := p.idx[kv.Key]; ok {
			e := &p.entries[j]
			e.c = p.agg.MergeValue(e.c, kv.Value)
			continue
		}
		if err := p.insert(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

func (p *precombiner[K, V, C]) insert(k K, v V) error {
	if len(p.entries) >= precombineEntries || p.bytes >= precombineBytes {
		if err := p.flush(); err != nil {
			return err
		}
	}
	var err error
	if p.kbuf, err = p.keys.Append(p.kbuf[:0], k); err != nil {
		return err
	}
	if p.detachKey != nil {
		p.one[0] = k
		p.detachKey(p.one[:])
		k, p.one[0] = p.one[0], *new(K)
	}
	p.idx[k] = int32(len(p.entries))
	p.entries = append(p.entries, precombined[K, C]{key: k, c: p.agg.CreateCombiner(v), part: int32(p.part.Partition(p.kbuf))})
	var e precombined[K, C]
	p.bytes += int64(len(p.kbuf)) + entryOverhead + int64(unsafe.Sizeof(e))
	return nil
}

// flush hands every combiner to the writer and empties the map.
func (p *precombiner[K, V, C]) flush() error {
	for i := range p.entries {
		e := &p.entries[i]
		if err := p.w.Add(int(e.part), e.key, e.c); err != nil {
			return err
		}
	}
	clear(p.idx)
	clear(p.entries) // drop references for the collector
	p.entries = p.entries[:0]
	p.bytes = 0
	return nil
}

// addCombiningShuffle is addShuffle with map-side combine for comparable
// keys, through a precombiner in front of the shuffle's combining writer
// (which merges combiners: its values are C).
func addCombiningShuffle[K comparable, V, C any](ds Dataset[KV[K, V]], part Partitioner, keys recordcodec.Codec[K],
	combs recordcodec.Codec[C], agg Aggregator[V, C]) *shuffleDef {
	b := ds.n.b
	def := &shuffleDef{id: b.newShuffleID(), parent: ds.n, numReduces: part.NumPartitions(), keys: keys, keysName: keys.Name()}
	merge := Aggregator[C, C]{CreateCombiner: func(c C) C { return c }, MergeValue: agg.MergeCombiners, MergeCombiners: agg.MergeCombiners}
	def.write = func(tc *taskContext, mapIndex, attempt int) (shuffle.Result, error) {
		cfg := tc.env.writerConfig(def, mapIndex, attempt, shuffle.ByteOrder)
		w, err := shuffle.NewCombiningWriter(cfg, keys, combs, merge)
		if err != nil {
			return shuffle.Result{}, err
		}
		p := &precombiner[K, V, C]{agg: agg, keys: keys, part: part, w: w, idx: map[K]int32{}, detachKey: detach.For[K]()}
		err = ds.n.run(tc, mapIndex, p.add)
		if err == nil {
			err = p.flush()
		}
		if err != nil {
			w.Abort()
			return shuffle.Result{}, err
		}
		return w.Commit()
	}
	b.shuffles = append(b.shuffles, def)
	return def
}
