package embedded_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/devtools/benchbase"
)

// envExecutorProfile names a directory: executors started by this test
// binary write their CPU profile there (executor-<pid>.pprof) when they
// exit. BenchmarkShuffleEmbedded passes FLINT_BENCH_EXECUTOR_PROFILE on to
// its executors under this name.
const envExecutorProfile = "FLINT_TEST_EXECUTOR_CPUPROFILE"

// executeProfiled runs this binary as an executor, under a CPU profile
// when envExecutorProfile is set.
func executeProfiled() int {
	dir := os.Getenv(envExecutorProfile)
	if dir == "" {
		return flint.Execute("embedded.test", nil, nil)
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("executor-%d.pprof", os.Getpid())))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "executor CPU profile: %v\n", err)
		return flint.Execute("embedded.test", nil, nil)
	}
	code := flint.Execute("embedded.test", nil, nil)
	pprof.StopCPUProfile()
	_ = f.Close()
	return code
}

// shuffleArgs: Maps map tasks of PerMap 100-byte records each (a 10-byte
// random key, a 90-byte value, like gensort's), moved into Reduces
// partitions: sorted by key (Sort), or hash-partitioned.
type shuffleArgs struct {
	Maps, Reduces int
	PerMap        int64
	Sort          bool
}

// shuffleRecords generates the records in its map tasks and moves them
// through the shuffle (map write, fetch, and with Sort the merge); every
// reduce task checks its partition (key order, or that each key hashes
// to it) and counts its bytes.
var shuffleRecords = dataset.JobResult("embedded_test.shuffle-records", func(b *dataset.Builder, a shuffleArgs) ([]int64, error) {
	recs := dataset.FlatMap(dataset.Range(b, 0, int64(a.Maps), a.Maps), func(m int64, yield func(dataset.KV[string, string])) {
		x := uint64(m)*0x9E3779B97F4A7C15 + 1
		var arena []byte
		for range a.PerMap {
			// records are carved from 64 KiB arenas (never reused: the
			// strings point into them), so generating them allocates
			// little; key and value share their record's bytes
			if len(arena) < 104 {
				arena = make([]byte, 64<<10)
			}
			rec := arena[:104:104] // the last PutUint64 writes to 104
			arena = arena[104:]
			for i := 0; i < 100; i += 8 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				binary.LittleEndian.PutUint64(rec[i:i+8], x)
			}
			s := unsafe.String(&rec[0], 100)
			yield(dataset.KV[string, string]{Key: s[:10], Value: s[10:]})
		}
	})
	var moved dataset.Dataset[dataset.KV[string, string]]
	hash := dataset.HashPartitioner(a.Reduces)
	if a.Sort {
		moved = dataset.SortByKey(recs, true, a.Reduces)
	} else {
		moved = dataset.PartitionBy(recs, hash)
	}
	sums := dataset.MapPartitions(moved, func(part int, records func(func(dataset.KV[string, string]) bool), yield func(int64)) error {
		var n int64
		prev, bad := "", ""
		records(func(kv dataset.KV[string, string]) bool {
			switch {
			case a.Sort && kv.Key < prev:
				bad = fmt.Sprintf("partition %d: key %q after %q", part, kv.Key, prev)
			case !a.Sort && hash.Partition(unsafe.Slice(unsafe.StringData(kv.Key), len(kv.Key))) != part:
				bad = fmt.Sprintf("partition %d: key %q belongs elsewhere", part, kv.Key)
			}
			prev = kv.Key
			n += int64(len(kv.Key) + len(kv.Value))
			return bad == ""
		})
		if bad != "" {
			return fmt.Errorf("misplaced record: %s", bad)
		}
		yield(n)
		return nil
	})
	return dataset.Collect(sums)
})

// spillCount sums the map tasks' spills and the shuffle bytes read.
type spillCount struct {
	mu           sync.Mutex
	spills, read int64
	tasks        int
}

func (c *spillCount) OnEvent(e event.Event) {
	if te, ok := e.(event.TaskEnd); ok {
		c.mu.Lock()
		c.spills += te.ShuffleWrite.Spills
		c.read += te.ShuffleReadBytes
		c.tasks++
		c.mu.Unlock()
	}
}

var warmUp = dataset.JobResult("embedded_test.warm-up", func(b *dataset.Builder, n int) (int64, error) {
	return dataset.Count(dataset.Range(b, 0, int64(n), n))
})

// BenchmarkShuffleEmbedded moves FLINT_BENCH_SHUFFLE_MB (default 256) MiB
// of 100-byte records through a shuffle on the embedded master with 2
// one-core executors of 512 MiB (so 102 MiB of shuffle memory each; 64 MiB
// per map task, at least 8 map and 8 reduce tasks), next to a loopback TCP
// copy and a write + re-read of the same bytes in the same file system,
// measured in the same run. sortByKey is the sort shuffle: the job samples
// its input for the range partitioner first (Spark's sortByKey does the
// same, so the records are generated twice), the map side sorts by key and
// the reduce side merges; partitionBy hash-partitions without sampling,
// sorting or merging (map write, fetch). MB/cpu-s of the shuffle counts
// the CPU time of the driver, the in-process cluster and the executor
// processes. MB/s counts the records' bytes. Run with -benchtime 1x.
func BenchmarkShuffleEmbedded(b *testing.B) {
	b.Run("sortByKey", func(b *testing.B) { benchShuffleEmbedded(b, true) })
	b.Run("partitionBy", func(b *testing.B) { benchShuffleEmbedded(b, false) })
}

func benchShuffleEmbedded(b *testing.B, sorted bool) {
	total := int64(256) << 20
	if v, err := strconv.Atoi(os.Getenv("FLINT_BENCH_SHUFFLE_MB")); err == nil {
		total = int64(v) << 20
	}
	// 64 MiB per map task (a Spark input split is 128 MiB) and as many
	// reduce tasks, at least 8 of each
	maps := int(max(8, total>>26))
	reduces := maps
	args := shuffleArgs{Maps: maps, Reduces: reduces, PerMap: total / 100 / int64(maps), Sort: sorted}
	moved := args.PerMap * int64(maps) * 100
	dir := b.TempDir()
	var tcp, disk, job benchbase.Cost
	var rssBefore, rssPeak float64
	counts := &spillCount{}
	for b.Loop() {
		var err error
		if tcp, err = benchbase.TCPCopy(moved); err != nil {
			b.Fatal(err)
		}
		if disk, err = benchbase.DiskWriteRead(dir, moved); err != nil {
			b.Fatal(err)
		}
		cpu0 := benchbase.CPUTimeWithChildren()
		conf := []string{"flint.executor.cores=1", "flint.executor.memory=512m", "flint.embedded.workDir=" + dir}
		if p := os.Getenv("FLINT_BENCH_EXECUTOR_PROFILE"); p != "" {
			conf = append(conf, "flint.executorEnv."+envExecutorProfile+"="+p)
		}
		if extra := os.Getenv("FLINT_BENCH_CONF"); extra != "" { // key=value;key=value, for experiments
			conf = append(conf, strings.Split(extra, ";")...)
		}
		fc, _, err := newContext(b, conf...)
		if err != nil {
			b.Fatal(err)
		}
		fc.AddListener(counts)
		// executors up before the clock starts: the figure is the
		// shuffle's, not the executors' start
		if n, err := warmUp.Run(context.Background(), fc, 4); err != nil || n != 4 {
			b.Fatalf("warm-up job: %d, %v", n, err)
		}
		rssBefore = executorsPeakRSS(b, dir)
		start := time.Now()
		sums, err := shuffleRecords.Run(context.Background(), fc, args)
		job.Wall = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		rssPeak = executorsPeakRSS(b, dir)
		var got int64
		for _, s := range sums {
			got += s
		}
		if len(sums) != reduces || got != moved {
			b.Fatalf("reduce tasks counted %d bytes in %d partitions, want %d in %d", got, len(sums), moved, reduces)
		}
		if err := fc.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		// the executors have exited and been waited for: their CPU time
		// counts (with the driver's, the cluster's and the warm-up's)
		job.CPU = benchbase.CPUTimeWithChildren() - cpu0
	}
	b.ReportMetric(tcp.MBps(moved), "tcp-MB/s")
	b.ReportMetric(disk.MBps(moved), "disk-MB/s")
	b.ReportMetric(job.MBps(moved), "shuffle-MB/s")
	b.ReportMetric(tcp.MBperCPU(moved), "tcp-MB/cpu-s")
	b.ReportMetric(disk.MBperCPU(moved), "disk-MB/cpu-s")
	b.ReportMetric(job.MBperCPU(moved), "shuffle-MB/cpu-s")
	b.ReportMetric(float64(counts.spills)/float64(b.N), "map-spills")
	b.ReportMetric(rssBefore, "executor-HWM-before-MiB")
	b.ReportMetric(rssPeak, "executor-HWM-MiB")
	b.ReportMetric(float64(counts.read)/float64(moved), "read/moved")
	b.ReportMetric(100*job.MBps(moved)/min(tcp.MBps(moved), disk.MBps(moved)), "%-of-min")
}

// executorsPeakRSS is the largest peak resident size (VmHWM, MiB) among
// the live executor processes whose sandbox lies under dir; at least
// one must be found.
func executorsPeakRSS(b *testing.B, dir string) float64 {
	b.Helper()
	peak, found := 0.0, 0
	for _, pid := range rolePIDs(dir, "coarse-executor") {
		st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue // exited meanwhile
		}
		for _, line := range strings.Split(string(st), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
				kb, err := strconv.ParseFloat(f[1], 64)
				if err == nil {
					peak, found = max(peak, kb/1024), found+1
				}
			}
		}
	}
	if found == 0 {
		b.Fatalf("no executor process under %s to read VmHWM of", dir)
	}
	return peak
}
