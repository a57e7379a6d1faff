package dataset

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
	return joinGroups(CoGroup(left, right, parts))
}

// JoinWith is Join with an explicit partitioner.
func JoinWith[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, Pair[V, W]]] {
	return joinGroups(CoGroupWith(left, right, part))
}

func joinGroups[K comparable, V, W any](g Dataset[KV[K, Grouped[V, W]]]) Dataset[KV[K, Pair[V, W]]] {
	return keepPartitioning(g, FlatMap(g, func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[V, W]])) {
		for _, v := range g.Value.Left {
			for _, w := range g.Value.Right {
				yield(KV[K, Pair[V, W]]{Key: g.Key, Value: Pair[V, W]{Left: v, Right: w}})
			}
		}
	}))
}

// LeftOuterJoin keeps every left value; Right is absent for keys only on
// the left.
func LeftOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[V, Opt[W]]]] {
	return leftOuterJoinGroups(CoGroup(left, right, parts))
}

// LeftOuterJoinWith is LeftOuterJoin with an explicit partitioner.
func LeftOuterJoinWith[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, Pair[V, Opt[W]]]] {
	return leftOuterJoinGroups(CoGroupWith(left, right, part))
}

func leftOuterJoinGroups[K comparable, V, W any](g Dataset[KV[K, Grouped[V, W]]]) Dataset[KV[K, Pair[V, Opt[W]]]] {
	return keepPartitioning(g, FlatMap(g, func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[V, Opt[W]]])) {
		for _, v := range g.Value.Left {
			if len(g.Value.Right) == 0 {
				yield(KV[K, Pair[V, Opt[W]]]{Key: g.Key, Value: Pair[V, Opt[W]]{Left: v}})
			}
			for _, w := range g.Value.Right {
				yield(KV[K, Pair[V, Opt[W]]]{Key: g.Key, Value: Pair[V, Opt[W]]{Left: v, Right: Opt[W]{Value: w, Ok: true}}})
			}
		}
	}))
}

// RightOuterJoin keeps every right value; Left is absent for keys only on
// the right.
func RightOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[Opt[V], W]]] {
	return rightOuterJoinGroups(CoGroup(left, right, parts))
}

// RightOuterJoinWith is RightOuterJoin with an explicit partitioner.
func RightOuterJoinWith[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, Pair[Opt[V], W]]] {
	return rightOuterJoinGroups(CoGroupWith(left, right, part))
}

func rightOuterJoinGroups[K comparable, V, W any](g Dataset[KV[K, Grouped[V, W]]]) Dataset[KV[K, Pair[Opt[V], W]]] {
	return keepPartitioning(g, FlatMap(g, func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[Opt[V], W]])) {
		for _, w := range g.Value.Right {
			if len(g.Value.Left) == 0 {
				yield(KV[K, Pair[Opt[V], W]]{Key: g.Key, Value: Pair[Opt[V], W]{Right: w}})
			}
			for _, v := range g.Value.Left {
				yield(KV[K, Pair[Opt[V], W]]{Key: g.Key, Value: Pair[Opt[V], W]{Left: Opt[V]{Value: v, Ok: true}, Right: w}})
			}
		}
	}))
}

// FullOuterJoin keeps every value of both sides.
func FullOuterJoin[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], parts int) Dataset[KV[K, Pair[Opt[V], Opt[W]]]] {
	return fullOuterJoinGroups(CoGroup(left, right, parts))
}

// FullOuterJoinWith is FullOuterJoin with an explicit partitioner.
func FullOuterJoinWith[K comparable, V, W any](left Dataset[KV[K, V]], right Dataset[KV[K, W]], part Partitioner) Dataset[KV[K, Pair[Opt[V], Opt[W]]]] {
	return fullOuterJoinGroups(CoGroupWith(left, right, part))
}

func fullOuterJoinGroups[K comparable, V, W any](g Dataset[KV[K, Grouped[V, W]]]) Dataset[KV[K, Pair[Opt[V], Opt[W]]]] {
	return keepPartitioning(g, FlatMap(g, func(g KV[K, Grouped[V, W]], yield func(KV[K, Pair[Opt[V], Opt[W]]])) {
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
	}))
}
