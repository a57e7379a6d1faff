package waitfor

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	if !Poll(10*time.Second, func() bool { return n.Add(1) >= 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("condition checked %d times, want 3 (stop as soon as it holds)", got)
	}
}

func TestPollGivesUpAfterTheTimeout(t *testing.T) {
	var n atomic.Int32
	if Poll(20*time.Millisecond, func() bool { n.Add(1); return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if n.Load() < 2 {
		t.Fatalf("condition checked %d times, want it re-checked", n.Load())
	}
}
