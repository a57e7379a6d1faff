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

// End queues last (in order) and refuses every later Put, keeping what is
// queued for the consumer, whom it wakes: a stream that ends after its
// last events. TakeEnded tells the consumer it has them all. Calls after
// the first End (or Close) change nothing.
func (m *Mailbox[T]) End(last ...T) {
	m.mu.Lock()
	if !m.closed {
		m.queue = append(m.queue, last...)
		m.closed = true
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// TakeEnded is Take, also reporting whether the mailbox was ended (End or
// Close): then nothing more will come after what it returns.
func (m *Mailbox[T]) TakeEnded(spare []T) ([]T, bool) {
	clear(spare)
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue
	m.queue = spare[:0]
	return q, m.closed
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
