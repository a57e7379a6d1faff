package dataset

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// Subtract keeps the records of a that are not in b, duplicates included
// (Spark's subtract), in parts partitions (a's partition count when
// parts ≤ 0).
func Subtract[T comparable](a, b Dataset[T], parts int) Dataset[T] {
	if parts <= 0 {
		parts = max(1, a.n.parts)
	}
	ka := Map(a, func(x T) KV[T, bool] { return KV[T, bool]{Key: x} })
	kb := Map(b, func(x T) KV[T, bool] { return KV[T, bool]{Key: x} })
	return Keys(SubtractByKeyWith(ka, kb, HashPartitioner(parts)))
}

// Intersection is the distinct records found in both a and b (Spark's
// intersection: duplicates in either input are dropped), partitioned as
// CoGroup with parts.
func Intersection[T comparable](a, b Dataset[T], parts int) Dataset[T] {
	ka := Map(a, func(x T) KV[T, bool] { return KV[T, bool]{Key: x} })
	kb := Map(b, func(x T) KV[T, bool] { return KV[T, bool]{Key: x} })
	both := Filter(CoGroup(ka, kb, parts), func(g KV[T, Grouped[bool, bool]]) bool {
		return len(g.Value.Left) > 0 && len(g.Value.Right) > 0
	})
	return Keys(both)
}

// Cartesian is every pair (x, y) of a record x of a and a record y of b
// (Spark's cartesian): partition i·len(b)+j pairs a's partition i with
// b's partition j, holding b's partition in memory.
func Cartesian[T, U any](a Dataset[T], b Dataset[U]) Dataset[Pair[T, U]] {
	na, nb := a.n.parts, b.n.parts
	left, right := make([][]int, na*nb), make([][]int, na*nb)
	for i := range na {
		for j := range nb {
			left[i*nb+j], right[i*nb+j] = []int{i}, []int{j}
		}
	}
	deps := []dagscheduler.Dep{
		{Kind: dagscheduler.Groups, Parent: a.n.id, Groups: left},
		{Kind: dagscheduler.Groups, Parent: b.n.id, Groups: right},
	}
	return newNode(a.n.b, "cartesian", na*nb, []node{a.n, b.n}, deps, func(tc *taskContext, p int, emit func([]Pair[T, U]) error) error {
		ys, err := b.n.collectPartition(tc, p%nb)
		if err != nil {
			return err
		}
		if len(ys) == 0 {
			return nil
		}
		out := make([]Pair[T, U], 0, batchSize)
		return errorsFirst(a.n.run(tc, p/nb, func(xs []T) error {
			for _, x := range xs {
				for _, y := range ys {
					out = append(out, Pair[T, U]{Left: x, Right: y})
					if len(out) == batchSize {
						if err := emit(out); err != nil {
							return err
						}
						out = out[:0]
					}
				}
			}
			return nil
		}), func() error {
			if len(out) > 0 {
				return emit(out)
			}
			return nil
		})
	})
}

// errorsFirst is err, else then's error.
func errorsFirst(err error, then func() error) error {
	if err != nil {
		return err
	}
	return then()
}

// errPartitionCounts is Zip's refusal of inputs partitioned differently.
func errPartitionCounts(op string, a, b int) error {
	return fmt.Errorf("dataset: %s: can't zip datasets with unequal numbers of partitions: %d and %d", op, a, b)
}
