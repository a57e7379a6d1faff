package dataset

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset/internal/detach"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/framework/storage"
)

// BenchmarkTextSplitLines is TextFile's per-line cost apart from the network: the lines of a
// 64 MiB local file of 91-byte lines (page cache), read as 4 parts (3 starting mid-file) into
// batches of strings that a count takes, as TextFile+Count's task does. The S3 scan of
// docs/benchmarks.md pays this beside its GETs.
func BenchmarkTextSplitLines(b *testing.B) {
	splits, want, size := linesFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		var n, read int64
		for _, s := range splits {
			err := readTextSplit(nil, s, func(lines []string) error {
				n += int64(len(lines))
				return nil
			}, func(k int64) { read += k })
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != want || read != size {
			b.Fatalf("%d lines of %d bytes, want %d of %d", n, read, want, size)
		}
	}
	b.ReportMetric((processCPU()-cpu).Seconds()/float64(b.N)*float64(1<<30)/float64(size), "cpu-s/GiB")
}

// linesFile writes a 64 MiB file of 91-byte lines and returns it as 4 splits (3 starting
// mid-file), with its number of lines and its size.
func linesFile(b *testing.B) ([]fileSplit, int64, int64) {
	line := strings.Repeat("abcdefghij", 9) + "\n"
	const size = 64 << 20
	body := strings.Repeat(line, size/len(line))
	p := filepath.Join(b.TempDir(), "lines.txt")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	fi := storage.FileInfo{Path: p, Size: int64(len(body))}
	var splits []fileSplit
	for i := range int64(4) {
		splits = append(splits, fileSplit{Parts: []filePart{{File: fi, Start: fi.Size * i / 4, End: fi.Size * (i + 1) / 4}}})
	}
	return splits, int64(len(body) / len(line)), fi.Size
}

// processCPU is the CPU (user+sys) the process used so far, the GC's included: on a loaded
// machine it moves far less than the wall clock.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTextSplitPersist is the price of detaching a persisted TextFile's records (issue
// 25): the lines of the same 64 MiB file, every one kept in memory as fill keeps a partition
// within the budget (the budget's estimate per batch, the batch appended), with the strings
// copied as they are kept ("detached", what fill does now: one allocation per batch) beside
// the same work with the lines sharing their chunks ("shared", the behaviour before) and
// with each line copied on its own ("cloned", strings.Clone). "fill" is the real path
// (runCached on a fresh cache each round), which detaches. Each round's lines are dropped
// before the next; cpu-s/GiB counts the garbage collector's share; live-MiB is the heap one
// more round's kept lines hold after a collection.
func BenchmarkTextSplitPersist(b *testing.B) {
	splits, want, size := linesFile(b)
	keep := func(detachKept func([]string)) func() [][]string {
		return func() [][]string {
			codec := recordcodec.For[string]()
			var kept [][]string
			var est int64
			for _, s := range splits {
				var recs []string
				err := readTextSplit(nil, s, func(lines []string) error {
					est += estimateSize(codec, lines)
					recs = append(recs, lines...)
					if detachKept != nil {
						detachKept(recs[len(recs)-len(lines):])
					}
					return nil
				}, func(int64) {})
				if err != nil {
					b.Fatal(err)
				}
				kept = append(kept, recs)
			}
			return kept
		}
	}
	b.Run("shared", func(b *testing.B) { persistRounds(b, size, want, keep(nil)) })
	b.Run("detached", func(b *testing.B) { persistRounds(b, size, want, keep(detach.For[string]())) })
	b.Run("cloned", func(b *testing.B) { persistRounds(b, size, want, keep(cloneEach)) })
	b.Run("fill", func(b *testing.B) {
		persistRounds(b, size, want, func() [][]string { return fillLines(b, splits) })
	})
}

// cloneEach copies each string on its own (strings.Clone): detach's first version, kept in
// the benchmark beside the one allocation per batch detach makes now.
func cloneEach(recs []string) {
	for i := range recs {
		recs[i] = strings.Clone(recs[i])
	}
}

// fillLines persists the lines of splits through the cache (MemoryOnly, a budget that holds
// them) and returns what it kept.
func fillLines(b *testing.B, splits []fileSplit) [][]string {
	n := &tnode[string]{nodeInfo: nodeInfo{id: "lines", parts: len(splits), storage: MemoryOnly}}
	n.compute = func(tc *taskContext, p int, emit func([]string) error) error {
		return readTextSplit(tc, splits[p], emit, func(int64) {})
	}
	tc := &taskContext{ctx: context.Background(), env: &taskEnv{runID: "bench", state: newState()}, storage: 1 << 40}
	var kept [][]string
	for p := range splits {
		if err := runCached(tc, n, p, func([]string) error { return nil }); err != nil {
			b.Fatal(err)
		}
		recs, _ := tc.env.state.cache.m[cacheKey{run: "bench", node: "lines", part: p}].recs.([]string)
		kept = append(kept, recs)
	}
	return kept
}

// persistRounds runs round b.N times, reporting CPU per GiB of lines, then once more,
// checking that it kept want lines and reporting the live heap they hold.
func persistRounds(b *testing.B, size, want int64, round func() [][]string) {
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		round()
	}
	b.ReportMetric((processCPU()-cpu).Seconds()/float64(b.N)*float64(1<<30)/float64(size), "cpu-s/GiB")
	kept := round()
	var n int64
	for _, k := range kept {
		n += int64(len(k))
	}
	if n != want {
		b.Fatalf("kept %d lines, want %d", n, want)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
	runtime.KeepAlive(kept)
}
