package master

import (
	"strconv"
	"testing"
)

func TestRemovedIDsAreBounded(t *testing.T) {
	r := newRemovedIDs(3)
	for i := range 3 {
		r.add("fw-" + strconv.Itoa(i))
	}
	r.add("fw-1") // already there: no eviction
	if !r.has("fw-0") || !r.has("fw-1") || !r.has("fw-2") || r.has("fw-3") {
		t.Fatalf("after 3 adds: %v", r.set)
	}
	r.add("fw-3") // evicts fw-0, the oldest
	r.add("fw-4") // evicts fw-1
	if r.has("fw-0") || r.has("fw-1") || !r.has("fw-2") || !r.has("fw-3") || !r.has("fw-4") || len(r.set) != 3 {
		t.Fatalf("after 5 adds: %v", r.set)
	}
}
