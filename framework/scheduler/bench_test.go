package scheduler

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// benchOffers builds n offers of cores each on n/10 hosts... one executor per host.
func benchOffers(n, cores int) []WorkerOffer {
	offers := make([]WorkerOffer, n)
	for i := range offers {
		offers[i] = WorkerOffer{ExecutorID: fmt.Sprintf("e%d", i), Host: fmt.Sprintf("h%d", i),
			Rack: fmt.Sprintf("r%d", i%20), Cores: cores}
	}
	return offers
}

// benchTasks builds n tasks; with prefs, each prefers one of hosts hosts.
func benchTasks(n, hosts int, prefs bool) []TaskSpec {
	tasks := make([]TaskSpec, n)
	if prefs {
		for i := range tasks {
			tasks[i].Preferred = []Location{{Host: fmt.Sprintf("h%d", i%hosts)}}
		}
	}
	return tasks
}

func benchResourceOffers(b *testing.B, tasks, offers, cores int, prefs bool) {
	cfg := DefaultConfig()
	os := benchOffers(offers, cores)
	ts := benchTasks(tasks, offers, prefs)
	b.ReportAllocs()
	assigned := 0
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		s, err := New(cfg, rand.New(rand.NewPCG(1, uint64(i))))
		if err != nil {
			b.Fatal(err)
		}
		s.registerOffers(os) // executors known before submission, as in a running cluster
		if err := s.Submit(TaskSet{ID: "ts", Tasks: ts}, t0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		ls := s.ResourceOffers(os, t0)
		elapsed += time.Since(start)
		if want := min(tasks, offers*cores); len(ls) != want {
			b.Fatalf("launched %d, want %d", len(ls), want)
		}
		assigned += len(ls)
	}
	b.ReportMetric(float64(assigned)/elapsed.Seconds(), "assignments/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(assigned), "ns/assignment")
}

func BenchmarkResourceOffers(b *testing.B) {
	for _, c := range []struct {
		tasks, offers, cores int
		prefs                bool
	}{
		{10_000, 100, 100, false},
		{100_000, 1000, 100, false},
		{1_000_000, 10_000, 100, false},
		{10_000, 100, 100, true},
		{100_000, 1000, 100, true},
		{1_000_000, 10_000, 100, true},
	} {
		name := fmt.Sprintf("tasks=%d/offers=%d/prefs=%v", c.tasks, c.offers, c.prefs)
		b.Run(name, func(b *testing.B) { benchResourceOffers(b, c.tasks, c.offers, c.cores, c.prefs) })
	}
}

// BenchmarkResourceOffersFair: many task sets in FAIR pools, re-ranked per launch.
func BenchmarkResourceOffersFair(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Mode = FAIR
	for p := range 10 {
		cfg.Pools = append(cfg.Pools, PoolConfig{Name: fmt.Sprintf("p%d", p), Weight: p + 1, Mode: FAIR})
	}
	os := benchOffers(1000, 100)
	b.ReportAllocs()
	assigned := 0
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		s, _ := New(cfg, rand.New(rand.NewPCG(1, uint64(i))))
		for j := range 100 {
			ts := TaskSet{ID: fmt.Sprint(j), JobID: int64(j), StageID: j, Pool: fmt.Sprintf("p%d", j%10), Tasks: make([]TaskSpec, 1000)}
			if err := s.Submit(ts, t0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		assigned += len(s.ResourceOffers(os, t0))
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(assigned)/elapsed.Seconds(), "assignments/s")
}

// BenchmarkHeapPerPendingTask measures driver heap per pending task after
// submitting 1,000,000 tasks (no preferences, plus one host preference).
func BenchmarkHeapPerPendingTask(b *testing.B) {
	for _, prefs := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefs=%v", prefs), func(b *testing.B) {
			const n = 1_000_000
			var perTask float64
			for b.Loop() {
				perTask = heapPerTask(b, n, prefs)
			}
			b.ReportMetric(perTask, "bytes/task")
		})
	}
}

func heapPerTask(tb testing.TB, n int, prefs bool) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tasks := benchTasks(n, 1000, prefs)
	s, err := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Submit(TaskSet{ID: "ts", Tasks: tasks}, t0); err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	runtime.KeepAlive(tasks)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

func TestHeapPerPendingTask(t *testing.T) {
	if testing.Short() {
		t.Log("short mode: 100k tasks")
	}
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	per := heapPerTask(t, n, true)
	t.Logf("%.1f bytes per pending task (with one host preference each, task specs included)", per)
	if per > 1024 {
		t.Fatalf("%.1f bytes per pending task, want <= 1024", per)
	}
}
