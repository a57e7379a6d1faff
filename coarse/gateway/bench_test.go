package gateway_test

import (
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/internal/devtools/grpcecho"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// window is how many tasks (or echo messages) the throughput benchmarks
// keep in flight; the executor gets as many cores.
const window = 64

// BenchmarkTaskRoundTrip measures an empty task from Launch to its
// TASK_FINISHED update reaching the driver's Events, through the gateway
// and a coarse executor on loopback (launch, RUNNING, FINISHED and two
// acks on the wire), against a raw gRPC round trip on the same kind of
// bidirectional stream and codec (one ExecutorMessage up, one
// DriverMessage down) measured in the same run.
//
//	go test -run '^$' -bench . -benchtime 20000x ./coarse/gateway/
func BenchmarkTaskRoundTrip(b *testing.B) {
	b.Run("gateway/latency", func(b *testing.B) { benchGateway(b, 1) })
	b.Run("raw-echo/latency", func(b *testing.B) { benchEcho(b, 1) })
	b.Run("gateway/throughput", func(b *testing.B) { benchGateway(b, window) })
	b.Run("raw-echo/throughput", func(b *testing.B) { benchEcho(b, window) })
}

// pipeline runs b.N operations with at most inFlight outstanding: start(i)
// begins operation i, and every value on done ends one. It reports ops/s
// and, with one in flight, latency percentiles.
func pipeline(b *testing.B, inFlight int, start func(i int), done <-chan struct{}) {
	lat := make([]time.Duration, 0, b.N)
	began := make([]time.Time, 0, b.N)
	b.ResetTimer()
	t0 := time.Now()
	outstanding, finished := 0, 0
	for i := 0; i < b.N; i++ {
		for outstanding >= inFlight {
			<-done
			lat = append(lat, time.Since(began[finished]))
			outstanding--
			finished++
		}
		began = append(began, time.Now())
		start(i)
		outstanding++
	}
	for ; outstanding > 0; outstanding-- {
		<-done
		lat = append(lat, time.Since(began[finished]))
		finished++
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	if inFlight == 1 && len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

func benchGateway(b *testing.B, inFlight int) {
	done := make(chan struct{}, window)
	ev := gateway.EventFuncs{Update: func(u *flintpb.StatusUpdate) {
		if u.State != flintpb.TaskState_TASK_RUNNING {
			done <- struct{}{}
		}
	}}
	registered := make(chan struct{}, 1)
	ev.Registered = func(gateway.ExecutorInfo) { registered <- struct{}{} }
	gw := startGateway(b, ev, nil)
	reg := testRegistry(nil)
	startExecutor(b, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.Cores = reg, window })
	<-registered
	proto := encodeInt(b, reg, "noop", 0)
	pipeline(b, inFlight, func(i int) {
		td := *proto
		td.TaskId = uint64(i + 1)
		if err := gw.Launch("exec-1", &td); err != nil {
			b.Fatal(err)
		}
	}, done)
}

func benchEcho(b *testing.B, inFlight int) {
	srv, err := grpcecho.Listen()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := grpcecho.Dial(srv.Addr(), window)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	pipeline(b, inFlight, func(i int) {
		if err := c.Send(uint64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}, c.Answers())
}
