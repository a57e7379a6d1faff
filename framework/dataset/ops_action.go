package dataset

import (
	"iter"
	"math"
	"slices"
)

// TakeOrdered returns the n smallest records by less, smallest first
// (Spark's takeOrdered with an Ordering): each partition keeps its n
// smallest, the driver merges them. Of equal records, those of earlier
// partitions come first.
func TakeOrdered[T any](ds Dataset[T], n int, less func(a, b T) bool) ([]T, error) {
	if n <= 0 {
		return []T{}, nil
	}
	cmp := func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
	parts, err := runAction(ds, "takeOrdered", nil, func(tc *taskContext, p int) ([]T, error) {
		var keep []T
		err := ds.n.run(tc, p, func(in []T) error {
			for _, x := range in {
				keep = append(keep, x)
				if len(keep) >= 2*n+batchSize {
					slices.SortStableFunc(keep, cmp)
					keep = keep[:n]
				}
			}
			return nil
		})
		slices.SortStableFunc(keep, cmp)
		return keep[:min(n, len(keep))], err
	})
	if err != nil {
		return nil, err
	}
	all := slices.Concat(parts...)
	slices.SortStableFunc(all, cmp)
	return all[:min(n, len(all))], nil
}

// Top returns the n largest records by less, largest first (Spark's top).
func Top[T any](ds Dataset[T], n int, less func(a, b T) bool) ([]T, error) {
	return TakeOrdered(ds, n, func(a, b T) bool { return less(b, a) })
}

// TreeAggregate is Aggregate combining the partitions' results in a tree
// of depth levels (Spark's treeAggregate, depth ≥ 1, 2 by default there):
// partial results are merged by shuffles into fewer partitions, each
// level dividing their number by max(2, ⌈partitions^(1/depth)⌉), before
// the driver merges the last ones. Every partition folds into its own
// copy of zero (see Fold), so seq and comb may modify their first
// argument.
func TreeAggregate[T, U any](ds Dataset[T], zero U, seq func(U, T) U, comb func(U, U) U, depth int) (U, error) {
	fresh := zeroMaker(ds.n.b, "TreeAggregate", zero)
	partial := MapPartitions(ds, func(_ int, records func(func(T) bool), yield func(U)) error {
		acc := fresh()
		records(func(x T) bool { acc = seq(acc, x); return true })
		yield(acc)
		return nil
	})
	parts, err := Collect(treeCombine(partial, comb, depth))
	acc := fresh()
	for _, p := range parts {
		acc = comb(acc, p)
	}
	return acc, err
}

// TreeReduce is Reduce combining the partitions' results in a tree (see
// TreeAggregate); ok is false for an empty dataset.
func TreeReduce[T any](ds Dataset[T], fn func(T, T) T, depth int) (x T, ok bool, err error) {
	partials := MapPartitions(ds, func(_ int, records func(func(T) bool), yield func(partial[T])) error {
		var acc partial[T]
		records(func(v T) bool {
			if acc.Ok {
				acc.V = fn(acc.V, v)
			} else {
				acc = partial[T]{V: v, Ok: true}
			}
			return true
		})
		yield(acc)
		return nil
	})
	merge := func(a, b partial[T]) partial[T] {
		switch {
		case !a.Ok:
			return b
		case !b.Ok:
			return a
		}
		return partial[T]{V: fn(a.V, b.V), Ok: true}
	}
	parts, err := Collect(treeCombine(partials, merge, depth))
	var acc partial[T]
	for _, p := range parts {
		acc = merge(acc, p)
	}
	return acc.V, acc.Ok, err
}

// treeCombine merges one-record-per-partition partials by levels of
// shuffles until few enough partitions remain (Spark's treeAggregate
// loop).
func treeCombine[U any](partial Dataset[U], comb func(U, U) U, depth int) Dataset[U] {
	n := partial.n.parts
	if depth < 1 || n == 0 {
		return partial
	}
	scale := max(int(math.Ceil(math.Pow(float64(n), 1/float64(depth)))), 2)
	for n > scale+int(math.Ceil(float64(n)/float64(scale))) {
		n /= scale
		cur := n
		keyed := MapPartitions(partial, func(p int, records func(func(U) bool), yield func(KV[int, U])) error {
			records(func(u U) bool { yield(KV[int, U]{Key: p % cur, Value: u}); return true })
			return nil
		})
		partial = Values(ReduceByKeyWith(keyed, comb, HashPartitioner(cur)))
	}
	return partial
}

// ToLocalIterator iterates over every record in partition order, running
// one job per partition as the iteration reaches it, so the driver holds
// one partition at a time (Spark's toLocalIterator). An action's error
// ends the iteration with it.
func ToLocalIterator[T any](ds Dataset[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for p := range ds.n.parts {
			res, err := runAction(ds, "toLocalIterator", []int{p}, func(tc *taskContext, p int) ([]T, error) {
				return ds.n.collectPartition(tc, p)
			})
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, x := range res[0] {
				if !yield(x, nil) {
					return
				}
			}
		}
	}
}

// Real is a number type Stats summarises.
type Real interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// StatCounter is the count, mean, variance, minimum and maximum of
// numbers, merged in one pass (Spark's StatCounter; Welford's update and
// Chan et al.'s parallel merge).
type StatCounter struct {
	N    int64
	Mu   float64 // mean
	M2   float64 // sum of squared differences from the mean
	MaxV float64
	MinV float64
}

// NewStatCounter is a counter of no numbers.
func NewStatCounter() StatCounter { return StatCounter{MaxV: math.Inf(-1), MinV: math.Inf(1)} }

// Add adds one number.
func (s StatCounter) Add(x float64) StatCounter {
	d := x - s.Mu
	s.N++
	s.Mu += d / float64(s.N)
	s.M2 += d * (x - s.Mu)
	s.MaxV, s.MinV = math.Max(s.MaxV, x), math.Min(s.MinV, x)
	return s
}

// Merge merges the numbers of o.
func (s StatCounter) Merge(o StatCounter) StatCounter {
	switch {
	case o.N == 0:
		return s
	case s.N == 0:
		return o
	}
	d, n, on := o.Mu-s.Mu, float64(s.N), float64(o.N)
	switch {
	case on*10 < n:
		s.Mu += d * on / (n + on)
	case n*10 < on:
		s.Mu = o.Mu - d*n/(n+on)
	default:
		s.Mu = (s.Mu*n + o.Mu*on) / (n + on)
	}
	s.M2 += o.M2 + d*d*n*on/(n+on)
	s.N += o.N
	s.MaxV, s.MinV = math.Max(s.MaxV, o.MaxV), math.Min(s.MinV, o.MinV)
	return s
}

// Count is the number of numbers.
func (s StatCounter) Count() int64 { return s.N }

// Mean is their mean (0 for none, as Spark).
func (s StatCounter) Mean() float64 { return s.Mu }

// Sum is their sum.
func (s StatCounter) Sum() float64 { return float64(s.N) * s.Mu }

// Max is the largest (-Inf for none).
func (s StatCounter) Max() float64 { return s.MaxV }

// Min is the smallest (+Inf for none).
func (s StatCounter) Min() float64 { return s.MinV }

// Variance is the population variance (NaN for none).
func (s StatCounter) Variance() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.M2 / float64(s.N)
}

// SampleVariance is the sample variance, divided by N-1 (NaN below 2).
func (s StatCounter) SampleVariance() float64 {
	if s.N <= 1 {
		return math.NaN()
	}
	return s.M2 / float64(s.N-1)
}

// Stdev is the population standard deviation.
func (s StatCounter) Stdev() float64 { return math.Sqrt(s.Variance()) }

// SampleStdev is the sample standard deviation.
func (s StatCounter) SampleStdev() float64 { return math.Sqrt(s.SampleVariance()) }

// Stats counts, and computes the mean, variance, minimum and maximum of, a
// dataset of numbers in one pass (Spark's stats on an RDD of doubles).
func Stats[T Real](ds Dataset[T]) (StatCounter, error) {
	parts, err := runAction(ds, "stats", nil, func(tc *taskContext, p int) (StatCounter, error) {
		s := NewStatCounter()
		err := ds.n.run(tc, p, func(in []T) error {
			for _, x := range in {
				s = s.Add(float64(x))
			}
			return nil
		})
		return s, err
	})
	s := NewStatCounter()
	for _, p := range parts {
		s = s.Merge(p)
	}
	return s, err
}
