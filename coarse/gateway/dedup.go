package gateway

import "time"

// dedup remembers the last n status update uuids of one executor (a ring
// over a set), so an update it resends after a reconnect is delivered once.
//
// One window per executor, not one for the gateway: an executor resends its
// unacknowledged updates first thing after re-registering, and those are a
// suffix of what it delivered (acks travel in delivery order on one stream),
// so a window a little larger than one executor's updates in flight is
// always enough, however many updates other executors deliver during its
// reconnect backoff. A small window also stays in cache on the hot path.
//
// A window is its session's readLoop's alone; the registry loop hands it
// from one session of the executor to the next.
type dedup struct {
	set  map[[16]byte]struct{}
	ring [][16]byte
	next int
	n    int
}

func newDedup(n int) *dedup {
	return &dedup{set: make(map[[16]byte]struct{}), n: n}
}

// firstSeen records k and reports whether it was new: one lookup per
// update. When the window is full the oldest uuid is forgotten.
func (d *dedup) firstSeen(k [16]byte) bool {
	if _, ok := d.set[k]; ok {
		return false
	}
	if len(d.ring) < d.n {
		d.ring = append(d.ring, k)
	} else {
		delete(d.set, d.ring[d.next])
		d.ring[d.next] = k
		d.next = (d.next + 1) % len(d.ring)
	}
	d.set[k] = struct{}{}
	return true
}

// dedups are the executors' windows, kept across their sessions and
// forgotten once an executor has been away long enough that it cannot
// resend anymore (it gives up on the driver after Config.Timeout).
type dedups struct {
	n       int
	windows map[string]*dedupWindow
}

type dedupWindow struct {
	d         *dedup
	leftAt    time.Time // zero while a session of the executor is registered
	connected bool
}

func newDedups(n int) dedups { return dedups{n: n, windows: map[string]*dedupWindow{}} }

// join returns the window of executorID for a new session.
func (s dedups) join(executorID string) *dedup {
	w := s.windows[executorID]
	if w == nil {
		w = &dedupWindow{d: newDedup(s.n)}
		s.windows[executorID] = w
	}
	w.connected, w.leftAt = true, time.Time{}
	return w.d
}

// leave notes that executorID's session ended at now.
func (s dedups) leave(executorID string, now time.Time) {
	if w := s.windows[executorID]; w != nil {
		w.connected, w.leftAt = false, now
	}
}

// expire forgets the windows of executors away for longer than after.
func (s dedups) expire(now time.Time, after time.Duration) {
	for id, w := range s.windows {
		if !w.connected && now.Sub(w.leftAt) > after {
			delete(s.windows, id)
		}
	}
}
