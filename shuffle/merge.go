package shuffle

import (
	"bytes"
	"io"
	"math"
)

// Stream is a sorted run of records: Next returns them in order, each
// valid until the following call, then io.EOF. shuffleblock.Reader is one.
type Stream interface {
	Next() (key, value []byte, err error)
}

// Order says how records are ordered within a partition.
type Order struct {
	compare  func(a, b []byte) int
	bytewise bool
}

// Orders.
var (
	// Unordered groups records by partition only, in no particular order
	// (repartition, partitionBy without sort): no sort, no merge.
	Unordered = Order{}
	// ByteOrder sorts by encoded key as bytes: equal keys end up together
	// (aggregation, joins), and keys encoded with recordcodec.Ordered come
	// out in their natural order (sortByKey).
	ByteOrder = Order{compare: bytes.Compare, bytewise: true}
)

// CustomOrder sorts encoded keys with compare.
func CustomOrder(compare func(a, b []byte) int) Order { return Order{compare: compare} }

// Sorted reports whether records are sorted by key.
func (o Order) Sorted() bool { return o.compare != nil }

// Combine merges the encoded values a and b of one key into dst[:0] and
// returns it; dst never aliases a or b.
type Combine func(dst, a, b []byte) ([]byte, error)

// Merger merges sorted streams into one sorted stream (Spark's
// ExternalSorter merge): one record per stream in memory, plus, with a
// Combine, the key being combined.
type Merger struct {
	concat  []Stream // unordered, uncombined: the streams left, read in turn
	t       loserTree
	advance bool // the winner's record was returned: step it first
	combine Combine
	key     []byte
	val     []byte
	scratch []byte
	err     error
}

type head struct {
	s      Stream
	k, v   []byte
	prefix uint64 // the key's first 8 bytes, for byte order; all ones once done
	done   bool   // the stream has ended: it loses to every other
}

// loserTree is a tournament tree over the streams' heads (Knuth's
// replacement selection): node i > 0 holds the loser of the match below
// it, node 0 the overall winner, so replacing the winner's record costs
// exactly one comparison per level — log2(k), where a binary heap's
// sift-down makes two. With byte order it compares the heads' 8-byte
// key prefixes first, so most comparisons touch neither the keys nor a
// function value. Ties go to the earlier stream: the merge is stable.
type loserTree struct {
	heads    []head
	nodes    []int // len(heads) entries: nodes[0] the winner, the rest losers
	live     int   // streams not yet ended
	compare  func(a, b []byte) int
	bytewise bool
}

// less reports whether stream a's head comes before stream b's.
func (t *loserTree) less(a, b int) bool {
	x, y := &t.heads[a], &t.heads[b]
	if x.done || y.done {
		return !x.done || (y.done && a < b)
	}
	if t.bytewise {
		if x.prefix != y.prefix {
			return x.prefix < y.prefix
		}
		if c := bytes.Compare(x.k, y.k); c != 0 {
			return c < 0
		}
	} else if c := t.compare(x.k, y.k); c != 0 {
		return c < 0
	}
	return a < b // stable: earlier streams first
}

// build plays every match: leaves are k..2k-1 (stream i at k+i).
func (t *loserTree) build() {
	k := len(t.heads)
	t.nodes = make([]int, k)
	if k == 0 {
		return
	}
	winners := make([]int, 2*k)
	for i := range k {
		winners[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := winners[2*n], winners[2*n+1]
		if t.less(b, a) {
			a, b = b, a
		}
		winners[n], t.nodes[n] = a, b
	}
	t.nodes[0] = winners[1] // k == 1: the only leaf, winners[1]
}

// replay re-plays the matches on the winner's path after its head changed.
func (t *loserTree) replay() {
	cur := t.nodes[0]
	for n := (cur + len(t.heads)) / 2; n >= 1; n /= 2 {
		o := t.nodes[n]
		x, y := &t.heads[o], &t.heads[cur]
		var wins bool
		if t.bytewise && x.prefix != y.prefix {
			// inline, the usual case: an ended stream's all-ones prefix
			// loses here to every live key not all ones itself
			wins = x.prefix < y.prefix
		} else {
			wins = t.less(o, cur)
		}
		if wins {
			t.nodes[n], cur = cur, o
		}
	}
	t.nodes[0] = cur
}

// NewMerger merges streams in order; with combine, records of equal keys
// come out as one, their values combined. Unordered streams without a
// combine are concatenated (the order a merge of ties gives: earlier
// streams first), with no tree to replay per record.
func NewMerger(streams []Stream, order Order, combine Combine) (*Merger, error) {
	if !order.Sorted() && combine == nil {
		return &Merger{concat: streams}, nil
	}
	compare := order.compare
	if compare == nil {
		compare = func(a, b []byte) int { return 0 } // concatenation
	}
	m := &Merger{t: loserTree{compare: compare, bytewise: order.bytewise}, combine: combine}
	for _, s := range streams {
		k, v, err := s.Next()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, err
		}
		m.t.heads = append(m.t.heads, head{s: s, k: k, v: v, prefix: prefixOf(k)})
	}
	m.t.live = len(m.t.heads)
	m.t.build()
	return m, nil
}

// step advances the winner's stream.
func (m *Merger) step() error {
	h := &m.t.heads[m.t.nodes[0]]
	k, v, err := h.s.Next()
	switch {
	case err == io.EOF:
		h.done, h.k, h.v, h.s, h.prefix = true, nil, nil, nil, math.MaxUint64
		m.t.live--
	case err != nil:
		return err
	default:
		h.k, h.v = k, v
		if m.t.bytewise {
			h.prefix = prefixOf(k)
		}
	}
	m.t.replay()
	return nil
}

// top is the winner's head, or nil when every stream has ended.
func (m *Merger) top() *head {
	if m.t.live == 0 {
		return nil
	}
	return &m.t.heads[m.t.nodes[0]]
}

// Next returns the next record, valid until the following call, or io.EOF.
func (m *Merger) Next() (key, value []byte, err error) {
	if m.err != nil {
		return nil, nil, m.err
	}
	if m.concat != nil {
		return m.nextConcat()
	}
	if m.advance {
		if err := m.step(); err != nil {
			m.err = err
			return nil, nil, err
		}
		m.advance = false
	}
	top := m.top()
	if top == nil {
		return nil, nil, io.EOF
	}
	if m.combine == nil {
		m.advance = true
		return top.k, top.v, nil
	}
	m.key = append(m.key[:0], top.k...)
	m.val = append(m.val[:0], top.v...)
	for {
		if err := m.step(); err != nil {
			m.err = err
			return nil, nil, err
		}
		if top = m.top(); top == nil || m.t.compare(top.k, m.key) != 0 {
			break
		}
		out, err := m.combine(m.scratch, m.val, top.v)
		if err != nil {
			m.err = err
			return nil, nil, err
		}
		m.scratch, m.val = m.val, out
	}
	return m.key, m.val, nil
}

// nextConcat is Next of concatenated streams.
func (m *Merger) nextConcat() ([]byte, []byte, error) {
	for len(m.concat) > 0 {
		k, v, err := m.concat[0].Next()
		switch {
		case err == io.EOF:
			m.concat = m.concat[1:]
		case err != nil:
			m.err = err
			return nil, nil, err
		default:
			return k, v, nil
		}
	}
	return nil, nil, io.EOF
}
