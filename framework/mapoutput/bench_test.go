package mapoutput

import (
	"fmt"
	"math/rand/v2"
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
