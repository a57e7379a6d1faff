package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// partitionRand is the random stream of partition p under seed: the same
// in every process and attempt, so a recomputed partition draws the same
// numbers (given its input in the same order).
func partitionRand(seed uint64, p int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^salt, uint64(p)+0x9e3779b97f4a7c15))
}

// poisson draws from a Poisson distribution of the given mean (Knuth's
// method: fine for the small means sampling uses).
func poisson(r *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	l, k, prod := math.Exp(-mean), 0, r.Float64()
	for prod > l {
		k++
		prod *= r.Float64()
	}
	return k
}

// SampleWithReplacement samples with replacement: each record appears a
// Poisson-distributed number of times, of mean fraction (Spark's
// sample(withReplacement = true, fraction, seed)); fraction may exceed 1.
// It keeps the input's Partitioner.
func SampleWithReplacement[T any](ds Dataset[T], fraction float64, seed uint64) Dataset[T] {
	out := narrow("sample", ds, func(tc *taskContext, p int, emit func([]T) error) error {
		r := partitionRand(seed, p, 0x5a3ab1e)
		var batch []T
		return ds.n.run(tc, p, func(in []T) error {
			batch = batch[:0]
			for _, x := range in {
				for range poisson(r, fraction) {
					batch = append(batch, x)
				}
			}
			if len(batch) == 0 {
				return nil
			}
			return emit(batch)
		})
	})
	out.n.data = digestOf(fraction, seed)
	out.n.dependsOnOrder()
	return keepPartitioning(ds, out)
}

// RandomSplit splits ds into len(weights) datasets holding, at random,
// about each weight's share of the records (normalised; Spark's
// randomSplit). Every record lands in exactly one split: each partition
// draws one number per record from a stream fixed by seed and the
// partition, the same in every split, and a split keeps the records whose
// number falls in its range of [0, 1).
func RandomSplit[T any](ds Dataset[T], weights []float64, seed uint64) []Dataset[T] {
	total := 0.0
	for _, w := range weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			ds.n.b.fail(fmt.Errorf("dataset: RandomSplit: weights must be non-negative and finite, got %v", weights))
		}
		total += w
	}
	if len(weights) == 0 || total <= 0 {
		ds.n.b.fail(fmt.Errorf("dataset: RandomSplit: weights %v must sum to more than 0", weights))
		total = 1
	}
	out := make([]Dataset[T], len(weights))
	lo := 0.0
	for i, w := range weights {
		hi := lo + w/total
		if i == len(weights)-1 {
			hi = math.Inf(1)
		}
		from, to := lo, hi
		split := narrow("randomSplit", ds, func(tc *taskContext, p int, emit func([]T) error) error {
			r := partitionRand(seed, p, 0x5b117)
			var batch []T
			return ds.n.run(tc, p, func(in []T) error {
				batch = batch[:0]
				for _, x := range in {
					if u := r.Float64(); u >= from && u < to {
						batch = append(batch, x)
					}
				}
				if len(batch) == 0 {
					return nil
				}
				return emit(batch)
			})
		})
		split.n.data = digestOf(weights, seed, i)
		split.n.dependsOnOrder()
		out[i] = keepPartitioning(ds, split)
		lo = hi
	}
	return out
}

// drawPositions draws k positions of [0, n), sorted: distinct ones
// (Floyd's algorithm) or, with replacement, k independent ones.
func drawPositions(r *rand.Rand, n, k int64, replace bool) []int64 {
	out := make([]int64, 0, k)
	if replace {
		for range k {
			out = append(out, r.Int64N(n))
		}
	} else {
		k = min(k, n)
		seen := make(map[int64]bool, k)
		for j := n - k; j < n; j++ {
			t := r.Int64N(j + 1)
			if seen[t] {
				t = j
			}
			seen[t] = true
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// countPartitions runs a job counting every partition's records.
func countPartitions[T any](ds Dataset[T], op string) ([]int64, error) {
	return runAction(ds, op, nil, func(tc *taskContext, p int) (int64, error) {
		var n int64
		err := ds.n.run(tc, p, func(b []T) error { n += int64(len(b)); return nil })
		return n, err
	})
}

// TakeSample returns num records drawn at random (Spark's takeSample):
// distinct records when withReplacement is false (all of them, shuffled,
// when num is at least the count), else num independent draws. Unlike
// Spark, which samples by a fraction and retries until it has enough, it
// is exact in two jobs: one counts each partition's records, the other
// collects the positions drawn (from a stream fixed by seed) in each.
func TakeSample[T any](ds Dataset[T], withReplacement bool, num int, seed uint64) ([]T, error) {
	if num < 0 {
		return nil, fmt.Errorf("dataset: TakeSample: negative number of records %d", num)
	}
	if num == 0 || ds.n.parts == 0 {
		return []T{}, nil
	}
	counts, err := countPartitions(ds, "takeSample")
	if err != nil {
		return nil, err
	}
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return []T{}, nil
	}
	r := rand.New(rand.NewPCG(seed, 0x7a4e5a3))
	positions := drawPositions(r, total, int64(num), withReplacement)
	plan := make([][]int64, len(counts)) // per partition, local positions (repeated for replacement)
	start, p := int64(0), 0
	for _, pos := range positions {
		for pos >= start+counts[p] {
			start += counts[p]
			p++
		}
		plan[p] = append(plan[p], pos-start)
	}
	var parts []int
	for p, pl := range plan {
		if len(pl) > 0 {
			parts = append(parts, p)
		}
	}
	res, err := runAction(ds, "takeSample", parts, func(tc *taskContext, p int) ([]T, error) {
		want, out, i := plan[p], []T(nil), int64(0)
		err := ds.n.run(tc, p, func(in []T) error {
			for _, x := range in {
				for len(want) > 0 && want[0] == i {
					out = append(out, x)
					want = want[1:]
				}
				i++
			}
			if len(want) == 0 {
				return errEnough
			}
			return nil
		})
		if errors.Is(err, errEnough) {
			err = nil
		}
		if err == nil && len(want) > 0 {
			err = fmt.Errorf("dataset: TakeSample: partition %d has %d records now, %d when counted: its input is not deterministic", p, i, counts[p])
		}
		return out, err
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(res...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// SampleByKey samples each key's records with its own fraction
// (Spark's stratified sampleByKey): Bernoulli sampling without
// replacement, Poisson with; a key missing from fractions fails the task.
// It keeps the input's Partitioner.
func SampleByKey[K comparable, V any](ds Dataset[KV[K, V]], withReplacement bool, fractions map[K]float64, seed uint64) Dataset[KV[K, V]] {
	out := narrow("sampleByKey", ds, func(tc *taskContext, p int, emit func([]KV[K, V]) error) error {
		r := partitionRand(seed, p, 0x57a7)
		var batch []KV[K, V]
		return ds.n.run(tc, p, func(in []KV[K, V]) error {
			batch = batch[:0]
			for _, kv := range in {
				f, ok := fractions[kv.Key]
				if !ok {
					return fmt.Errorf("dataset: SampleByKey: no fraction for key %v", kv.Key)
				}
				n := 0
				if withReplacement {
					n = poisson(r, f)
				} else if r.Float64() < f {
					n = 1
				}
				for range n {
					batch = append(batch, kv)
				}
			}
			if len(batch) == 0 {
				return nil
			}
			return emit(batch)
		})
	})
	out.n.data = digestOf(withReplacement, fractions, seed)
	out.n.dependsOnOrder()
	return keepPartitioning(ds, out)
}

// SampleByKeyExact samples exactly ⌈count·fraction⌉ records of each key
// (Spark's sampleByKeyExact; at most the key's count without
// replacement). It runs a job counting each key's records per partition
// when called, then draws each key's positions from a stream fixed by
// seed; the sample holds the records at those positions (a record drawn
// twice with replacement appears twice). It keeps the input's
// Partitioner.
func SampleByKeyExact[K comparable, V any](ds Dataset[KV[K, V]], withReplacement bool, fractions map[K]float64, seed uint64) Dataset[KV[K, V]] {
	counts, err := runAction(ds, "sampleByKeyExact", nil, func(tc *taskContext, p int) (map[K]int64, error) {
		m := map[K]int64{}
		err := ds.n.run(tc, p, func(in []KV[K, V]) error {
			for _, kv := range in {
				m[kv.Key]++
			}
			return nil
		})
		return m, err
	})
	var plan []map[K]map[int64]int
	if err == nil {
		plan, err = exactPlan(counts, withReplacement, fractions, seed)
		if err != nil {
			ds.n.b.fail(err)
		}
	}
	out := narrow("sampleByKeyExact", ds, func(tc *taskContext, p int, emit func([]KV[K, V]) error) error {
		if p >= len(plan) {
			return fmt.Errorf("dataset: SampleByKeyExact: no plan for partition %d", p)
		}
		seen := map[K]int64{}
		var batch []KV[K, V]
		return ds.n.run(tc, p, func(in []KV[K, V]) error {
			batch = batch[:0]
			for _, kv := range in {
				i := seen[kv.Key]
				seen[kv.Key] = i + 1
				for range plan[p][kv.Key][i] {
					batch = append(batch, kv)
				}
			}
			if len(batch) == 0 {
				return nil
			}
			return emit(batch)
		})
	})
	out.n.data = digestOf(withReplacement, fractions, seed)
	out.n.dependsOnOrder()
	return keepPartitioning(ds, out)
}

// exactPlan draws each key's sample positions and places them: per
// partition, per key, the key's local record index → times drawn. Keys
// are visited in the order of their encodings, so every process draws the
// same.
func exactPlan[K comparable](counts []map[K]int64, replace bool, fractions map[K]float64, seed uint64) ([]map[K]map[int64]int, error) {
	totals := map[K]int64{}
	for _, m := range counts {
		for k, n := range m {
			totals[k] += n
		}
	}
	type keyed struct {
		k   K
		enc []byte
	}
	codec := recordcodec.For[K]()
	var keys []keyed
	for k := range totals {
		enc, err := codec.Append(nil, k)
		if err != nil {
			return nil, fmt.Errorf("dataset: SampleByKeyExact: encode key %v: %w", k, err)
		}
		keys = append(keys, keyed{k, enc})
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i].enc, keys[j].enc) < 0 })
	plan := make([]map[K]map[int64]int, len(counts))
	for i := range plan {
		plan[i] = map[K]map[int64]int{}
	}
	r := rand.New(rand.NewPCG(seed, 0xe8ac7))
	for _, kk := range keys {
		f, ok := fractions[kk.k]
		if !ok {
			return nil, fmt.Errorf("dataset: SampleByKeyExact: no fraction for key %v", kk.k)
		}
		if f < 0 || (!replace && f > 1) {
			return nil, fmt.Errorf("dataset: SampleByKeyExact: fraction %v of key %v out of range", f, kk.k)
		}
		n := totals[kk.k]
		start, p := int64(0), 0
		for _, pos := range drawPositions(r, n, int64(math.Ceil(float64(n)*f)), replace) {
			for pos >= start+counts[p][kk.k] {
				start += counts[p][kk.k]
				p++
			}
			if plan[p][kk.k] == nil {
				plan[p][kk.k] = map[int64]int{}
			}
			plan[p][kk.k][pos-start]++
		}
	}
	return plan, nil
}
