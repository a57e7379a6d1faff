package shuffle_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// benchWriter writes n small (word, count) records per iteration through
// the sorted, s2-compressed writer, encoding keys and values with the
// codecs: the map side of a word count without map-side combine.
func benchWriter(b *testing.B, keys recordcodec.Codec[string], values recordcodec.Codec[int64], keyed bool) {
	const n = 1 << 20
	words := make([]string, 4096)
	for i := range words {
		words[i] = "word" + strconv.Itoa(i*7919%100000)
	}
	s := openStore(b)
	mem := shuffle.NewMemory(1 << 30)
	var kbuf, vbuf []byte
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		order := shuffle.ByteOrder
		if !keyed {
			order = shuffle.Unordered
		}
		w, err := shuffle.NewWriter(shuffle.Config{Store: s, MapIndex: i, Partitions: 16, Order: order, Compression: shuffleblock.S2, Memory: mem.Task()})
		if err != nil {
			b.Fatal(err)
		}
		for j := range n {
			kbuf, _ = keys.Append(kbuf[:0], words[j&4095])
			vbuf, _ = values.Append(vbuf[:0], int64(j))
			if err := w.Add(j&15, kbuf, vbuf); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		s.RemoveShuffle(0)
	}
	reportRates(b, n, cpu0)
}

// reportRates gives records per second of wall time and per second of
// the process's CPU time (user+system, GC included): on a shared machine
// the second is the per-core figure.
func reportRates(b *testing.B, n int, cpu0 time.Duration) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "records/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWriterTypedSorted(b *testing.B) {
	benchWriter(b, recordcodec.For[string](), recordcodec.For[int64](), true)
}
func BenchmarkWriterTypedUnordered(b *testing.B) {
	benchWriter(b, recordcodec.For[string](), recordcodec.For[int64](), false)
}
func BenchmarkWriterGobSorted(b *testing.B) {
	benchWriter(b, recordcodec.Gob[string](), recordcodec.Gob[int64](), true)
}

// BenchmarkCombiningWriterWordCount is the map side of reduceByKey: a
// million words into combiners, sorted, compressed.
func BenchmarkCombiningWriterWordCount(b *testing.B) {
	const n = 1 << 20
	words := make([]string, 4096)
	for i := range words {
		words[i] = "word" + strconv.Itoa(i*7919%100000)
	}
	s := openStore(b)
	mem := shuffle.NewMemory(1 << 30)
	agg := shuffle.Aggregator[int64, int64]{CreateCombiner: func(v int64) int64 { return v },
		MergeValue: func(c, v int64) int64 { return c + v }, MergeCombiners: func(a, b int64) int64 { return a + b }}
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		w, err := shuffle.NewCombiningWriter(shuffle.Config{Store: s, MapIndex: i, Partitions: 16, Memory: mem.Task()}, recordcodec.For[string](), recordcodec.For[int64](), agg)
		if err != nil {
			b.Fatal(err)
		}
		for j := range n {
			if err := w.Add(j&15, words[j&4095], 1); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		s.RemoveShuffle(0)
	}
	reportRates(b, n, cpu0)
}

// BenchmarkSortFourTimesBudget sorts FLINT_BENCH_SORT_MB (default 256)
// MiB of 100-byte records under a quarter of that as shuffle memory and
// reports the process's peak RSS (VmHWM) against the budget. Run it alone
// (-run '^$' -bench SortFourTimes -benchtime 1x) so the peak is its own.
func BenchmarkSortFourTimesBudget(b *testing.B) {
	total := int64(256) << 20
	if v, err := strconv.Atoi(os.Getenv("FLINT_BENCH_SORT_MB")); err == nil {
		total = int64(v) << 20
	}
	budget := total / 4
	s := openStore(b)
	before := vmHWM(b)
	var spills int64
	for i := 0; b.Loop(); i++ {
		w, err := shuffle.NewWriter(shuffle.Config{Store: s, MapIndex: i, Partitions: 8, Order: shuffle.ByteOrder, Compression: shuffleblock.S2, Memory: shuffle.NewMemory(budget).Task()})
		if err != nil {
			b.Fatal(err)
		}
		key, val := make([]byte, 10), bytes.Repeat([]byte("v"), 90)
		x := uint64(88172645463325252)
		for range total / 100 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			binary.BigEndian.PutUint64(key, x)
			if err := w.Add(int(x>>61), key, val); err != nil {
				b.Fatal(err)
			}
		}
		res, err := w.Commit()
		if err != nil {
			b.Fatal(err)
		}
		spills = res.Spills
		s.RemoveShuffle(0)
	}
	peak := vmHWM(b)
	b.ReportMetric(float64(total>>20), "data-MiB")
	b.ReportMetric(float64(budget>>20), "budget-MiB")
	b.ReportMetric(float64(before)/1024, "rss-before-MiB")
	b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(spills), "spills")
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// vmHWM is the process's peak resident set in KiB.
func vmHWM(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	b.Fatal("no VmHWM")
	return 0
}

// BenchmarkMerge merges 8 sorted in-memory blocks of 100-byte records
// (the reduce side of a sort), reporting records per CPU-second.
func BenchmarkMerge(b *testing.B) { benchMerge(b, 8, 1<<17) }

// BenchmarkMerge32 merges 32 blocks, as a reduce task of the embedded
// shuffle benchmark does at 2 GiB.
func BenchmarkMerge32(b *testing.B) { benchMerge(b, 32, 1<<15) }

func benchMerge(b *testing.B, streams, per int) {
	blocks := make([][]byte, streams)
	for s := range blocks {
		var buf bytes.Buffer
		fw := shuffleblock.NewWriter(&buf, shuffleblock.S2, 0)
		key, val := make([]byte, 10), bytes.Repeat([]byte("v"), 90)
		for i := range per {
			binary.BigEndian.PutUint64(key, uint64(i*streams+s))
			fw.Append(key, val)
		}
		fw.Flush()
		blocks[s] = buf.Bytes()
	}
	cpu0 := cpuTime()
	for b.Loop() {
		ss := make([]shuffle.Stream, streams)
		for i, blk := range blocks {
			ss[i] = shuffleblock.NewReader(bytes.NewReader(blk))
		}
		m, err := shuffle.NewMerger(ss, shuffle.ByteOrder, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, _, err := m.Next()
			if err != nil {
				break
			}
			n++
		}
		if n != streams*per {
			b.Fatalf("merged %d", n)
		}
	}
	reportRates(b, streams*per, cpu0)
}

// BenchmarkWriterSort64MiB is a map task of the embedded shuffle
// benchmark: 64 MiB of 100-byte records with random 10-byte keys into 32
// partitions, sorted, s2 frames, committed, with memory to spare (no
// spill). Records lie in their partition's chunks in arrival order, so
// writing them in key order gathers them from all over the partition's
// 2 MiB.
func BenchmarkWriterSort64MiB(b *testing.B) {
	const total, parts = 64 << 20, 32
	s := openStore(b)
	mem := shuffle.NewMemory(1 << 30)
	key, val := make([]byte, 10), make([]byte, 90)
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		w, err := shuffle.NewWriter(shuffle.Config{Store: s, MapIndex: i, Partitions: parts, Order: shuffle.ByteOrder, Compression: shuffleblock.S2, Memory: mem.Task()})
		if err != nil {
			b.Fatal(err)
		}
		x := uint64(i)*0x9E3779B97F4A7C15 + 1
		for range total / 100 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			binary.BigEndian.PutUint64(key, x)
			binary.BigEndian.PutUint64(val, x*31)
			if err := w.Add(int(x>>59)%parts, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(); err != nil {
			b.Fatal(err)
		}
		s.RemoveShuffle(0)
	}
	reportRates(b, total/100, cpu0)
}
