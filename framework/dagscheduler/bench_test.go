package dagscheduler

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
)

// linearJob is a chain of n stages: node i reads node i-1 through shuffle
// i-1; parts partitions each.
func linearJob(n, parts int) JobSpec {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: NodeID(fmt.Sprintf("n%d", i)), Partitions: parts}
		if i > 0 {
			nodes[i].Deps = []Dep{{Kind: Shuffle, Parent: nodes[i-1].ID, ShuffleID: i - 1}}
		}
	}
	return JobSpec{Name: "linear", Nodes: nodes, Final: nodes[n-1].ID}
}

// wideJob is width map stages of parts partitions each, all read by one
// result stage (a cogroup of width inputs).
func wideJob(width, parts int) JobSpec {
	var nodes []Node
	final := Node{ID: "join", Partitions: parts}
	for i := range width {
		id := NodeID(fmt.Sprintf("in%d", i))
		nodes = append(nodes, Node{ID: id, Partitions: parts})
		final.Deps = append(final.Deps, Dep{Kind: Shuffle, Parent: id, ShuffleID: i})
	}
	return JobSpec{Name: "wide", Nodes: append(nodes, final), Final: final.ID}
}

var benchSizes = func() []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	s := make([]uint64, 1000)
	for i := range s {
		if r.IntN(10) > 0 {
			s[i] = r.Uint64N(1 << 24)
		}
	}
	return s
}()

// runToEnd completes every task set the DAG core submits, on 10
// executors, until the job ends; it returns the number of tasks completed.
func runToEnd(b *testing.B, s *Scheduler, ev []Event, sizes []uint64) int {
	queue := ev
	tasks := 0
	loc := func(i int) mapoutput.Location {
		e := fmt.Sprintf("e%d", i%10)
		return mapoutput.Location{ExecutorID: e, Host: "h" + e, Address: e + ":7337"}
	}
	var statusSizes []uint64
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		switch e := e.(type) {
		case SubmitTaskSet:
			ts := e.TaskSet
			for i := range ts.Partitions {
				t := ts.Task(i)
				te := TaskEnd{Task: t, Reason: Succeeded}
				if t.Kind == MapTask {
					if len(statusSizes) != t.NumReduces {
						statusSizes = make([]uint64, t.NumReduces)
						copy(statusSizes, sizes)
					}
					te.MapStatus = &mapoutput.Status{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Location: loc(i), Sizes: statusSizes}
				}
				tasks++
				queue = append(queue, s.TaskEnded(te, t0)...)
			}
		case JobFailed:
			b.Fatalf("job failed: %s", e.Reason)
		}
	}
	return tasks
}

func benchJob(b *testing.B, spec JobSpec) {
	b.Run("submit", func(b *testing.B) {
		b.ReportAllocs()
		start := processCPU()
		for b.Loop() {
			s, _ := New(Config{})
			if _, _, err := s.SubmitJob(spec, t0); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	b.Run("run", func(b *testing.B) {
		b.ReportAllocs()
		tasks := 0
		var elapsed time.Duration
		startCPU := processCPU()
		for b.Loop() {
			s, _ := New(Config{})
			start := time.Now()
			_, ev, err := s.SubmitJob(spec, t0)
			if err != nil {
				b.Fatal(err)
			}
			tasks += runToEnd(b, s, ev, benchSizes)
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(tasks)/elapsed.Seconds(), "tasks/s")
		b.ReportMetric(float64(tasks)/(processCPU()-startCPU).Seconds(), "tasks/cpu-s")
	})
}

// BenchmarkLinear1000: a job of 1,000 stages in a line (10 partitions each).
func BenchmarkLinear1000(b *testing.B) { benchJob(b, linearJob(1000, 10)) }

// BenchmarkWide100x100: 100 map stages of 100 tasks feeding one 100-task
// result stage.
func BenchmarkWide100x100(b *testing.B) { benchJob(b, wideJob(100, 100)) }

// BenchmarkMapCompletions: map-task completions with map statuses for
// 1,000 reducers through the DAG core (TaskEnded → tracker). One
// iteration is a job whose map stage has 10,000 tasks; -benchtime=100x
// gives 1,000,000 completions. It also reports the tracker's heap bytes
// per registered map output.
func BenchmarkMapCompletions(b *testing.B) {
	const maps, reduces = 10000, 1000
	spec := JobSpec{Name: "m", Final: "r", Nodes: []Node{{ID: "m", Partitions: maps},
		{ID: "r", Partitions: reduces, Deps: []Dep{{Kind: Shuffle, Parent: "m", ShuffleID: 0}}}}}
	locs := make([]mapoutput.Location, 100)
	for i := range locs {
		e := fmt.Sprintf("e%d", i)
		locs[i] = mapoutput.Location{ExecutorID: e, Host: "h" + e, Address: e + ":7337"}
	}
	completions := 0
	var elapsed, cpu time.Duration
	var perOutput float64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, _ := New(Config{DisableReduceLocality: true})
		_, ev, err := s.SubmitJob(spec, t0)
		if err != nil {
			b.Fatal(err)
		}
		ts := ev[len(ev)-1].(SubmitTaskSet).TaskSet
		ends := make([]TaskEnd, len(ts.Partitions))
		for i := range ends {
			t := ts.Task(i)
			ends[i] = TaskEnd{Task: t, Reason: Succeeded, MapStatus: &mapoutput.Status{ShuffleID: 0, MapIndex: t.Partition,
				TaskID: uint64(i), Location: locs[i%len(locs)], Sizes: benchSizes}}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		start, startCPU := time.Now(), processCPU()
		for i := range ends {
			s.TaskEnded(ends[i], t0)
		}
		elapsed += time.Since(start)
		cpu += processCPU() - startCPU
		b.StopTimer()
		completions += len(ends)
		if !s.Tracker().IsAvailable(0) {
			b.Fatal("map outputs missing after every completion")
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perOutput = float64(after.HeapAlloc-before.HeapAlloc) / maps
		runtime.KeepAlive(s)
		runtime.KeepAlive(ends)
		b.StartTimer()
	}
	b.ReportMetric(float64(completions)/elapsed.Seconds(), "completions/s")
	b.ReportMetric(float64(completions)/cpu.Seconds(), "completions/cpu-s")
	b.ReportMetric(perOutput, "tracker-B/output")
}
