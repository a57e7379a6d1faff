package dataset

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"sync"
)

// Accumulator is a value tasks add to and the driver reads: a counter of
// bad records, a sum, a set of error samples. Create it in the job's body
// with NewAccumulator or Counter and call Add from the closures passed to
// Map, Filter, Foreach, …; after an action, Value on the driver holds the
// merged updates of that action's tasks.
//
// Guarantees (Spark's): an update made while computing a partition of an
// action's final stage (the closures of Collect, Count, Foreach, Reduce,
// SaveAsTextFile, … and the narrow operations pipelined into them) is
// applied exactly once per partition of the action — a failed attempt's
// updates are dropped, a retried or speculative copy's success counts
// once, a result stage resubmitted after a fetch failure does not apply
// the partitions it already has. An update made in a map stage (the
// operations before a shuffle) is applied once per successful map task:
// a map output recomputed because its executor was lost, or a stage
// rerun for an indeterminate parent, applies its updates again, as in
// Spark; and a partition read from the cache does not run its closures,
// so it adds nothing. Count exactly in actions; treat counts made in
// transformations as hints.
//
// On executors each task has its own accumulators (its replay of the
// body), so Value there is that task's updates so far; read the merged
// value on the driver only.
type Accumulator[T any] struct {
	id    int
	name  string
	zero  T
	merge func(T, T) T

	mu sync.Mutex
	v  T
	// touched: Add was called since the value was last sent (executors).
	touched bool
}

// accumulator is an Accumulator of any type, as the builder keeps it.
type accumulator interface {
	describe() string
	// update is the task's updates to send, or false if there are none.
	update() ([]byte, bool, error)
	// apply merges a task's encoded updates into the driver's value.
	apply(enc []byte) error
}

// accUpdate is one accumulator's updates from one task.
type accUpdate struct {
	ID    int
	Desc  string // name and type, checked by the driver
	Value []byte // gob of T
}

// NewAccumulator registers an accumulator of the job: zero is its initial
// value and the identity of merge, which combines two values and must be
// associative and commutative (updates arrive in any order). T must be
// gob-encodable. Create accumulators in the same order in every run of
// the body (as you create datasets).
func NewAccumulator[T any](b *Builder, name string, zero T, merge func(T, T) T) *Accumulator[T] {
	if merge == nil {
		panic("dataset: NewAccumulator needs a merge function")
	}
	a := &Accumulator[T]{id: len(b.accums), name: name, zero: zero, merge: merge, v: zero}
	b.accums = append(b.accums, a)
	return a
}

// Counter is an int64 accumulator that sums.
func Counter(b *Builder, name string) *Accumulator[int64] {
	return NewAccumulator(b, name, 0, func(x, y int64) int64 { return x + y })
}

// Add merges v into the accumulator. Safe for concurrent use.
func (a *Accumulator[T]) Add(v T) {
	a.mu.Lock()
	a.v = a.merge(a.v, v)
	a.touched = true
	a.mu.Unlock()
}

// Value is the merged value: on the driver, every applied update so far;
// on an executor, this task's own updates.
func (a *Accumulator[T]) Value() T {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.v
}

// Name is the name the accumulator was created with.
func (a *Accumulator[T]) Name() string { return a.name }

func (a *Accumulator[T]) describe() string { return fmt.Sprintf("%q %s", a.name, typeName[T]()) }

func (a *Accumulator[T]) update() ([]byte, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.touched {
		return nil, false, nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&a.v); err != nil {
		return nil, false, fmt.Errorf("dataset: encode accumulator %q: %w", a.name, err)
	}
	return buf.Bytes(), true, nil
}

func (a *Accumulator[T]) apply(enc []byte) error {
	var v T
	if err := gob.NewDecoder(bytes.NewReader(enc)).Decode(&v); err != nil {
		return fmt.Errorf("dataset: decode a task's update of accumulator %q: %w", a.name, err)
	}
	a.Add(v)
	return nil
}

// accumulatorUpdates are the updates a task's accumulators collected.
func accumulatorUpdates(b *Builder) ([]accUpdate, error) {
	var out []accUpdate
	for i, a := range b.accums {
		enc, ok, err := a.update()
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, accUpdate{ID: i, Desc: a.describe(), Value: enc})
		}
	}
	return out, nil
}

// applyUpdates merges one successful task's updates into the driver's
// accumulators.
func (b *Builder) applyUpdates(ups []accUpdate) error {
	for _, u := range ups {
		if u.ID < 0 || u.ID >= len(b.accums) || b.accums[u.ID].describe() != u.Desc {
			return fmt.Errorf("%w in job %q: a task updated accumulator %d (%s), which the driver's body did not create; create accumulators in the same order in every process",
				ErrGraphMismatch, b.job, u.ID, u.Desc)
		}
		if err := b.accums[u.ID].apply(u.Value); err != nil {
			return err
		}
	}
	return nil
}
