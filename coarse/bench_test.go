package coarse_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// BenchmarkEmptyTasks runs jobs of empty tasks through two coarse
// executors (4 cores each) on a minimesos cluster over loopback: the full
// path driver core → gateway → executor process → status update → driver.
// Compare with coarse/gateway's BenchmarkRawEcho*, run in the same session.
func BenchmarkEmptyTasks(b *testing.B) {
	c := startCluster(b, clusterOpts{resources: "cpus:4;mem:1024;disk:1024"})
	r := mustRun(b, mesosURL(c), "flint.log.level=warn")
	waitFor(b, 10*time.Second, "2 executors", func() bool { return r.fc.DefaultParallelism() == 8 })
	const tasks = 2000
	in := ints(tasks)
	ctx := context.Background()
	if _, err := framework.Map(ctx, r.fc, double, in); err != nil { // warm up
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := framework.Map(ctx, r.fc, double, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*tasks)/time.Since(start).Seconds(), "tasks/s")
}

// BenchmarkTaskLatency runs one-task jobs one after the other on a single
// 1-core coarse executor and reports RunJob latency percentiles.
func BenchmarkTaskLatency(b *testing.B) {
	c := startCluster(b, clusterOpts{agents: 1, resources: "cpus:1;mem:1024;disk:1024"})
	r := mustRun(b, mesosURL(c), "flint.log.level=warn")
	waitFor(b, 10*time.Second, "the executor", func() bool { return r.fc.DefaultParallelism() >= 1 && len(r.executors()) == 1 })
	ctx := context.Background()
	one := []int{1}
	for range 100 { // warm up
		if _, err := framework.Map(ctx, r.fc, double, one); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := framework.Map(ctx, r.fc, double, one); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
