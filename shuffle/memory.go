package shuffle

import (
	"fmt"
	"sync"
)

// Memory is an executor's shuffle memory (flint.shuffle.memoryFraction of
// flint.executor.memory, or flint.shuffle.memory), shared by its running
// tasks: a task may grow to total/active, Spark's fair share, and spills
// when a grant is refused. Safe for concurrent use.
type Memory struct {
	mu     sync.Mutex
	total  int64
	used   int64
	active int
}

// NewMemory is a pool of total bytes.
func NewMemory(total int64) *Memory {
	if total <= 0 {
		panic(fmt.Sprintf("shuffle: memory pool of %d bytes", total))
	}
	return &Memory{total: total}
}

// Total is the pool's size.
func (m *Memory) Total() int64 { return m.total }

// Used is what tasks hold now.
func (m *Memory) Used() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Task joins the pool; Release the grant when the task ends.
func (m *Memory) Task() *Grant {
	m.mu.Lock()
	m.active++
	m.mu.Unlock()
	return &Grant{pool: m}
}

// Grant is one task's share of a Memory.
type Grant struct {
	pool *Memory
	held int64
	done bool
}

// Held is what the task holds.
func (g *Grant) Held() int64 { return g.held }

// Grow asks for n more bytes; false means spill (and Shrink) first.
func (g *Grant) Grow(n int64) bool {
	m := g.pool
	m.mu.Lock()
	defer m.mu.Unlock()
	share := m.total / int64(max(m.active, 1))
	if g.held+n > share || m.used+n > m.total {
		return false
	}
	g.held += n
	m.used += n
	return true
}

// Shrink gives back n bytes (at most what is held).
func (g *Grant) Shrink(n int64) {
	m := g.pool
	m.mu.Lock()
	defer m.mu.Unlock()
	n = min(n, g.held)
	g.held -= n
	m.used -= n
}

// Release gives back everything and leaves the pool. Idempotent.
func (g *Grant) Release() {
	m := g.pool
	m.mu.Lock()
	defer m.mu.Unlock()
	if g.done {
		return
	}
	g.done = true
	m.used -= g.held
	g.held = 0
	m.active--
}

// forceGrow holds n bytes beyond the share: one record must fit even
// when it alone is larger than the task's memory.
func (g *Grant) forceGrow(n int64) {
	m := g.pool
	m.mu.Lock()
	defer m.mu.Unlock()
	g.held += n
	m.used += n
}
