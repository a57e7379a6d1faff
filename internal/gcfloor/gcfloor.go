package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapMinimum is the runtime's least heap goal at GOGC=100 (defaultHeapMinimum, 4 MiB),
// which it scales by the GC percent.
const heapMinimum = 4 << 20

// Percent is the least GC percent ≥ base for which the next heap goal reaches floor when
// live bytes are live. The runtime's goal is the larger of heapMinimum·p/100 and
// live·(1 + p/100) (plus stacks and globals, which only add), so p is the smaller of the
// percents that bring either term to floor.
func Percent(floor, live int64, base int) int {
	byMinimum := ceilDiv(floor*100, heapMinimum)
	p := byMinimum
	if live > 0 {
		p = min(p, ceilDiv((floor-live)*100, live))
	}
	return max(base, int(p))
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// state is the process's one set of floors (the GC percent is process-wide).
var state struct {
	mu     sync.Mutex
	floors map[int]int64 // held floors by hold number
	next   int           // the next hold's number
	base   int           // the GC percent before the first hold
	armed  bool          // a sentinel waits for the next collection
	// adjusted, when set (tests), hears each adjustment's live bytes and percent.
	adjusted func(live int64, percent int)
}

// Hold keeps the heap goal at least floor bytes until release is called (release is
// idempotent). It does nothing when the environment sets GOGC, or when the collector is off.
func Hold(floor int64) (release func()) {
	if _, set := os.LookupEnv("GOGC"); set || floor <= 0 {
		return func() {}
	}
	s := &state
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.floors) == 0 {
		s.base = int(readInt("/gc/gogc:percent"))
		if s.base < 0 {
			return func() {}
		}
		s.floors = map[int]int64{}
	}
	id := s.next
	s.next++
	s.floors[id] = floor
	adjustLocked()
	var once sync.Once
	return func() { once.Do(func() { drop(id) }) }
}

// drop drops hold id; the last one puts the base percent back.
func drop(id int) {
	s := &state
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.floors, id)
	if len(s.floors) == 0 {
		debug.SetGCPercent(s.base)
		return
	}
	adjustLocked()
}

// adjust runs after a collection (the sentinel's cleanup).
func adjust() {
	s := &state
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	if len(s.floors) > 0 {
		adjustLocked()
	}
}

// adjustLocked sets the percent for the largest held floor and the heap live after the last
// collection, and arms a sentinel for the next one.
func adjustLocked() {
	s := &state
	var floor int64
	for _, f := range s.floors {
		floor = max(floor, f)
	}
	live := readInt("/gc/heap/live:bytes")
	p := Percent(floor, live, s.base)
	debug.SetGCPercent(p)
	if s.adjusted != nil {
		s.adjusted(live, p)
	}
	if !s.armed {
		s.armed = true
		runtime.AddCleanup(&sentinel{}, func(struct{}) { adjust() }, struct{}{})
	}
}

// sentinel is collected at the first collection after it is made: its cleanup is the
// per-cycle hook. It holds a pointer so that it is never a tiny allocation (whose cleanup
// might never run).
type sentinel struct {
	_ *byte
	_ [2]int64
}

// readInt reads a runtime metric as a signed number: /gc/gogc:percent (-1, reported as the
// largest uint64, when the collector is off) or /gc/heap/live:bytes (the heap the last
// collection found live; 0 before the first).
func readInt(name string) int64 {
	m := []metrics.Sample{{Name: name}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(m[0].Value.Uint64())
}
