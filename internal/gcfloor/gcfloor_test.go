package gcfloor

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		name              string
		floor, live       int64
		base, wantPercent int
	}{
		// Below 4 MiB live the runtime's minimum goal (4 MiB · p/100) reaches the floor first.
		{"nothing live yet", 64 * mib, 0, 100, 1600},
		{"2 MiB live", 64 * mib, 2 * mib, 100, 1600},
		// Above it the live-proportional goal does: 16 MiB · (1 + 300/100) = 64 MiB.
		{"16 MiB live", 64 * mib, 16 * mib, 100, 300},
		{"rounds up", 64 * mib, 24 * mib, 100, 167}, // 24 · 2.666… < 64 ≤ 24 · 2.67
		{"the floor filled: the base", 64 * mib, 40 * mib, 100, 100},
		{"more live than the floor", 64 * mib, 100 * mib, 100, 100},
		{"never below the base", 64 * mib, 32 * mib, 200, 200},
		{"a larger base than needed", 64 * mib, 2 * mib, 2000, 2000},
	} {
		if got := Percent(c.floor, c.live, c.base); got != c.wantPercent {
			t.Errorf("%s: Percent(%d MiB, %d bytes, %d) = %d, want %d", c.name, c.floor/mib, c.live, c.base, got, c.wantPercent)
		}
	}
}

// read reads the runtime's GC percent and heap goal.
func read() (percent int, goal int64) {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(m)
	return int(int64(m[0].Value.Uint64())), int64(m[1].Value.Uint64())
}

// noGOGC runs the test as in a process whose environment does not set GOGC.
func noGOGC(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
}

// adjustments makes the per-cycle adjustments heard on the returned channel.
func adjustments(t *testing.T) <-chan int {
	ch := make(chan int, 1000)
	state.mu.Lock()
	state.adjusted = func(_ int64, p int) {
		select {
		case ch <- p:
		default:
		}
	}
	state.mu.Unlock()
	t.Cleanup(func() {
		state.mu.Lock()
		state.adjusted = nil
		state.mu.Unlock()
	})
	return ch
}

// nextAdjustment waits for the adjustment after a collection (the sentinel's cleanup).
func nextAdjustment(t *testing.T, ch <-chan int) int {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(time.Minute):
		t.Fatal("no adjustment followed the collection")
		return 0
	}
}

func drain(ch <-chan int) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestHoldKeepsTheGoalAtTheFloorUntilTheLiveHeapFillsItAndReleasePutsTheBaseBack(t *testing.T) {
	noGOGC(t)
	const floor = 64 * mib
	runtime.GC()
	base, goal := read()
	if goal >= floor {
		t.Fatalf("the test process's heap goal is already %d MiB, not below the %d MiB floor", goal/mib, floor/mib)
	}
	ch := adjustments(t)
	release := Hold(floor)
	defer release()
	if p, goal := read(); goal < floor || p <= base {
		t.Fatalf("after Hold: GC percent %d (base %d), heap goal %d MiB; want the goal ≥ %d MiB", p, base, goal/mib, floor/mib)
	}
	// Each collection re-arms the hook: two in a row are each followed by an adjustment.
	for range 2 {
		drain(ch)
		runtime.GC()
		nextAdjustment(t, ch)
		if p, goal := read(); goal < floor {
			t.Fatalf("after a collection: GC percent %d, heap goal %d MiB; want ≥ %d MiB", p, goal/mib, floor/mib)
		}
	}
	// A live heap that fills the floor by itself needs no more than the base.
	big := make([]byte, 48*mib)
	drain(ch)
	runtime.GC()
	if p := nextAdjustment(t, ch); p != base {
		t.Errorf("with 48 MiB live the percent is %d, want the base %d", p, base)
	}
	if p, goal := read(); p != base || goal < floor {
		t.Errorf("with 48 MiB live: GC percent %d, goal %d MiB; want %d and ≥ %d MiB", p, goal/mib, base, floor/mib)
	}
	runtime.KeepAlive(big)
	release()
	release() // idempotent
	runtime.GC()
	if p, goal := read(); p != base || goal >= floor {
		t.Errorf("after release: GC percent %d, heap goal %d MiB; want the base %d and the goal back under %d MiB", p, goal/mib, base, floor/mib)
	}
}

func TestNestedHoldsTakeTheLargestFloor(t *testing.T) {
	noGOGC(t)
	runtime.GC()
	base, _ := read()
	small := Hold(24 * mib)
	defer small()
	large := Hold(64 * mib)
	defer large()
	if _, goal := read(); goal < 64*mib {
		t.Fatalf("with floors of 24 and 64 MiB held the heap goal is %d MiB, want ≥ 64 MiB", goal/mib)
	}
	large()
	if _, goal := read(); goal < 24*mib || goal >= 64*mib {
		t.Fatalf("with the 24 MiB floor left the heap goal is %d MiB, want 24 MiB up to under 64", goal/mib)
	}
	small()
	if p, _ := read(); p != base {
		t.Fatalf("with every floor released the GC percent is %d, want the base %d", p, base)
	}
}

func TestHoldLeavesAProcessWhoseEnvironmentSetsGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "100")
	runtime.GC()
	p0, goal0 := read()
	release := Hold(64 * mib)
	defer release()
	if p, goal := read(); p != p0 || goal != goal0 {
		t.Fatalf("with GOGC set: GC percent %d → %d, heap goal %d → %d MiB; want both unchanged", p0, p, goal0/mib, goal/mib)
	}
}
