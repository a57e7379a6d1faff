package scheduler

import "cmp"

// pool groups task sets (Spark's Pool). In FIFO mode every task set is in
// one FIFO pool; in FAIR mode the root orders pools with the fair comparator
// and each pool orders its task sets with its own mode.
type pool struct {
	name     string
	mode     SchedulingMode
	weight   int
	minShare int
	running  int // running attempts of the pool's task sets, zombies included
	sets     []*taskSetManager

	heap []*taskSetManager // per ResourceOffers call: sets that may still launch
}

func newPool(c PoolConfig) *pool {
	return &pool{name: c.Name, mode: c.Mode, weight: c.Weight, minShare: c.MinShare}
}

// fairLess is Spark's FairSchedulingAlgorithm comparator.
func fairLess(r1, min1, w1 int, n1 string, r2, min2, w2 int, n2 string) bool {
	needy1, needy2 := r1 < min1, r2 < min2
	var c int
	switch {
	case needy1 && !needy2:
		return true
	case !needy1 && needy2:
		return false
	case needy1 && needy2:
		c = cmp.Compare(float64(r1)/float64(max(min1, 1)), float64(r2)/float64(max(min2, 1)))
	default:
		c = cmp.Compare(float64(r1)/float64(w1), float64(r2)/float64(w2))
	}
	if c != 0 {
		return c < 0
	}
	return n1 < n2
}

// fifoLess is Spark's FIFOSchedulingAlgorithm: job, then stage, then
// submission order.
func fifoLess(a, b *taskSetManager) bool {
	if a.ts.JobID != b.ts.JobID {
		return a.ts.JobID < b.ts.JobID
	}
	if a.ts.StageID != b.ts.StageID {
		return a.ts.StageID < b.ts.StageID
	}
	return a.seq < b.seq
}

func (p *pool) setLess(a, b *taskSetManager) bool {
	if p.mode == FAIR {
		return fairLess(a.running, 0, 1, a.ts.ID, b.running, 0, 1, b.ts.ID)
	}
	return fifoLess(a, b)
}

func poolLess(a, b *pool) bool {
	return fairLess(a.running, a.minShare, a.weight, a.name, b.running, b.minShare, b.weight, b.name)
}

// siftDown restores the heap property below i.
func siftDown[T any](h []T, i int, less func(a, b T) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func heapify[T any](h []T, less func(a, b T) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, less)
	}
}

// popTop removes the top of a heap.
func popTop[T any](h []T, less func(a, b T) bool) []T {
	n := len(h) - 1
	h[0] = h[n]
	var zero T
	h[n] = zero
	h = h[:n]
	siftDown(h, 0, less)
	return h
}

func (p *pool) removeSet(m *taskSetManager) {
	for i, x := range p.sets {
		if x == m {
			p.sets = append(p.sets[:i], p.sets[i+1:]...)
			return
		}
	}
}
