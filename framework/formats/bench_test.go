package formats_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
	"github.com/flint-mesos/flint/framework/storage"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
)

// The figures of docs/benchmarks.md ("Formats and S3"), each beside its baseline measured in
// the same run:
//
//	FLINT_BENCH_FORMATS=1 FLINT_BENCH_MB=256 FLINT_VERSITYGW=bin/versitygw \
//	  go test -count=1 -run TestFormatsBenchFigures -v -timeout 60m ./framework/formats/
//
// FLINT_BENCH_MB sizes each data set (default 128; the figures are at 1024).
func TestFormatsBenchFigures(t *testing.T) {
	if os.Getenv("FLINT_BENCH_FORMATS") == "" {
		t.Skip("a benchmark: set FLINT_BENCH_FORMATS=1")
	}
	mb := 128
	if v := os.Getenv("FLINT_BENCH_MB"); v != "" {
		mb, _ = strconv.Atoi(v)
	}
	t.Run("s3scan", func(t *testing.T) { benchS3Scan(t, mb) })
	t.Run("parquet", func(t *testing.T) { benchParquet(t, mb) })
	t.Run("gzwordcount", func(t *testing.T) { benchGzWordcount(t, mb) })
}

// benchContext is local[2]: two task slots, the "2 executors" on this 2-core machine.
func benchContext(t *testing.T, extra ...string) *framework.Context {
	t.Helper()
	return newBenchContext(t, append([]string{"flint.master=local[2]"}, extra...))
}

// benchCoarseContext is the embedded master in coarse mode with 2 executors of 1 core each:
// separate processes (this test binary, started by the in-process agents), both registered
// before it returns, so no side's time includes their start.
func benchCoarseContext(t *testing.T) *framework.Context {
	t.Helper()
	added := make(chan struct{}, 16)
	fc := newBenchContext(t, []string{"flint.master=embedded", "flint.mesos.coarse=true",
		"flint.embedded.agents=2", "flint.embedded.agent.cpus=1", "flint.executor.cores=1", "flint.cores.max=2",
		"flint.embedded.workDir=" + t.TempDir()},
		framework.WithListener(event.ListenerFunc(func(e event.Event) {
			if _, ok := e.(event.ExecutorAdded); ok {
				select {
				case added <- struct{}{}:
				default: // more than the 2 awaited
				}
			}
		})))
	for range 2 {
		select {
		case <-added:
		case <-time.After(time.Minute):
			t.Fatal("the embedded master's 2 executors did not register within a minute")
		}
	}
	return fc
}

// newBenchContext starts a Context of conf (after the defaults: no UI, no progress bar, the
// S3 server's settings), stopped when the test ends.
func newBenchContext(t *testing.T, conf []string, opts ...framework.Option) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	all := append([]string{"flint.ui.enabled=false", "flint.ui.showConsoleProgress=false"}, shared.Conf()...)
	for _, kv := range append(all, conf...) {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, append(opts, framework.WithLogger(log))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc
}

var countLinesJob = dataset.JobResult("formats.bench.countLines", func(b *dataset.Builder, paths []string) (int64, error) {
	return dataset.Count(dataset.TextFile(b, paths...))
})

// S3 scan: 16 text objects of mb/16 MiB on the loopback versitygw, counted by TextFile on
// local[2] and on the embedded master's 2 one-core executors (coarse mode), beside the same
// objects fetched whole by 2 goroutines doing plain GETs. Every Flint side checks its count
// against the lines written.
func benchS3Scan(t *testing.T, mb int) {
	fs := testFS(t, shared)
	prefix := fmt.Sprintf("s3://%s/bench/scan-%d", sharedBucket, mb)
	line := strings.Repeat("abcdefghij", 9) + "\n" // 91 bytes
	per := mb << 20 / 16
	body := []byte(strings.Repeat(line, per/len(line)))
	var wantLines int64
	for i := range 16 {
		put := func() error {
			w, err := fs.Create(context.Background(), fmt.Sprintf("%s/part-%02d.txt", prefix, i))
			if err != nil {
				return err
			}
			if _, err := w.Write(body); err != nil {
				return err
			}
			return w.Close()
		}
		if err := put(); err != nil {
			t.Fatal(err)
		}
		wantLines += int64(len(body) / len(line))
	}
	total := float64(16*len(body)) / (1 << 20)
	files, err := fs.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	tiny := fmt.Sprintf("s3://%s/bench/scan-tiny", sharedBucket)
	if err := putObject(fs, tiny+"/one.txt", []byte(line)); err != nil {
		t.Fatal(err)
	}
	fc := benchContext(t)
	coarse := benchCoarseContext(t)
	// Four sides: Flint on local[2] and on 2 one-core executors, and two baselines of plain
	// GETs by 2 goroutines — io.Copy into io.Discard (8 KiB reads, as a small Go program does
	// it), and reads of lineChunk's 256 KiB (Flint's read size: fewer syscalls, the stricter
	// baseline).
	count := func(fc *framework.Context) func() time.Duration {
		return func() time.Duration {
			start := time.Now()
			if n, err := countLinesJob.Run(t.Context(), fc, []string{prefix}); err != nil || n != wantLines {
				t.Fatalf("flint counted %d lines (%v), want %d", n, err, wantLines)
			}
			return time.Since(start)
		}
	}
	sides := []*scanSide{
		{name: "flint TextFile+Count local[2]", flint: true, run: count(fc)},
		{name: "flint TextFile+Count embedded coarse, 2 executors of 1 core", flint: true, run: count(coarse)},
		{name: "2 GETs io.Copy (8 KiB reads)", run: func() time.Duration { return plainGets(t, fs, files, 0) }},
		{name: "2 GETs 256 KiB reads", run: func() time.Duration { return plainGets(t, fs, files, 256<<10) }},
	}
	var fixed []time.Duration
	// Rounds rotate which side goes first (none always gets a cold server or a warm one);
	// each side's figure is its median.
	for round := range benchRounds() {
		for i := range sides {
			sd := sides[(i+round)%len(sides)]
			cpu := readCPU()
			sd.times = append(sd.times, sd.run())
			sd.cpu = sd.cpu.add(readCPU().sub(cpu))
		}
		start := time.Now()
		if n, err := countLinesJob.Run(t.Context(), fc, []string{tiny}); err != nil || n != 1 {
			t.Fatalf("flint counted %d lines of the one-line object (%v)", n, err)
		}
		fixed = append(fixed, time.Since(start))
	}
	t.Logf("s3 scan of %.0f MiB (16 objects), median of %d rounds; the same job over one 91-byte object on local[2], the fixed cost: median %v",
		total, len(fixed), median(fixed).Round(time.Millisecond))
	t.Logf("  CPU s per GiB: this process (the driver; on local[2] its tasks, on embedded the master and agents) / the executor processes / the S3 server (client: the first two)")
	for _, sd := range sides {
		t.Logf("  %s", sd.report(total, sides))
	}
}

// scanSide is one side of the S3 scan: its runs and the CPU they took.
type scanSide struct {
	name  string
	flint bool // a Flint job, to compare with the baselines
	run   func() time.Duration
	times []time.Duration
	cpu   cpuTimes
}

// report is the side's line: median time, throughput, CPU per GiB (each process kind), and,
// for a baseline, each Flint side's throughput as a share of it.
func (sd *scanSide) report(totalMiB float64, sides []*scanSide) string {
	d := median(sd.times)
	gib := totalMiB / 1024 * float64(len(sd.times))
	line := fmt.Sprintf("%s: %v = %.0f MiB/s; CPU s per GiB %.2f / %.2f / %.2f (client: %.2f)",
		sd.name, d.Round(time.Millisecond), totalMiB/d.Seconds(),
		sd.cpu.self.Seconds()/gib, sd.cpu.executors.Seconds()/gib, sd.cpu.server.Seconds()/gib, (sd.cpu.self+sd.cpu.executors).Seconds()/gib)
	if !sd.flint {
		for _, f := range sides {
			if f.flint {
				line += fmt.Sprintf("; %s %.0f%% of it", f.name, 100*d.Seconds()/median(f.times).Seconds())
			}
		}
	}
	return line + fmt.Sprintf("; runs %v", sd.times)
}

// cpuTimes is the CPU (user+sys) of this process and of its child processes: the executors
// (this test binary, started by the embedded master's in-process agents) and the S3 server
// (any other child).
type cpuTimes struct{ self, executors, server time.Duration }

func (c cpuTimes) add(d cpuTimes) cpuTimes {
	return cpuTimes{c.self + d.self, c.executors + d.executors, c.server + d.server}
}

func (c cpuTimes) sub(d cpuTimes) cpuTimes {
	return cpuTimes{c.self - d.self, c.executors - d.executors, c.server - d.server}
}

// readCPU reads the CPU this process and its live children (found in
// /proc/self/task/*/children) used so far, from /proc (clock ticks of 10 ms); zero where /proc
// is not there. A child whose environment names a Flint role is an executor. An executor that
// exited during a side would take its CPU with it: the bench's executors live as long as
// their Context.
func readCPU() cpuTimes {
	var c cpuTimes
	c.self = procCPU("self")
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(b)) {
			if isExecutor(pid) {
				c.executors += procCPU(pid)
			} else {
				c.server += procCPU(pid)
			}
		}
	}
	return c
}

// isExecutor tells whether process pid's environment sets FLINT_ROLE (the agents start
// executors with it; their executable is a copy of this one in the sandbox).
func isExecutor(pid string) bool {
	env, _ := os.ReadFile("/proc/" + pid + "/environ")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.HasPrefix(kv, []byte(contract.EnvRole+"=")) && len(kv) > len(contract.EnvRole)+1 {
			return true
		}
	}
	return false
}

// procCPU is utime+stime of /proc/pid/stat.
func procCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from the 3rd (state)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

// benchRounds is FLINT_BENCH_ROUNDS (default 5): how many times each side of a comparison runs.
func benchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("FLINT_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func putObject(fs *s3fs.FS, path string, body []byte) error {
	w, err := fs.Create(context.Background(), path)
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Close()
}

// plainGets fetches every file whole, 2 goroutines taking the next file, the body discarded:
// by io.Copy into io.Discard (its 8 KiB reads) when bufSize is 0, else by reads of bufSize.
func plainGets(t *testing.T, fs *s3fs.FS, files []storage.FileInfo, bufSize int) time.Duration {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			buf := make([]byte, bufSize)
			for i := next.Add(1) - 1; i < int64(len(files)); i = next.Add(1) - 1 {
				rc, err := fs.Open(context.Background(), files[i], 0, -1)
				if err != nil {
					t.Error(err)
					return
				}
				n, err := discard(rc, buf)
				rc.Close()
				if err != nil || n != files[i].Size {
					t.Errorf("GET %s: %d bytes (%v), want %d", files[i].Path, n, err, files[i].Size)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// discard reads r to its end: by io.Copy into io.Discard when buf is empty, else into buf.
func discard(r io.Reader, buf []byte) (int64, error) {
	if len(buf) == 0 {
		return io.Copy(io.Discard, r)
	}
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

type benchRow struct {
	ID     int64   `parquet:"id"`
	User   string  `parquet:"user"`
	Amount float64 `parquet:"amount"`
	Count  int32   `parquet:"count"`
	Flag   bool    `parquet:"flag"`
	Note   string  `parquet:"note"`
}

type benchNarrow struct {
	ID     int64   `parquet:"id"`
	Amount float64 `parquet:"amount"`
}

var parquetCountJob = dataset.JobResult("formats.bench.parquetCount", func(b *dataset.Builder, paths []string) (int64, error) {
	return dataset.Count(parquetfile.Read[benchNarrow](b, parquetfile.Options{}, paths...))
})

// countingFile counts the bytes read through it.
type countingFile struct {
	*os.File
	n *atomic.Int64
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	k, err := c.File.ReadAt(p, off)
	c.n.Add(int64(k))
	return k, err
}

// readAllParquet reads every row of path into T with parquet-go's generic reader, one
// goroutine, counting the bytes read.
func readAllParquet[T any](t *testing.T, path string, read *atomic.Int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(countingFile{f, read}, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	buf := make([]T, 1024)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Parquet: 8 snappy files of 6 columns (row groups of 128k rows) on local disk, 2 of the 6
// projected: Flint's reader on local[2] beside parquet-go's generic reader in one goroutine;
// and the bytes that reader reads projecting 2 columns versus all 6.
func benchParquet(t *testing.T, mb int) {
	dir := t.TempDir()
	rowsPer := mb << 20 / 8 / 40 // about 40 bytes a row compressed
	var paths []string
	var want int64
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		rows := make([]benchRow, rowsPer)
		for j := range rows {
			id := int64(i*rowsPer + j)
			rows[j] = benchRow{ID: id, User: fmt.Sprintf("user-%d", r.IntN(100000)), Amount: r.Float64() * 1000,
				Count: int32(r.IntN(1000)), Flag: r.IntN(2) == 0, Note: fmt.Sprintf("note %x", r.Uint64())}
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		if err := parquet.WriteFile(p, rows, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(128<<10)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		want += int64(rowsPer)
	}
	var size int64
	for _, p := range paths {
		st, _ := os.Stat(p)
		size += st.Size()
	}
	fc2 := benchContext(t, "flint.files.maxPartitionBytes=16m")
	fc1 := benchContext(t, "flint.files.maxPartitionBytes=16m", "flint.master=local[1]")
	flintRun := func(fc *framework.Context) time.Duration {
		start := time.Now()
		n, err := parquetCountJob.Run(t.Context(), fc, paths)
		if err != nil || n != want {
			t.Fatalf("flint read %d rows (%v), want %d", n, err, want)
		}
		return time.Since(start)
	}
	var narrowBytes, fullBytes atomic.Int64
	singleRun := func() time.Duration {
		start := time.Now()
		narrowBytes.Store(0)
		n := want
		for _, p := range paths {
			n -= readAllParquet[benchNarrow](t, p, &narrowBytes)
		}
		if n != 0 {
			t.Fatalf("parquet-go read another number of rows")
		}
		return time.Since(start)
	}
	// Rounds rotate which of the three goes first; each figure is its median.
	var twos, ones, singles []time.Duration
	for round := range benchRounds() {
		runs := []func(){
			func() { twos = append(twos, flintRun(fc2)) },
			func() { ones = append(ones, flintRun(fc1)) },
			func() { singles = append(singles, singleRun()) },
		}
		for i := range runs {
			runs[(i+round)%len(runs)]()
		}
	}
	flint, flint1, single := median(twos), median(ones), median(singles)
	start := time.Now()
	for _, p := range paths {
		readAllParquet[benchRow](t, p, &fullBytes)
	}
	full := time.Since(start)
	mrows := func(d time.Duration) float64 { return float64(want) / d.Seconds() / 1e6 }
	t.Logf("parquet, %d rows in %.0f MiB (8 snappy files), project 2 of 6 columns, median of %d rounds: flint local[2] %v = %.2f Mrows/s; "+
		"parquet-go 1 goroutine %v = %.2f Mrows/s (%.2fx); flint local[1] %v = %.2f Mrows/s (%.2fx); "+
		"bytes read by parquet-go: 2 columns %.1f MiB, all 6 %.1f MiB (%v) [local[2] %v; local[1] %v; parquet-go %v]",
		want, float64(size)/(1<<20), len(twos), flint.Round(time.Millisecond), mrows(flint), single.Round(time.Millisecond),
		mrows(single), single.Seconds()/flint.Seconds(), flint1.Round(time.Millisecond), mrows(flint1), single.Seconds()/flint1.Seconds(),
		float64(narrowBytes.Load())/(1<<20), float64(fullBytes.Load())/(1<<20), full.Round(time.Millisecond), twos, ones, singles)
}

var gzWordcountJob = dataset.JobResult("formats.bench.gzWordcount", func(b *dataset.Builder, paths []string) (int64, error) {
	words := dataset.FlatMap(dataset.TextFile(b, paths...), func(line string, yield func(dataset.KV[string, int64])) {
		for _, w := range strings.Fields(line) {
			yield(dataset.KV[string, int64]{Key: w, Value: 1})
		}
	})
	return dataset.Count(dataset.ReduceByKey(words, func(x, y int64) int64 { return x + y }, 4))
})

// Word count over 8 .gz files (mb MiB of text uncompressed): Flint on local[2] beside
// `zcat | tr | sort | uniq -c` and a single-threaded Go program (gzip, bufio, a map).
func benchGzWordcount(t *testing.T, mb int) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 50000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", r.Uint32())
	}
	var paths []string
	for i := range 8 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.txt.gz", i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		bw := bufio.NewWriter(zw)
		for written := 0; written < mb<<20/8; {
			var line bytes.Buffer
			for range 12 {
				line.WriteString(vocab[int(r.ExpFloat64()*3000)%len(vocab)])
				line.WriteByte(' ')
			}
			line.WriteByte('\n')
			k, _ := bw.Write(line.Bytes())
			written += k
		}
		bw.Flush()
		zw.Close()
		f.Close()
		paths = append(paths, p)
	}
	fc := benchContext(t)
	start := time.Now()
	distinct, err := gzWordcountJob.Run(t.Context(), fc, paths)
	flint := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	counts := map[string]int64{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			for _, w := range strings.Fields(sc.Text()) {
				counts[w]++
			}
		}
		f.Close()
	}
	goTime := time.Since(start)
	if int64(len(counts)) != distinct {
		t.Fatalf("flint counted %d distinct words, Go %d", distinct, len(counts))
	}
	start = time.Now()
	out, err := exec.Command("bash", "-c", "zcat "+strings.Join(paths, " ")+" | tr -s ' ' '\\n' | grep -v '^$' | sort | uniq -c | wc -l").Output()
	shell := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); got != distinct {
		t.Fatalf("the shell pipeline counted %d distinct words, flint %d", got, distinct)
	}
	t.Logf("gz wordcount, %d MiB of text in 8 .gz files, %d distinct words: flint local[2] %v; Go 1 goroutine %v; zcat|tr|sort|uniq -c %v",
		mb, distinct, flint.Round(time.Millisecond), goTime.Round(time.Millisecond), shell.Round(time.Millisecond))
}
