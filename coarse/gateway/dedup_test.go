package gateway

import "testing"

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
