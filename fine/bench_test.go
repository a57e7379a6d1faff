package fine_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// BenchmarkModes runs the same trivial-task jobs in fine and coarse mode on
// one minimesos cluster (2 agents × 4 cpus, allocate-on-release) once the
// executors are up: throughput of 2,000-task jobs, and the latency of
// one-task jobs (submit → result, an upper bound of a task's latency).
func BenchmarkModes(b *testing.B) {
	for _, mode := range []struct {
		name string
		conf []string
	}{
		{"fine", nil},
		{"coarse", []string{"flint.mesos.coarse=true", "flint.executor.cores=4", "flint.executor.heartbeatInterval=1s"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			c := startCluster(b, clusterOpts{resources: "cpus:4.5;mem:2048;disk:1024;ports:[31000-31100]"})
			r := mustRun(b, mesosURL(c), append([]string{"flint.log.level=warn"}, mode.conf...)...)
			ctx := context.Background()
			if _, err := framework.Map(ctx, r.fc, double, ints(64)); err != nil { // executors up
				b.Fatal(err)
			}
			const n = 2000
			in := ints(n)
			var lat []time.Duration
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := framework.Map(ctx, r.fc, double, in); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(start)
			b.StopTimer()
			for i := 0; i < 200; i++ {
				t0 := time.Now()
				if _, err := framework.Map(ctx, r.fc, double, []int{i}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(n*b.N)/el.Seconds(), "tasks/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
