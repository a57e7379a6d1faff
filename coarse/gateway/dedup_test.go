package gateway

import (
	"testing"
	"time"
)

func TestDedupRemembersTheLastWindow(t *testing.T) {
	d := newDedup(3)
	key := func(b byte) [16]byte { return [16]byte{b} }
	for _, b := range []byte{1, 2, 3} {
		if !d.firstSeen(key(b)) {
			t.Fatalf("uuid %d reported as seen the first time", b)
		}
	}
	for _, b := range []byte{1, 2, 3} {
		if d.firstSeen(key(b)) {
			t.Fatalf("uuid %d reported as new the second time", b)
		}
	}
	if !d.firstSeen(key(4)) { // evicts 1, the oldest
		t.Fatal("uuid 4 reported as seen")
	}
	if !d.firstSeen(key(1)) { // forgotten: new again (evicts 2)
		t.Fatal("uuid 1 still remembered beyond the window")
	}
	if d.firstSeen(key(3)) || d.firstSeen(key(4)) {
		t.Fatal("a uuid inside the window was forgotten")
	}
}

func TestDedupWindowsOutliveSessionsUntilExpiry(t *testing.T) {
	s := newDedups(8)
	t0 := time.Unix(1000, 0)
	d := s.join("e1")
	if !d.firstSeen([16]byte{1}) {
		t.Fatal("first update reported as seen")
	}
	s.leave("e1", t0)
	s.expire(t0.Add(time.Minute), time.Minute) // exactly the limit: kept
	if d2 := s.join("e1"); d2 != d || d2.firstSeen([16]byte{1}) {
		t.Fatal("a reconnecting executor lost its window")
	}
	if other := s.join("e2"); other == d || !other.firstSeen([16]byte{1}) {
		t.Fatal("executors share a window")
	}
	s.expire(t0.Add(time.Hour), time.Minute) // e1 and e2 are connected: kept
	if len(s.windows) != 2 {
		t.Fatalf("%d windows after expiring connected executors, want 2", len(s.windows))
	}
	s.leave("e1", t0)
	s.expire(t0.Add(time.Minute+1), time.Minute)
	if _, ok := s.windows["e1"]; ok || len(s.windows) != 1 {
		t.Fatalf("windows after expiry: %v, want only e2", s.windows)
	}
	if d3 := s.join("e1"); !d3.firstSeen([16]byte{1}) {
		t.Fatal("an expired window still remembered an update")
	}
}
