package mapoutput

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkRegisterMapOutput is the tracker's share of a map completion:
// one status of 1,000 block sizes registered (compressed and stored).
func BenchmarkRegisterMapOutput(b *testing.B) {
	const maps, reduces = 10000, 1000
	r := rand.New(rand.NewPCG(1, 2))
	sizes := make([]uint64, reduces)
	for i := range sizes {
		if r.IntN(10) > 0 {
			sizes[i] = r.Uint64N(1 << 24)
		}
	}
	locs := make([]Location, 100)
	for i := range locs {
		locs[i] = Location{ExecutorID: fmt.Sprintf("e%d", i), Host: fmt.Sprintf("h%d", i), Address: fmt.Sprintf("h%d:7337", i)}
	}
	t := NewTracker(Config{})
	i := 0
	for b.Loop() {
		if i%maps == 0 {
			t.UnregisterShuffle(0)
			_ = t.RegisterShuffle(0, maps, reduces)
		}
		if err := t.RegisterMapOutput(Status{ShuffleID: 0, MapIndex: i % maps, Location: locs[i%len(locs)], Sizes: sizes}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTrackerBytesPerMapOutput is what the tracker holds per map
// output of a 10,000-map shuffle, by reducers and share of empty blocks:
// the heap it grew by (runtime.MemStats.HeapAlloc after a GC, over the
// maps; the location table of 100 executors included) and what
// MapOutputBytes accounts. Spark's anchor is its HighlyCompressedMapStatus
// (docs/benchmarks.md).
func BenchmarkTrackerBytesPerMapOutput(b *testing.B) {
	const maps = 10000
	for _, reduces := range []int{100, 1000, 10000} {
		for _, emptyPct := range []int{0, 10} {
			b.Run(fmt.Sprintf("reducers=%d/empty=%d%%", reduces, emptyPct), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				sizes := make([][]uint64, 16) // a few distinct statuses, reused
				for i := range sizes {
					sizes[i] = make([]uint64, reduces)
					for j := range sizes[i] {
						if r.IntN(100) >= emptyPct {
							sizes[i][j] = 100 * (1 + r.Uint64N(1000))
						}
					}
				}
				locs := make([]Location, 100)
				for i := range locs {
					locs[i] = Location{ExecutorID: fmt.Sprintf("flint-fine-S%d", i), Host: fmt.Sprintf("agent%d", i), Address: fmt.Sprintf("agent%d:7337", i)}
				}
				var heap, acct float64
				for b.Loop() {
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					t := NewTracker(Config{})
					if err := t.RegisterShuffle(0, maps, reduces); err != nil {
						b.Fatal(err)
					}
					for m := range maps {
						if err := t.RegisterMapOutput(Status{ShuffleID: 0, MapIndex: m, TaskID: uint64(m), Location: locs[m%len(locs)], Sizes: sizes[m%len(sizes)]}); err != nil {
							b.Fatal(err)
						}
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					heap = float64(after.HeapAlloc-before.HeapAlloc) / maps
					n, err := t.MapOutputBytes(0)
					if err != nil {
						b.Fatal(err)
					}
					acct = float64(n+t.LocationBytes()) / maps
					runtime.KeepAlive(t)
				}
				b.ReportMetric(heap, "heap-B/map")
				b.ReportMetric(acct, "acct-B/map")
			})
		}
	}
}
