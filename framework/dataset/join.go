package dataset

import (
	"bytes"

	"github.com/flint-mesos/flint/executor/shuffle"
	"github.com/flint-mesos/flint/framework/recordcodec"
)

// Grouped is a key's values from both sides of a CoGroup.
type Grouped[V, W any] struct {
	Left  []V
	Right []W
}

// CoGroup groups two keyed datasets by key: every key of either side with
// all its values from each (Spark's cogroup). Both sides are shuffled by
// the same hash partitioner and merged by key; a key's values are held in
// memory at once.
func CoGroup[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Grouped[V, W]]] {
	part := defaultPartitioner(left.n.b, parts, left.n, right.n)
	keys, lv, rv := recordcodec.For[K](), recordcodec.For[V](), recordcodec.For[W]()
	ld := addShuffle(left, part, keys, lv, shuffle.ByteOrder)
	rd := addShuffle(right, part, keys, rv, shuffle.ByteOrder)
	return shuffled(left.n.b, "cogroup", part, []*shuffleDef{ld, rd}, func(tc *taskContext, p int, emit func([]KV[K, Grouped[V, W]]) error) error {
		ls, lclose, err := tc.env.read(tc, ld.id, p, shuffle.ByteOrder, nil)
		if err != nil {
			return err
		}
		defer lclose()
		rs, rclose, err := tc.env.read(tc, rd.id, p, shuffle.ByteOrder, nil)
		if err != nil {
			return err
		}
		defer rclose()
		lg := &grouper[K, V]{s: ls, keys: keys, vals: lv}
		rg := &grouper[K, W]{s: rs, keys: keys, vals: rv}
		batch := make([]KV[K, Grouped[V, W]], 0, 64)
		for {
			lk, err := lg.peekKey()
			if err != nil {
				return err
			}
			rk, err := rg.peekKey()
			if err != nil {
				return err
			}
			if lk == nil && rk == nil {
				break
			}
			var out KV[K, Grouped[V, W]]
			c := 0
			switch {
			case lk == nil:
				c = 1
			case rk == nil:
				c = -1
			default:
				c = bytes.Compare(lk, rk)
			}
			if c <= 0 {
				g, _, err := lg.next()
				if err != nil {
					return err
				}
				out.Key, out.Value.Left = g.Key, g.Value
			}
			if c >= 0 {
				g, _, err := rg.next()
				if err != nil {
					return err
				}
				out.Key, out.Value.Right = g.Key, g.Value
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
	})
}

// Pair is one joined pair of values.
type Pair[V, W any] struct {
	Left  V
	Right W
}

// Opt is a value that may be absent (the missing side of an outer join).
type Opt[T any] struct {
	Value T
	Ok    bool
}

// Join is the inner join of two keyed datasets: every pair of values of
// each key present on both sides, as SQL's inner join.
func Join[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[V, W]]] {
	return FlatMap(CoGroup(left, right, parts), func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[V, W]])) {
		for _, v := range g.Value.Left {
			for _, w := range g.Value.Right {
				yield(KV[K, Pair[V, W]]{Key: g.Key, Value: Pair[V, W]{Left: v, Right: w}})
			}
		}
	})
}

// LeftOuterJoin keeps every left value; Right is absent for keys only on
// the left.
func LeftOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[V, Opt[W]]]] {
	return FlatMap(CoGroup(left, right, parts), func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[V, Opt[W]]])) {
		for _, v := range g.Value.Left {
			if len(g.Value.Right) == 0 {
				yield(KV[K, Pair[V, Opt[W]]]{Key: g.Key, Value: Pair[V, Opt[W]]{Left: v}})
			}
			for _, w := range g.Value.Right {
				yield(KV[K, Pair[V, Opt[W]]]{Key: g.Key, Value: Pair[V, Opt[W]]{Left: v, Right: Opt[W]{Value: w, Ok: true}}})
			}
		}
	})
}

// RightOuterJoin keeps every right value; Left is absent for keys only on
// the right.
func RightOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[Opt[V], W]]] {
	return FlatMap(CoGroup(left, right, parts), func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[Opt[V], W]])) {
		for _, w := range g.Value.Right {
			if len(g.Value.Left) == 0 {
				yield(KV[K, Pair[Opt[V], W]]{Key: g.Key, Value: Pair[Opt[V], W]{Right: w}})
			}
			for _, v := range g.Value.Left {
				yield(KV[K, Pair[Opt[V], W]]{Key: g.Key, Value: Pair[Opt[V], W]{Left: Opt[V]{Value: v, Ok: true}, Right: w}})
			}
		}
	})
}

// FullOuterJoin keeps every value of both sides.
func FullOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[Opt[V], Opt[W]]]] {
	return FlatMap(CoGroup(left, right, parts), func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[Opt[V], Opt[W]]])) {
		switch {
		case len(g.Value.Left) == 0:
			for _, w := range g.Value.Right {
				yield(KV[K, Pair[Opt[V], Opt[W]]]{Key: g.Key, Value: Pair[Opt[V], Opt[W]]{Right: Opt[W]{Value: w, Ok: true}}})
			}
		case len(g.Value.Right) == 0:
			for _, v := range g.Value.Left {
				yield(KV[K, Pair[Opt[V], Opt[W]]]{Key: g.Key, Value: Pair[Opt[V], Opt[W]]{Left: Opt[V]{Value: v, Ok: true}}})
			}
		default:
			for _, v := range g.Value.Left {
				for _, w := range g.Value.Right {
					yield(KV[K, Pair[Opt[V], Opt[W]]]{Key: g.Key, Value: Pair[Opt[V], Opt[W]]{Left: Opt[V]{Value: v, Ok: true}, Right: Opt[W]{Value: w, Ok: true}}})
				}
			}
		}
	})
}
