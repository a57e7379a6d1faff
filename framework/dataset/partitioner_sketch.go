package dataset

import (
	"math"
	"slices"
)

// Range bounds as Spark's RangePartitioner picks them (its sketch and
// determineBounds): every input partition is sampled with the same
// reservoir size, each sampled key weighs as many records as it stands
// for (partition size / sample size), partitions much larger than
// average are sampled again at the overall fraction, and the bounds cut
// the weighted, sorted sample into equal weights. Without the weights a
// small partition's keys count as much as a large one's, and skewed input
// gives output partitions of very different sizes.

// keySketch is one input partition's sketch: how many records it has and
// a uniform sample of their keys.
type keySketch[S any] struct {
	N      int64
	Sample []S
}

// weightedKey is a sampled key and the number of records it stands for.
type weightedKey[S any] struct {
	key    S
	weight float64
}

// rangeBounds samples ds's keys (mapped by key to a comparable form S)
// and picks at most parts-1 increasing bounds. It runs one sampling
// action, and a second over the partitions much larger than average.
// seed fixes the re-sampling. A failed action leaves no bounds; the
// action recorded its error and the next action returns it.
func rangeBounds[K, V, S any](ds Dataset[KV[K, V]], key func(K) (S, error), compare func(a, b S) int, parts int, seed uint64) []S {
	if parts <= 1 || ds.n.parts == 0 {
		return nil
	}
	sampleSize := math.Min(20*float64(parts), 1e6)
	perPart := int(math.Ceil(3 * sampleSize / float64(ds.n.parts)))
	sketches, err := runAction(ds, "sample", nil, func(tc *taskContext, p int) (keySketch[S], error) {
		return sketchPartition(tc, ds.n, p, perPart, key)
	})
	if err != nil {
		return nil
	}
	var total int64
	for _, s := range sketches {
		total += s.N
	}
	fraction := math.Min(sampleSize/math.Max(float64(total), 1), 1)
	var cands []weightedKey[S]
	var imbalanced []int
	for p, s := range sketches {
		if fraction*float64(s.N) > float64(perPart) {
			imbalanced = append(imbalanced, p)
			continue
		}
		w := float64(s.N) / float64(max(1, len(s.Sample)))
		for _, k := range s.Sample {
			cands = append(cands, weightedKey[S]{k, w})
		}
	}
	if len(imbalanced) > 0 {
		extra, err := runAction(ds, "resample", imbalanced, func(tc *taskContext, p int) ([]S, error) {
			return bernoulliKeys(tc, ds.n, p, fraction, seed, key)
		})
		if err != nil {
			return nil
		}
		for _, ks := range extra {
			for _, k := range ks {
				cands = append(cands, weightedKey[S]{k, 1 / fraction})
			}
		}
	}
	return boundsOfWeighted(cands, parts, compare)
}

// sketchPartition counts partition p's records and samples k of their
// keys uniformly (Algorithm R with a stream fixed by p).
func sketchPartition[K, V, S any](tc *taskContext, n *tnode[KV[K, V]], p, k int, key func(K) (S, error)) (keySketch[S], error) {
	r := partitionRand(0, p, 0x534b)
	var s keySketch[S]
	err := n.run(tc, p, func(in []KV[K, V]) error {
		for _, kv := range in {
			s.N++
			j := int64(-1)
			if len(s.Sample) >= k {
				if j = r.Int64N(s.N); j >= int64(k) {
					continue
				}
			}
			sk, err := key(kv.Key)
			if err != nil {
				return err
			}
			if j < 0 {
				s.Sample = append(s.Sample, sk)
			} else {
				s.Sample[j] = sk
			}
		}
		return nil
	})
	return s, err
}

// bernoulliKeys keeps each of partition p's keys with probability
// fraction.
func bernoulliKeys[K, V, S any](tc *taskContext, n *tnode[KV[K, V]], p int, fraction float64, seed uint64, key func(K) (S, error)) ([]S, error) {
	r := partitionRand(seed, p, 0x5253)
	var out []S
	err := n.run(tc, p, func(in []KV[K, V]) error {
		for _, kv := range in {
			if r.Float64() >= fraction {
				continue
			}
			sk, err := key(kv.Key)
			if err != nil {
				return err
			}
			out = append(out, sk)
		}
		return nil
	})
	return out, err
}

// boundsOfWeighted sorts the candidates and cuts them into parts runs of
// equal weight, skipping a bound equal to the one before (Spark's
// determineBounds): with many equal keys there are fewer, wider
// partitions.
func boundsOfWeighted[S any](cands []weightedKey[S], parts int, compare func(a, b S) int) []S {
	slices.SortStableFunc(cands, func(a, b weightedKey[S]) int { return compare(a.key, b.key) })
	sum := 0.0
	for _, c := range cands {
		sum += c.weight
	}
	step := sum / float64(parts)
	var bounds []S
	cum, target := 0.0, step
	for i := 0; i < len(cands) && len(bounds) < parts-1; i++ {
		cum += cands[i].weight
		if cum < target {
			continue
		}
		if len(bounds) == 0 || compare(cands[i].key, bounds[len(bounds)-1]) > 0 {
			bounds = append(bounds, cands[i].key)
			target += step
		}
	}
	return bounds
}
