package shuffle

import (
	"cmp"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// Aggregator combines the values of one key (Spark's Aggregator):
// reduceByKey is (identity, f, f), groupByKey appends to a slice.
type Aggregator[V, C any] struct {
	CreateCombiner func(V) C
	MergeValue     func(C, V) C
	MergeCombiners func(C, C) C
}

// CombineBytes is agg's MergeCombiners over encoded combiners, for
// merging sorted runs (Config.Combine) and reduce-side merges.
func CombineBytes[C any](codec recordcodec.Codec[C], merge func(C, C) C) Combine {
	return func(dst, a, b []byte) ([]byte, error) {
		x, err := codec.Decode(a)
		if err != nil {
			return nil, err
		}
		y, err := codec.Decode(b)
		if err != nil {
			return nil, err
		}
		return codec.Append(dst[:0], merge(x, y))
	}
}

// CombiningWriter is a map task's writer with map-side combine: records
// go into a hash map of combiners keyed by encoded key; when its
// estimated size passes the task's memory it is spilled as a sorted run,
// and Commit merges the runs, combining equal keys.
type CombiningWriter[K, V, C any] struct {
	w      *Writer
	keys   recordcodec.Codec[K]
	combs  recordcodec.Codec[C]
	agg    Aggregator[V, C]
	m      map[string]*slot[C]
	est    int64 // estimated bytes of m
	kbuf   []byte
	scr    []byte
	sorted []sortedSlot[C]
}

type slot[C any] struct {
	c     C
	part  int32
	n     uint32 // values merged
	bytes int32  // last measured encoded size of c
}

type sortedSlot[C any] struct {
	key string
	s   *slot[C]
}

// slotOverhead approximates a map entry's cost besides key and combiner:
// the string header, the pointer, the slot and the map's own slots.
const slotOverhead = 96

// NewCombiningWriter is cfg's writer with agg applied map-side. cfg.Order
// must be sorted (ByteOrder unless the keys need another); cfg.Combine is
// set from agg.
func NewCombiningWriter[K, V, C any](cfg Config, keys recordcodec.Codec[K], combiners recordcodec.Codec[C], agg Aggregator[V, C]) (*CombiningWriter[K, V, C], error) {
	if !cfg.Order.Sorted() {
		cfg.Order = ByteOrder
	}
	cfg.Combine = CombineBytes(combiners, agg.MergeCombiners)
	w, err := NewWriter(cfg)
	if err != nil {
		return nil, err
	}
	return &CombiningWriter[K, V, C]{w: w, keys: keys, combs: combiners, agg: agg, m: map[string]*slot[C]{}}, nil
}

// Add merges value into key's combiner for reduce partition part.
func (c *CombiningWriter[K, V, C]) Add(part int, key K, value V) error {
	c.w.metrics.RecordsWritten++
	var err error
	if c.kbuf, err = c.keys.Append(c.kbuf[:0], key); err != nil {
		return err
	}
	if s, ok := c.m[string(c.kbuf)]; ok {
		s.c = c.agg.MergeValue(s.c, value)
		s.n++
		if s.n&(s.n-1) == 0 { // re-measure at powers of two: growing combiners stay accounted
			return c.measure(s)
		}
		return nil
	}
	s := &slot[C]{c: c.agg.CreateCombiner(value), part: int32(part), n: 1}
	c.m[string(c.kbuf)] = s
	c.est += int64(len(c.kbuf)) + slotOverhead + int64(unsafe.Sizeof(*s))
	return c.measure(s)
}

func (c *CombiningWriter[K, V, C]) measure(s *slot[C]) error {
	var err error
	if c.scr, err = c.combs.Append(c.scr[:0], s.c); err != nil {
		return err
	}
	c.est += int64(len(c.scr)) - int64(s.bytes)
	s.bytes = int32(len(c.scr))
	return c.reserve()
}

// reserve grows the grant to cover the estimate, spilling when refused.
func (c *CombiningWriter[K, V, C]) reserve() error {
	g := c.w.cfg.Memory
	for c.est > g.Held() {
		if !g.Grow(max(c.est-g.Held(), int64(c.w.cfg.ChunkSize))) {
			if len(c.m) <= 1 {
				g.forceGrow(c.est - g.Held())
				return nil
			}
			return c.spill()
		}
	}
	return nil
}

func (c *CombiningWriter[K, V, C]) spill() error {
	start := c.w.cfg.Clock()
	err := c.w.spill(c.sortedSource())
	clear(c.m)
	c.sorted = c.sorted[:0]
	c.est = 0
	c.w.metrics.WriteTime += c.w.cfg.Clock().Sub(start)
	return err
}

// sortedSource sorts the map's entries by (partition, key) and streams
// them with their combiners encoded.
func (c *CombiningWriter[K, V, C]) sortedSource() source {
	c.sorted = c.sorted[:0]
	for k, s := range c.m {
		c.sorted = append(c.sorted, sortedSlot[C]{k, s})
	}
	o := c.w.cfg.Order
	slices.SortFunc(c.sorted, func(a, b sortedSlot[C]) int {
		if a.s.part != b.s.part {
			return cmp.Compare(a.s.part, b.s.part)
		}
		if o.bytewise {
			return strings.Compare(a.key, b.key)
		}
		return o.compare(bytesOf(a.key), bytesOf(b.key))
	})
	i := 0
	return &slotSource[K, V, C]{c: c, i: &i}
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

type slotSource[K, V, C any] struct {
	c *CombiningWriter[K, V, C]
	i *int
}

func (s *slotSource[K, V, C]) stream(p int) Stream { return &slotStream[K, V, C]{src: s, p: int32(p)} }

type slotStream[K, V, C any] struct {
	src *slotSource[K, V, C]
	p   int32
	val []byte
}

func (s *slotStream[K, V, C]) Next() ([]byte, []byte, error) {
	c, i := s.src.c, s.src.i
	if *i >= len(c.sorted) || c.sorted[*i].s.part != s.p {
		return nil, nil, io.EOF
	}
	e := c.sorted[*i]
	*i++
	var err error
	if s.val, err = c.combs.Append(s.val[:0], e.s.c); err != nil {
		return nil, nil, err
	}
	return bytesOf(e.key), s.val, nil
}

// Commit merges the spilled runs with the map and commits the output.
func (c *CombiningWriter[K, V, C]) Commit() (Result, error) {
	start := c.w.cfg.Clock()
	res, err := c.w.commit(c.sortedSource())
	res.WriteTime += c.w.cfg.Clock().Sub(start)
	c.m = nil
	return res, err
}

// Abort deletes the spills and releases the memory.
func (c *CombiningWriter[K, V, C]) Abort() { c.w.Abort(); c.m = nil }

// Metrics are the figures so far.
func (c *CombiningWriter[K, V, C]) Metrics() WriteMetrics { return c.w.metrics }
