package dataset

import (
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
)

// Grouped is a key's values from both sides of a CoGroup.
type Grouped[V, W any] struct {
	Left  []V
	Right []W
}

// Grouped3 is a key's values from each input of a CoGroup3.
type Grouped3[A, B, C any] struct {
	First  []A
	Second []B
	Third  []C
}

// Grouped4 is a key's values from each input of a CoGroup4.
type Grouped4[A, B, C, D any] struct {
	First  []A
	Second []B
	Third  []C
	Fourth []D
}

// CoGroup groups two keyed datasets by key: every key of either side with
// all its values from each (Spark's cogroup). Both sides are partitioned
// by one hash partitioner of parts partitions — when parts ≤ 0, as
// Spark's defaultPartitioner: the partitioner of the input with the most
// partitions that has one, unless the largest input has ten or more
// times as many partitions and it fewer than the default count; else the
// default count (flint.default.parallelism when set, else the largest
// input's) — and merged by key; a key's values are held in memory at
// once. A side already partitioned that way is read where it is, without
// a shuffle.
func CoGroup[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Grouped[V, W]]] {
	part, keys := defaultPartitioner[K](left.n.b, parts, left.n, right.n)
	return coGroup2(left, right, part, keys)
}

// CoGroupWith is CoGroup with an explicit partitioner (over keys encoded
// with recordcodec.For).
func CoGroupWith[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, Grouped[V, W]]] {
	return coGroup2(left, right, part, recordcodec.For[K]())
}

func coGroup2[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, Grouped[V, W]]] {
	a, ta := coInput(left, part, keys)
	b, tb := coInput(right, part, keys)
	type R = KV[K, Grouped[V, W]]
	return cogrouped(left.n.b, part, keys, []coSide{a, b}, func(ss []shuffle.Stream) ([]func() ([]byte, error), []func(*R) error) {
		pa, ga := ta(ss[0])
		pb, gb := tb(ss[1])
		return []func() ([]byte, error){pa, pb}, []func(*R) error{
			func(r *R) error { return ga(&r.Key, &r.Value.Left) },
			func(r *R) error { return gb(&r.Key, &r.Value.Right) },
		}
	})
}

// CoGroup3 groups three keyed datasets by key (Spark's cogroup of three,
// or groupWith), partitioned as CoGroup.
func CoGroup3[K comparable, A, B, C any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], parts int) Dataset[KV[K, Grouped3[A, B, C]]] {
	part, keys := defaultPartitioner[K](a.n.b, parts, a.n, b.n, c.n)
	return coGroup3(a, b, c, part, keys)
}

// CoGroup3With is CoGroup3 with an explicit partitioner.
func CoGroup3With[K comparable, A, B, C any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], part Partitioner) Dataset[KV[K, Grouped3[A, B, C]]] {
	return coGroup3(a, b, c, part, recordcodec.For[K]())
}

func coGroup3[K comparable, A, B, C any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, Grouped3[A, B, C]]] {
	sa, ta := coInput(a, part, keys)
	sb, tb := coInput(b, part, keys)
	sc, rc := coInput(c, part, keys)
	type R = KV[K, Grouped3[A, B, C]]
	return cogrouped(a.n.b, part, keys, []coSide{sa, sb, sc}, func(ss []shuffle.Stream) ([]func() ([]byte, error), []func(*R) error) {
		pa, ga := ta(ss[0])
		pb, gb := tb(ss[1])
		pc, gc := rc(ss[2])
		return []func() ([]byte, error){pa, pb, pc}, []func(*R) error{
			func(r *R) error { return ga(&r.Key, &r.Value.First) },
			func(r *R) error { return gb(&r.Key, &r.Value.Second) },
			func(r *R) error { return gc(&r.Key, &r.Value.Third) },
		}
	})
}

// CoGroup4 groups four keyed datasets by key, partitioned as CoGroup.
func CoGroup4[K comparable, A, B, C, D any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], d Dataset[KV[K, D]], parts int) Dataset[KV[K, Grouped4[A, B, C, D]]] {
	part, keys := defaultPartitioner[K](a.n.b, parts, a.n, b.n, c.n, d.n)
	return coGroup4(a, b, c, d, part, keys)
}

// CoGroup4With is CoGroup4 with an explicit partitioner.
func CoGroup4With[K comparable, A, B, C, D any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], d Dataset[KV[K, D]], part Partitioner) Dataset[KV[K, Grouped4[A, B, C, D]]] {
	return coGroup4(a, b, c, d, part, recordcodec.For[K]())
}

func coGroup4[K comparable, A, B, C, D any](a Dataset[KV[K, A]], b Dataset[KV[K, B]], c Dataset[KV[K, C]], d Dataset[KV[K, D]], part Partitioner, keys recordcodec.Codec[K]) Dataset[KV[K, Grouped4[A, B, C, D]]] {
	sa, ta := coInput(a, part, keys)
	sb, tb := coInput(b, part, keys)
	sc, rc := coInput(c, part, keys)
	sd, td := coInput(d, part, keys)
	type R = KV[K, Grouped4[A, B, C, D]]
	return cogrouped(a.n.b, part, keys, []coSide{sa, sb, sc, sd}, func(ss []shuffle.Stream) ([]func() ([]byte, error), []func(*R) error) {
		pa, ga := ta(ss[0])
		pb, gb := tb(ss[1])
		pc, gc := rc(ss[2])
		pd, gd := td(ss[3])
		return []func() ([]byte, error){pa, pb, pc, pd}, []func(*R) error{
			func(r *R) error { return ga(&r.Key, &r.Value.First) },
			func(r *R) error { return gb(&r.Key, &r.Value.Second) },
			func(r *R) error { return gc(&r.Key, &r.Value.Third) },
			func(r *R) error { return gd(&r.Key, &r.Value.Fourth) },
		}
	})
}

// groupTaker reads one side's stream a key at a time: peek is the next
// key's encoding (nil at the end), take stores that key and its values.
type groupTaker[K, V any] func(s shuffle.Stream) (peek func() ([]byte, error), take func(key *K, vals *[]V) error)

// coInput is ds as a side of a cogroup by part, and how its groups are
// read.
func coInput[K, V any](ds Dataset[KV[K, V]], part Partitioner, keys recordcodec.Codec[K]) (coSide, groupTaker[K, V]) {
	vals := recordcodec.For[V]()
	side := newCoSide(ds, part, keys, vals)
	return side, func(s shuffle.Stream) (func() ([]byte, error), func(*K, *[]V) error) {
		g := &grouper[K, V]{s: s, keys: keys, vals: vals}
		return g.peekKey, func(k *K, vs *[]V) error {
			kv, _, err := g.next()
			*k, *vs = kv.Key, kv.Value
			return err
		}
	}
}

// cogrouped is the node merging the sides' groups by key; readers turns
// the sides' opened streams into peek and take functions.
func cogrouped[K, R any](b *Builder, part Partitioner, keys recordcodec.Codec[K], sides []coSide,
	readers func([]shuffle.Stream) ([]func() ([]byte, error), []func(*R) error)) Dataset[R] {
	ds := coNode(b, "cogroup", part, sides, func(tc *taskContext, p int, emit func([]R) error) error {
		streams, closeAll, err := openSides(tc, p, sides)
		if err != nil {
			return err
		}
		defer closeAll()
		peeks, takes := readers(streams)
		return mergeGroups(peeks, takes, emit)
	})
	return setPartitioning(ds, part, keys)
}
