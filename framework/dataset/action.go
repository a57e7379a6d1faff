package dataset

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
)

// runAction runs one action over ds: perPart computes each partition's
// part of the result on an executor (parts nil: all partitions). On the
// driver it plans and runs a job of stages and returns the parts in
// order; on an executor replaying the body it returns the driver's
// recorded parts for earlier actions, captures the graph at the action
// the task belongs to, and stops the body there.
func runAction[T, R any](ds Dataset[T], op string, parts []int, perPart func(tc *taskContext, p int) (R, error)) ([]R, error) {
	out, err := runActionJob(ds, op, parts, perPart)
	if err != nil {
		return nil, err
	}
	// Datasets marked by Checkpoint that the action computed are written
	// now, by jobs of their own (Spark's doCheckpoint after runJob).
	if err := ds.n.b.checkpointAfter(ds.n); err != nil {
		b := ds.n.b
		if b.Driver() && b.err == nil {
			b.err = fmt.Errorf("%w: %s: %w", errActionFailed, op, err)
		}
		if b.Driver() {
			return nil, b.err
		}
		return nil, err
	}
	return out, nil
}

func runActionJob[T, R any](ds Dataset[T], op string, parts []int, perPart func(tc *taskContext, p int) (R, error)) ([]R, error) {
	b := ds.n.b
	idx := b.actions
	b.actions++
	key := fmt.Sprintf("action:%d", idx)
	if r := b.replay; r != nil {
		switch {
		case idx < r.stopAt:
			var out []R
			if err := gob.NewDecoder(bytes.NewReader(b.values[key])).Decode(&out); err != nil {
				return nil, fmt.Errorf("dataset: job %q: decode the driver's result of action %d: %w", b.job, idx, err)
			}
			return out, nil
		case idx == r.stopAt:
			r.captured = &capture{b: b, nodes: append([]node(nil), b.nodes...), final: ds.n, op: op,
				perPart: func(tc *taskContext, p int) ([]byte, error) {
					v, err := perPart(tc, p)
					if err != nil {
						return nil, err
					}
					var buf bytes.Buffer
					if err := gob.NewEncoder(&buf).Encode(&v); err != nil {
						return nil, fmt.Errorf("dataset: encode the result of %s: %w", op, err)
					}
					return buf.Bytes(), nil
				}}
		}
		return nil, errReplayed
	}
	if b.err != nil {
		return nil, b.err
	}
	if b.buildErr != nil {
		b.err = fmt.Errorf("%w: %w", errActionFailed, b.buildErr)
		return nil, b.err
	}
	encoded, err := b.run.runJob(b, idx, actionName(), ds.n, parts)
	if err != nil {
		b.err = fmt.Errorf("%w: %s: %w", errActionFailed, op, err)
		return nil, b.err
	}
	out := make([]R, len(encoded))
	for i, e := range encoded {
		if err := gob.NewDecoder(bytes.NewReader(e)).Decode(&out[i]); err != nil {
			b.err = fmt.Errorf("%w: %s: decode a partition's result: %w", errActionFailed, op, err)
			return nil, b.err
		}
	}
	// Later tasks of this run replay the body through this action: they
	// need its result, encoded once, when the next action is planned.
	b.lazy = append(b.lazy, func() error {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(out); err != nil {
			return fmt.Errorf("dataset: encode the result of %s for executors: %w", op, err)
		}
		b.values[key] = buf.Bytes()
		return nil
	})
	return out, nil
}

// flushLazy encodes what earlier actions left to encode.
func (b *Builder) flushLazy() error {
	for _, f := range b.lazy {
		if err := f(); err != nil {
			return err
		}
	}
	b.lazy = nil
	return nil
}

// Collect returns every record, in partition order.
func Collect[T any](ds Dataset[T]) ([]T, error) {
	parts, err := runAction(ds, "collect", nil, func(tc *taskContext, p int) ([]T, error) {
		return ds.n.collectPartition(tc, p)
	})
	if err != nil {
		return nil, err
	}
	var out []T
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// Count is the number of records.
func Count[T any](ds Dataset[T]) (int64, error) {
	parts, err := runAction(ds, "count", nil, func(tc *taskContext, p int) (int64, error) {
		var n int64
		err := ds.n.run(tc, p, func(b []T) error { n += int64(len(b)); return nil })
		return n, err
	})
	var n int64
	for _, c := range parts {
		n += c
	}
	return n, err
}

// Take returns the first n records (in partition order), computing as few
// partitions as it can: one, then up to four times as many as it has
// scanned each round, as Spark does.
func Take[T any](ds Dataset[T], n int) ([]T, error) {
	var out []T
	scanned, total := 0, ds.n.parts
	for len(out) < n && scanned < total {
		try := 1
		if scanned > 0 {
			try = scanned * 4
			if len(out) > 0 {
				try = min(try, max(1, int(float64(n-len(out))*1.5*float64(scanned)/float64(len(out)))))
			}
		}
		parts := make([]int, 0, try)
		for p := scanned; p < min(total, scanned+try); p++ {
			parts = append(parts, p)
		}
		need := n - len(out)
		res, err := runAction(ds, "take", parts, func(tc *taskContext, p int) ([]T, error) {
			var got []T
			err := ds.n.run(tc, p, func(b []T) error {
				got = append(got, b[:min(len(b), need-len(got))]...)
				if len(got) >= need {
					return errEnough
				}
				return nil
			})
			if errors.Is(err, errEnough) {
				err = nil
			}
			return got, err
		})
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			out = append(out, r[:min(len(r), n-len(out))]...)
		}
		scanned += len(parts)
	}
	return out, nil
}

var errEnough = errors.New("dataset: enough records")

// First is the first record; ok is false for an empty dataset.
func First[T any](ds Dataset[T]) (x T, ok bool, err error) {
	xs, err := Take(ds, 1)
	if err != nil || len(xs) == 0 {
		return x, false, err
	}
	return xs[0], true, nil
}

type partial[T any] struct {
	V  T
	Ok bool
}

// Reduce merges all records with fn (associative and commutative); ok is
// false for an empty dataset.
func Reduce[T any](ds Dataset[T], fn func(T, T) T) (x T, ok bool, err error) {
	parts, err := runAction(ds, "reduce", nil, func(tc *taskContext, p int) (partial[T], error) {
		var acc partial[T]
		err := ds.n.run(tc, p, func(b []T) error {
			for _, v := range b {
				if acc.Ok {
					acc.V = fn(acc.V, v)
				} else {
					acc = partial[T]{V: v, Ok: true}
				}
			}
			return nil
		})
		return acc, err
	})
	for _, p := range parts {
		if !p.Ok {
			continue
		}
		if ok {
			x = fn(x, p.V)
		} else {
			x, ok = p.V, true
		}
	}
	return x, ok, err
}

// Fold merges every partition's records into a copy of zero with fn,
// then the partitions' results into another copy. fn may modify and
// return its first argument: every task, and the driver, starts from its
// own copy of zero (see Aggregate).
func Fold[T any](ds Dataset[T], zero T, fn func(T, T) T) (T, error) {
	return aggregate(ds, "fold", zero, fn, fn)
}

// Aggregate folds each partition's records into a copy of zero with seq
// and merges the partitions' results into another copy with comb. seq and
// comb may modify and return their first argument: each task and the
// driver start from their own copy of zero, as in Spark — a value without
// references (numbers, strings, arrays and structs of them) is copied by
// assignment, any other through its record codec, so it must be a type
// the codec round-trips (for gob: exported fields).
func Aggregate[T, U any](ds Dataset[T], zero U, seq func(U, T) U, comb func(U, U) U) (U, error) {
	return aggregate(ds, "aggregate", zero, seq, comb)
}

func aggregate[T, U any](ds Dataset[T], op string, zero U, seq func(U, T) U, comb func(U, U) U) (U, error) {
	fresh := zeroMaker(ds.n.b, op, zero)
	parts, err := runAction(ds, op, nil, func(tc *taskContext, p int) (U, error) {
		acc := fresh()
		err := ds.n.run(tc, p, func(b []T) error {
			for _, v := range b {
				acc = seq(acc, v)
			}
			return nil
		})
		return acc, err
	})
	if err != nil {
		return zero, err
	}
	acc := fresh()
	for _, p := range parts {
		acc = comb(acc, p)
	}
	return acc, nil
}

// Foreach calls fn on every record, on the executors.
func Foreach[T any](ds Dataset[T], fn func(T)) error {
	_, err := runAction(ds, "foreach", nil, func(tc *taskContext, p int) (bool, error) {
		return true, ds.n.run(tc, p, func(b []T) error {
			for _, v := range b {
				fn(v)
			}
			return nil
		})
	})
	return err
}

// CountByKey counts the records of each key.
func CountByKey[K comparable, V any](ds Dataset[KV[K, V]]) (map[K]int64, error) {
	// MapValues keeps ds's partitioner, so a partitioned ds is counted
	// where it is (Spark's mapValues(_ => 1L).reduceByKey(_ + _))
	counts := ReduceByKey(MapValues(ds, func(V) int64 { return 1 }), func(a, b int64) int64 { return a + b }, 0)
	kvs, err := Collect(counts)
	out := make(map[K]int64, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out, err
}

// Context is the job's context: cancelled when the run is.
func (b *Builder) Context() context.Context {
	if b.run != nil {
		return b.run.ctx
	}
	return context.Background()
}
