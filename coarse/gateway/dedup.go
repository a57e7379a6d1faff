package gateway

import "sync"

// dedup remembers the last n status update uuids (a ring over a set), so a
// resent update is delivered once. Updates are resent only while
// unacknowledged, so a window far larger than the updates in flight on one
// executor is enough.
type dedup struct {
	mu   sync.Mutex
	set  map[[16]byte]struct{}
	ring [][16]byte
	next int
}

func newDedup(n int) *dedup {
	return &dedup{set: make(map[[16]byte]struct{}, n), ring: make([][16]byte, 0, n)}
}

// firstSeen records k and reports whether it was new: one lock and one
// lookup per update on the gateway's hot path. When the window is full the
// oldest uuid is forgotten.
func (d *dedup) firstSeen(k [16]byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.set[k]; ok {
		return false
	}
	if len(d.ring) < cap(d.ring) {
		d.ring = append(d.ring, k)
	} else {
		delete(d.set, d.ring[d.next])
		d.ring[d.next] = k
		d.next = (d.next + 1) % len(d.ring)
	}
	d.set[k] = struct{}{}
	return true
}
