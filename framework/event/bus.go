package event

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultQueueSize is the per-listener queue capacity (Spark's
// spark.scheduler.listenerbus.eventqueue.capacity default).
const DefaultQueueSize = 10000

// Bus fans events out to listeners. Post never blocks. The zero value is not
// usable; call NewBus.
type Bus struct {
	mu        sync.Mutex
	queueSize int
	subs      []*subscription
	closed    bool
	listening atomic.Bool // some listener is subscribed and the bus is open
	dropped   atomic.Int64
	wg        sync.WaitGroup
}

type subscription struct {
	l  Listener
	ch chan Event

	posted int64 // events queued for l; guarded by Bus.mu

	mu      sync.Mutex
	handled int64 // events l has returned from
	waiters []flushWaiter
}

// flushWaiter is a Flush call waiting for a listener to have handled its
// first target events.
type flushWaiter struct {
	target int64
	done   chan struct{}
}

// NewBus returns a bus whose listeners each get a queue of queueSize events
// (DefaultQueueSize when queueSize <= 0).
func NewBus(queueSize int) *Bus {
	if queueSize <= 0 {
		queueSize = DefaultQueueSize
	}
	return &Bus{queueSize: queueSize}
}

// AddListener starts delivering events posted from now on to l. It is a no-op
// after Close.
func (b *Bus) AddListener(l Listener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	s := &subscription{l: l, ch: make(chan Event, b.queueSize)}
	b.subs = append(b.subs, s)
	b.listening.Store(true)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for e := range s.ch {
			s.l.OnEvent(e)
			s.markHandled()
		}
	}()
}

// Post queues e for every listener. A listener whose queue is full misses e
// and the drop is counted.
func (b *Bus) Post(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, s := range b.subs {
		select {
		case s.ch <- e:
			s.posted++
		default:
			b.dropped.Add(1)
		}
	}
}

// Listening reports whether a Post now would reach any listener. Posters
// on hot paths check it to skip building events nobody receives; a
// listener added after the check misses the event, as it would any event
// posted before AddListener.
func (b *Bus) Listening() bool { return b.listening.Load() }

// Dropped reports how many deliveries were dropped because a queue was full.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// Close delivers what is queued, then stops every listener goroutine and
// waits for them. Posting after Close is a no-op.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.listening.Store(false)
	for _, s := range b.subs {
		close(s.ch)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Flush waits until every listener has handled every event posted before the
// call (Spark's LiveListenerBus.waitUntilEmpty). Events posted meanwhile are
// not waited for. After Close it returns at once: Close delivers everything.
func (b *Bus) Flush(ctx context.Context) error {
	var dones []chan struct{}
	b.mu.Lock()
	for _, s := range b.subs {
		if d := s.waitFor(s.posted); d != nil {
			dones = append(dones, d)
		}
	}
	b.mu.Unlock()
	for _, d := range dones {
		select {
		case <-d:
		case <-ctx.Done():
			return fmt.Errorf("event bus: flushing listeners: %w", ctx.Err())
		}
	}
	return nil
}

// waitFor returns a channel closed once the listener has handled target
// events, or nil if it already has.
func (s *subscription) waitFor(target int64) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handled >= target {
		return nil
	}
	d := make(chan struct{})
	s.waiters = append(s.waiters, flushWaiter{target: target, done: d})
	return d
}

// markHandled counts one handled event and releases the Flush calls it
// satisfies.
func (s *subscription) markHandled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handled++
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if s.handled >= w.target {
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	s.waiters = kept
}
