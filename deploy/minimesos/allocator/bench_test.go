package allocator

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkAllocate measures one full batch round: every agent's resources are available and
// go to frameworks in DRF order. Between rounds (timer stopped) all offers are recovered.
func BenchmarkAllocate(b *testing.B) {
	for _, agents := range []int{100, 1_000, 10_000} {
		for _, fws := range []int{10, 100, 1_000} {
			b.Run(fmt.Sprintf("agents=%d/frameworks=%d", agents, fws), func(b *testing.B) {
				a := newTest(b, Config{})
				for i := range fws {
					a.AddFramework(FrameworkInfo{ID: fmt.Sprintf("fw-%04d", i)}, true, nil)
				}
				for i := range agents {
					a.AddAgent(fmt.Sprintf("S%05d", i), "h", node(float64(8+i%8), 32768), nil)
				}
				now := t0
				var total time.Duration
				b.ResetTimer()
				for b.Loop() {
					start := time.Now()
					offers := a.Allocate(now)
					total += time.Since(start)
					b.StopTimer()
					if len(offers) != agents {
						b.Fatalf("%d offers, want %d", len(offers), agents)
					}
					for _, o := range offers {
						a.Recover(o.AgentID, o.FrameworkID, o.Resources, nil, now)
					}
					now = now.Add(time.Second)
					b.StartTimer()
				}
				b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/round")
			})
		}
	}
}
