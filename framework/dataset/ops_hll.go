package dataset

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// HLL is a HyperLogLog counter of distinct values (Heule, Nunkesser and
// Hall's HyperLogLog++ as Spark uses it: 64-bit hashes, 2^P registers, a
// sparse form while few registers are set, linear counting at small
// cardinalities). Unlike Spark's stream-lib, it does not apply HLL++'s
// empirical bias correction between 2.5 and 5 times 2^P distinct values,
// where its raw estimate runs a few percent high. Values are hashed from
// their record codec's encoding with a fixed-seed hash, so counters made
// in different processes merge.
type HLL struct {
	P      uint8
	Sparse map[uint32]uint8 // register → rank, while few are set
	Dense  []uint8          // every register, once many are set
}

// NewHLL is an empty counter of 2^p registers (4 ≤ p ≤ 20).
func NewHLL(p int) (HLL, error) {
	if p < 4 || p > 20 {
		return HLL{}, fmt.Errorf("dataset: HyperLogLog precision %d out of [4, 20]", p)
	}
	return HLL{P: uint8(p), Sparse: map[uint32]uint8{}}, nil
}

// hllPrecision is Spark's precision for a relative standard deviation:
// ⌈2·log2(1.054/relativeSD)⌉, at least 4.
func hllPrecision(relativeSD float64) (int, error) {
	if !(relativeSD > 0) {
		return 0, fmt.Errorf("dataset: relativeSD %v must be above 0", relativeSD)
	}
	p := max(4, int(math.Ceil(2*math.Log2(1.054/relativeSD))))
	if p > 20 {
		return 0, fmt.Errorf("dataset: relativeSD %v needs HyperLogLog precision %d; the most is 20 (relativeSD ≥ 0.00103)", relativeSD, p)
	}
	return p, nil
}

// hash64 mixes the fixed-seed hash of an encoding once more (the
// registers use its top bits, the ranks the rest).
func hash64(b []byte) uint64 {
	x := hashKey(b)
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	return x
}

// AddHash adds a value by its 64-bit hash.
func (h HLL) AddHash(x uint64) HLL {
	idx := uint32(x >> (64 - h.P))
	w := x<<h.P | 1<<(h.P-1) // a stop bit so the rank is bounded
	rank := uint8(bits.LeadingZeros64(w) + 1)
	if h.Dense != nil {
		h.Dense[idx] = max(h.Dense[idx], rank)
		return h
	}
	if h.Sparse == nil {
		h.Sparse = map[uint32]uint8{}
	}
	h.Sparse[idx] = max(h.Sparse[idx], rank)
	if len(h.Sparse) > (1<<h.P)/8 {
		h = h.densify()
	}
	return h
}

func (h HLL) densify() HLL {
	d := make([]uint8, 1<<h.P)
	for i, r := range h.Sparse {
		d[i] = r
	}
	return HLL{P: h.P, Dense: d}
}

// Merge merges o's registers (of the same precision) into h.
func (h HLL) Merge(o HLL) HLL {
	if o.Dense != nil && h.Dense == nil {
		h = h.densify()
	}
	if h.Dense != nil {
		if o.Dense != nil {
			for i, r := range o.Dense {
				h.Dense[i] = max(h.Dense[i], r)
			}
			return h
		}
		for i, r := range o.Sparse {
			h.Dense[i] = max(h.Dense[i], r)
		}
		return h
	}
	for i, r := range o.Sparse {
		if h.Sparse == nil {
			h.Sparse = map[uint32]uint8{}
		}
		h.Sparse[i] = max(h.Sparse[i], r)
	}
	if len(h.Sparse) > (1<<h.P)/8 {
		h = h.densify()
	}
	return h
}

// Estimate is the estimated number of distinct values added.
func (h HLL) Estimate() int64 {
	m := float64(int(1) << h.P)
	zeros, sum := m, 0.0
	if h.Dense != nil {
		zeros = 0
		for _, r := range h.Dense {
			sum += math.Ldexp(1, -int(r))
			if r == 0 {
				zeros++
			}
		}
	} else {
		zeros -= float64(len(h.Sparse))
		sum = zeros
		for _, r := range h.Sparse {
			sum += math.Ldexp(1, -int(r))
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	switch h.P {
	case 4:
		alpha = 0.673
	case 5:
		alpha = 0.697
	case 6:
		alpha = 0.709
	}
	e := alpha * m * m / sum
	if zeros > 0 {
		if lc := m * math.Log(m/zeros); lc <= hllThreshold(int(h.P)) || e <= 2.5*m {
			return int64(math.Round(lc))
		}
	}
	return int64(math.Round(e))
}

// hllThreshold is HLL++'s cardinality below which linear counting is used
// (the paper's empirical thresholds for p = 4…18; 5·2^p above).
func hllThreshold(p int) float64 {
	t := []float64{10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000, 350000}
	if p-4 < len(t) {
		return t[p-4]
	}
	return 5 * math.Ldexp(1, p)
}

// CountApproxDistinct estimates the number of distinct records with
// HyperLogLog++ (Spark's countApproxDistinct): relativeSD is the wanted
// relative standard deviation (Spark's default is 0.05), giving
// 2^⌈2·log2(1.054/relativeSD)⌉ registers.
func CountApproxDistinct[T any](ds Dataset[T], relativeSD float64) (int64, error) {
	p, err := hllPrecision(relativeSD)
	if err != nil {
		return 0, err
	}
	codec := recordcodec.For[T]()
	parts, err := runAction(ds, "countApproxDistinct", nil, func(tc *taskContext, part int) (HLL, error) {
		h, _ := NewHLL(p)
		var buf []byte
		err := ds.n.run(tc, part, func(in []T) error {
			for _, x := range in {
				var err error
				if buf, err = codec.Append(buf[:0], x); err != nil {
					return err
				}
				h = h.AddHash(hash64(buf))
			}
			return nil
		})
		return h, err
	})
	if err != nil {
		return 0, err
	}
	h, _ := NewHLL(p)
	for _, x := range parts {
		h = h.Merge(x)
	}
	return h.Estimate(), nil
}

// CountApproxDistinctByKey estimates the number of distinct values of
// each key with HyperLogLog++ (Spark's countApproxDistinctByKey),
// combining counters map-side; relativeSD as CountApproxDistinct, parts
// as ReduceByKey.
func CountApproxDistinctByKey[K comparable, V any](ds Dataset[KV[K, V]], relativeSD float64, parts int) Dataset[KV[K, int64]] {
	p, err := hllPrecision(relativeSD)
	if err != nil {
		ds.n.b.fail(err)
		p = 4
	}
	codec := recordcodec.For[V]()
	add := func(h HLL, v V) HLL {
		buf, err := codec.Append(nil, v)
		if err != nil {
			panic(fmt.Sprintf("dataset: CountApproxDistinctByKey: encode a value: %v", err))
		}
		return h.AddHash(hash64(buf))
	}
	agg := Aggregator[V, HLL]{
		CreateCombiner: func(v V) HLL { h, _ := NewHLL(p); return add(h, v) },
		MergeValue:     add,
		MergeCombiners: func(a, b HLL) HLL { return a.Merge(b) },
	}
	part, keys := defaultPartitioner[K](ds.n.b, parts, ds.n)
	counters := combineByKey(ds, "countApproxDistinctByKey", agg, part, keys)
	return MapValues(counters, func(h HLL) int64 { return h.Estimate() })
}
