package coarse_test

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// BenchmarkEmptyTasks runs jobs of empty tasks through two coarse
// executors (4 cores each) on a minimesos cluster over loopback: the full
// path driver core → gateway → executor process → status update → driver.
// Compare with BenchmarkRawEcho, run in the same session.
//
//	go test -run '^$' -bench . ./coarse
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

// BenchmarkRawEcho is the baseline of BenchmarkEmptyTasks: a raw gRPC
// bidirectional stream over loopback with the same codec, one
// StatusUpdate-sized ExecutorMessage up and one TaskDescription-sized
// DriverMessage down per round trip, 64 round trips in flight. It reports
// message pairs per second.
func BenchmarkRawEcho(b *testing.B) {
	srv := grpc.NewServer(grpc.ForceServerCodec(flintpb.Codec{}))
	srv.RegisterService(&echoDesc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(flintpb.Codec{})))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := cc.NewStream(ctx, &echoDesc.Streams[0], "/flint.bench.Echo/Echo")
	if err != nil {
		b.Fatal(err)
	}
	const inFlight, pairs = 64, 200_000
	done := make(chan struct{}, inFlight)
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for {
			if err := s.RecvMsg(new(flintpb.DriverMessage)); err != nil {
				return
			}
			done <- struct{}{}
		}
	}()
	uuid := make([]byte, 16)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		outstanding := 0
		for i := range pairs {
			if outstanding == inFlight {
				<-done
				outstanding--
			}
			m := &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{
				TaskId: uint64(i + 1), ExecutorId: "1", State: flintpb.TaskState_TASK_FINISHED, Uuid: uuid,
				Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: []byte{3, 4, 0, 0}}}}}}
			if err := s.SendMsg(m); err != nil {
				b.Fatal(err)
			}
			outstanding++
		}
		for ; outstanding > 0; outstanding-- {
			<-done
		}
	}
	b.ReportMetric(float64(b.N*pairs)/time.Since(start).Seconds(), "pairs/s")
	_ = s.CloseSend()
	cancel()
	<-recvDone
}

// echoDesc is a raw bidirectional stream answering every ExecutorMessage
// with a DriverMessage carrying a launch.
var echoDesc = grpc.ServiceDesc{
	ServiceName: "flint.bench.Echo",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{StreamName: "Echo", ServerStreams: true, ClientStreams: true,
		Handler: func(_ any, s grpc.ServerStream) error {
			for {
				in := new(flintpb.ExecutorMessage)
				if err := s.RecvMsg(in); err != nil {
					return nil
				}
				out := &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: &flintpb.TaskDescription{
					TaskId: in.GetStatusUpdate().GetTaskId(), Function: "noop", Codec: "gob", Input: []byte{3, 4, 0, 0}}}}
				if err := s.SendMsg(out); err != nil {
					return nil
				}
			}
		}}},
}
