package allocator

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// qvec is a vector of scalar quantities indexed by resource kind (see Allocator.kind). Vectors
// may be shorter than the number of known kinds; missing entries are zero.
type qvec []float64

func (q *qvec) add(o qvec, sign float64) {
	if len(*q) < len(o) {
		*q = append(*q, make(qvec, len(o)-len(*q))...)
	}
	for i, v := range o {
		(*q)[i] += sign * v
		if (*q)[i] < 1e-9 && (*q)[i] > -1e-9 {
			(*q)[i] = 0
		}
	}
}

func (q qvec) isZero() bool {
	for _, v := range q {
		if v != 0 {
			return false
		}
	}
	return true
}

// share is DRF's dominant share: the largest fraction of any resource kind's cluster total.
func share(alloc, total qvec) float64 {
	s := 0.0
	for i, v := range alloc {
		if i < len(total) && total[i] > 0 {
			s = max(s, v/total[i])
		}
	}
	return s
}

// quantities sums the scalar resources of rs by kind. Ranges and sets (ports…) do not take part
// in DRF, as in Mesos' sorter which works on scalar quantities only.
func (a *Allocator) quantities(rs mesos.Resources) qvec {
	var q qvec
	for i := range rs {
		r := &rs[i]
		if r.GetType() != mesos.SCALAR || r.Scalar == nil {
			continue
		}
		k := a.kind(r.Name)
		if len(q) <= k {
			q = append(q, make(qvec, k+1-len(q))...)
		}
		q[k] += r.Scalar.Value
	}
	return q
}

func (a *Allocator) kind(name string) int {
	k, ok := a.kinds[name]
	if !ok {
		k = len(a.kindNames)
		a.kinds[name] = k
		a.kindNames = append(a.kindNames, name)
	}
	return k
}

// entry is one element of a share-ordered heap: a role in the role heap or a framework in a
// role's framework heap.
type entry struct {
	key  float64 // weighted dominant share
	name string  // tie breaker: a total order keeps rounds deterministic
	idx  int     // position in its heap, -1 when not in it
	role *role
	fw   *framework
}

func (e *entry) less(o *entry) bool {
	if e.key != o.key {
		return e.key < o.key
	}
	return e.name < o.name
}

// shareHeap is an indexed binary min-heap of entries by (key, name). Only entries whose key
// changed need Fix, so a round costs O(log n) per allocation instead of a re-sort per agent.
type shareHeap []*entry

func (h shareHeap) Len() int { return len(h) }

func (h *shareHeap) reset(es []*entry) {
	*h = append((*h)[:0], es...)
	for i, e := range *h {
		e.idx = i
	}
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *shareHeap) push(e *entry) {
	e.idx = len(*h)
	*h = append(*h, e)
	h.up(e.idx)
}

func (h *shareHeap) pop() *entry {
	old := *h
	e := old[0]
	last := len(old) - 1
	old[0] = old[last]
	old[0].idx = 0
	old[last] = nil
	*h = old[:last]
	if last > 0 {
		h.down(0)
	}
	e.idx = -1
	return e
}

// fix restores the order after e's key changed; e must be in h.
func (h shareHeap) fix(e *entry) {
	if !h.down(e.idx) {
		h.up(e.idx)
	}
}

func (h shareHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h shareHeap) down(i int) bool {
	start := i
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[i]) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

func (h shareHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx = i
	h[j].idx = j
}

// remove takes e out of h; e must be in h.
func (h *shareHeap) remove(e *entry) {
	i := e.idx
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	if i != last {
		h.fix((*h)[i])
	}
	e.idx = -1
}
