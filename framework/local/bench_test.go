package local_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// BenchmarkLocalEmptyTasks runs jobs of 100,000 no-op tasks end to end on
// local[*] and reports tasks/s.
func BenchmarkLocalEmptyTasks(b *testing.B) {
	const n = 100_000
	fc := mustContext(b, map[string]string{"flint.master": "local[*]"})
	in := make([]int, n)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := framework.Map(context.Background(), fc, noop, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tasks/s")
}

// BenchmarkSmallJobBehindLargeJob submits a 4-task job while a 400-task job
// of 2 ms tasks holds both slots, and reports the small job's latency under
// FIFO and under FAIR (each job in its own pool).
func BenchmarkSmallJobBehindLargeJob(b *testing.B) {
	for _, mode := range []string{"FIFO", "FAIR"} {
		b.Run(mode, func(b *testing.B) {
			fc := mustContext(b, map[string]string{"flint.master": "local[2]", "flint.scheduler.mode": mode})
			var total time.Duration
			for i := 0; i < b.N; i++ {
				total += smallBehindLarge(b, fc)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "small-job-ms")
		})
	}
}

func smallBehindLarge(b *testing.B, fc *framework.Context) time.Duration {
	large := make([]time.Duration, 400)
	for i := range large {
		large[i] = 2 * time.Millisecond
	}
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), fc, hold, large, framework.WithPool("batch"))
		done <- err
	}()
	waitfor.True(b, 10*time.Second, "the large job to hold both slots", func() bool { return running.Load() == 2 })
	start := time.Now()
	if _, err := framework.Map(context.Background(), fc, hold, make([]time.Duration, 4), framework.WithPool("interactive")); err != nil {
		b.Fatal(err)
	}
	lat := time.Since(start)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return lat
}

// BenchmarkPendingTaskHeap measures driver heap per pending task: a job of
// 1,000,000 tasks is submitted on local[1] whose one slot is held, so all but
// one task stay pending; the heap growth (job payload, driver and scheduler
// state) divided by the task count is reported.
func BenchmarkPendingTaskHeap(b *testing.B) {
	const n = 1_000_000
	for i := 0; i < b.N; i++ {
		fc := mustContext(b, map[string]string{"flint.master": "local[1]"})
		before := heapInUse()
		job := &framework.Job{Name: "pending", Tasks: make([]framework.Task, n)}
		for j := range job.Tasks {
			t, err := wait.Task(j)
			if err != nil {
				b.Fatal(err)
			}
			job.Tasks[j] = t
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := fc.RunJob(ctx, job); done <- err }()
		waitfor.True(b, time.Minute, "the job's first task to run", func() bool {
			st := fc.ActiveStages()
			return len(st) > 0 && st[0].Active > 0
		})
		after := heapInUse()
		b.ReportMetric(float64(after-before)/n, "heap-bytes/pending-task")
		cancel()
		<-done
		runtime.KeepAlive(job)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
