package mailbox

import "sync"

// Mailbox is an unbounded FIFO with one consumer. The zero value is not
// usable: use New.
type Mailbox[T any] struct {
	wake chan struct{}

	mu     sync.Mutex
	queue  []T
	closed bool
}

// New returns an open, empty mailbox.
func New[T any]() *Mailbox[T] { return &Mailbox[T]{wake: make(chan struct{}, 1)} }

// Put queues v and wakes the consumer; it reports false (and drops v) once
// the mailbox is closed. It never blocks on the consumer.
func (m *Mailbox[T]) Put(v T) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.queue = append(m.queue, v)
	first := len(m.queue) == 1
	m.mu.Unlock()
	if first {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// Wake receives after a Put into an empty mailbox: the consumer then Takes.
func (m *Mailbox[T]) Wake() <-chan struct{} { return m.wake }

// Take returns everything queued, oldest first, and reuses spare's array
// for the next inputs (pass the previous Take's slice once done with it).
func (m *Mailbox[T]) Take(spare []T) []T {
	clear(spare)
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue
	m.queue = spare[:0]
	return q
}

// Close refuses every later Put and returns what was still queued.
func (m *Mailbox[T]) Close() []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	q := m.queue
	m.queue = nil
	return q
}
