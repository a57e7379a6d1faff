package coarse_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/devtools/grpcecho"
)

// benchSlots are the task slots the throughput benchmarks use across their
// two executors, and the round trips the echo baseline keeps in flight across
// its two client processes: 2 executors × 4 cores, and 2 × 32 cores (the
// in-process echo's 64 in flight).
var benchSlots = []int{8, 64}

// BenchmarkEmptyTasks runs jobs of empty tasks through two coarse executor
// processes on a minimesos cluster over loopback: the full path driver core
// → gateway → executor process → status update → driver. Compare with
// BenchmarkRawEcho at the same number of slots, run in the same session.
//
//	go test -run '^$' -bench 'EmptyTasks|RawEcho' ./coarse
func BenchmarkEmptyTasks(b *testing.B) {
	for _, slots := range benchSlots {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) { benchEmptyTasks(b, slots) })
	}
	// The same in plaintext (TLS is the default: flint.network.tls.enabled).
	b.Run("slots=64/plaintext", func(b *testing.B) { benchEmptyTasks(b, 64, "flint.network.tls.enabled=false") })
}

func benchEmptyTasks(b *testing.B, slots int, conf ...string) {
	c := startCluster(b, clusterOpts{resources: fmt.Sprintf("cpus:%d;mem:1024;disk:1024", slots/2)})
	r := mustRun(b, mesosURL(c), append(append(benchProfileConf(), "flint.log.level=warn"), conf...)...)
	waitFor(b, 10*time.Second, "2 executors", func() bool { return r.fc.DefaultParallelism() == slots })
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

// BenchmarkRawEcho is the baseline of BenchmarkEmptyTasks: raw gRPC
// bidirectional-stream round trips over loopback with the same codec (one
// StatusUpdate-sized message up, one TaskDescription-sized message down; see
// internal/devtools/grpcecho), between this process and two child processes of the
// same binary — as the driver and its two executors — with as many round
// trips in flight in all as the task benchmark has slots. "in-process" is
// both ends in this process, 64 in flight (the figure earlier runs quoted).
// It reports round trips per second.
func BenchmarkRawEcho(b *testing.B) {
	const perIter = 100_000
	for _, slots := range benchSlots {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			s := startEcho(b)
			cl, err := grpcecho.StartClients(os.Args[0], s, 2, slots/2)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := cl.Close(); err != nil {
					b.Error(err)
				}
			}()
			if err := cl.Run(1000); err != nil { // warm up
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				if err := cl.Run(perIter / 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*perIter)/time.Since(start).Seconds(), "pairs/s")
		})
	}
	b.Run("in-process/inflight=64", func(b *testing.B) {
		s := startEcho(b)
		c, err := grpcecho.Dial(s.Addr(), 64)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			if err := c.Run(perIter, 64); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*perIter)/time.Since(start).Seconds(), "pairs/s")
	})
}

func startEcho(b *testing.B) *grpcecho.Server {
	b.Helper()
	s, err := grpcecho.Listen()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}
