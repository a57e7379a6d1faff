package fine_test

import (
	"context"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
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

// BenchmarkAllocationInterval runs one-cpu trivial tasks in fine mode on
// two agents of 2 cpus each with Mesos' batch allocation (no
// allocate-on-release): freed cpus come back only with the next batch, so
// throughput is bound by the free task slots per allocation interval. Each
// agent has room for two one-cpu tasks beside its 0.1-cpu Mesos executor
// (the second takes the 0.9 cpus the executor's share leaves:
// placement.Slots), so the limit is 4 tasks per interval. It reports tasks/s and that limit
// for the interval Mesos uses by default (1s) and for 50ms.
func BenchmarkAllocationInterval(b *testing.B) {
	const (
		agents, agentCPUs = 2, 2.0
		execCPUs, taskCPU = 0.1, 1.0 // flint.mesos.mesosExecutor.cores (default), flint.task.cpus
		n                 = 40
	)
	// The executor's share costs a fraction of a slot: whole slots beside
	// it, plus one taking what it leaves of the last (placement.Slots).
	slots := agents * int(math.Floor((agentCPUs-execCPUs)/taskCPU))
	if rest := agentCPUs - execCPUs - math.Floor((agentCPUs-execCPUs)/taskCPU)*taskCPU; rest+1e-9 >= taskCPU-execCPUs {
		slots += agents
	}
	for _, interval := range []time.Duration{time.Second, 50 * time.Millisecond} {
		b.Run("interval="+interval.String(), func(b *testing.B) {
			c := startCluster(b, clusterOpts{agents: agents, resources: "cpus:2;mem:2048;disk:1024;ports:[31000-31100]",
				master: func(mc *master.Config) { mc.AllocationInterval, mc.AllocateOnRelease = interval, false }})
			r := mustRun(b, mesosURL(c), "flint.log.level=warn")
			ctx := context.Background()
			if _, err := framework.Map(ctx, r.fc, double, ints(2)); err != nil { // executors up
				b.Fatal(err)
			}
			in := ints(n)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := framework.Map(ctx, r.fc, double, in); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(start)
			b.ReportMetric(float64(n*b.N)/el.Seconds(), "tasks/s")
			b.ReportMetric(float64(slots)/interval.Seconds(), "limit-tasks/s")
		})
	}
}
