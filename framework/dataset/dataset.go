package dataset

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// batchSize is how many records a source hands down a pipeline at once.
const batchSize = 1024

// Dataset is a typed, lazy, partitioned collection (Spark's RDD): the
// result of a source or a transformation, computed only when an action
// needs it. Transformations are package functions (Map(ds, fn)) because
// Go methods cannot take type parameters.
type Dataset[T any] struct{ n *tnode[T] }

// tnode is a node computing partitions of T. compute pushes partition p
// through emit in batches; a batch is valid only during the call (the
// producer reuses it), so consumers that keep records copy them.
type tnode[T any] struct {
	nodeInfo
	compute func(tc *taskContext, p int, emit func([]T) error) error
}

// Partitions is the number of partitions.
func (d Dataset[T]) Partitions() int { return d.n.parts }

// ID is the node's identity: operator, call site and per-site counter.
func (d Dataset[T]) ID() string { return string(d.n.id) }

// Builder is the builder the dataset belongs to.
func (d Dataset[T]) Builder() *Builder { return d.n.b }

func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// newNode adds a node of T to b.
func newNode[T any](b *Builder, op string, parts int, parents []node, deps []dagscheduler.Dep,
	compute func(tc *taskContext, p int, emit func([]T) error) error) Dataset[T] {
	n := &tnode[T]{nodeInfo: b.newInfo(op, typeName[T](), parts, parents, deps), compute: compute}
	b.add(n)
	return Dataset[T]{n}
}

// narrow is a one-to-one child of parent.
func narrow[T, U any](op string, parent Dataset[T], compute func(tc *taskContext, p int, emit func([]U) error) error) Dataset[U] {
	return newNode(parent.n.b, op, parent.n.parts, []node{parent.n},
		[]dagscheduler.Dep{{Kind: dagscheduler.OneToOne, Parent: parent.n.id}}, compute)
}

// run computes partition p of n, caching it when n is cached.
func (n *tnode[T]) run(tc *taskContext, p int, emit func([]T) error) error {
	if err := tc.ctx.Err(); err != nil {
		return err
	}
	if n.storage != 0 {
		return runCached(tc, n, p, emit)
	}
	return n.compute(tc, p, emit)
}

// collectPartition computes partition p into a slice.
func (n *tnode[T]) collectPartition(tc *taskContext, p int) ([]T, error) {
	var out []T
	err := n.run(tc, p, func(b []T) error { out = append(out, b...); return nil })
	return out, err
}

// taskContext is what a pipeline needs on the executor running it.
type taskContext struct {
	ctx context.Context
	env *taskEnv
	// accumulator updates made by this task attempt, by accumulator id
	acc map[int]any
	// storage is the job's storage memory per executor (settings.StorageMemory)
	storage int64

	mu     sync.Mutex
	cached []cachedPart // partitions of cached nodes this task read or made
}

type cachedPart struct {
	node dagscheduler.NodeID
	part int
}

// holdsCached records that this executor holds partition p of node n.
func (tc *taskContext) holdsCached(n dagscheduler.NodeID, p int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if !slices.Contains(tc.cached, cachedPart{n, p}) {
		tc.cached = append(tc.cached, cachedPart{n, p})
	}
}

func (tc *taskContext) cachedParts() []cachedPart {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return slices.Clone(tc.cached)
}

func (tc *taskContext) String() string { return fmt.Sprintf("task of run %s", tc.env.runID) }
