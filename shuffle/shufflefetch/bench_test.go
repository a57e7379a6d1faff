package shufflefetch_test

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shufflefetch"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// benchBytes is FLINT_BENCH_SHUFFLE_MB (default 256) MiB.
func benchBytes() int64 {
	if v, err := strconv.Atoi(os.Getenv("FLINT_BENCH_SHUFFLE_MB")); err == nil {
		return int64(v) << 20
	}
	return 256 << 20
}

const (
	benchMaps    = 8
	benchReduces = 8
	recordSize   = 100 // 10-byte key, 90-byte value, as gensort's
)

// BenchmarkShuffle moves benchBytes of 100-byte records through a full
// sort shuffle — 8 map tasks on 2 executors (one task per executor at a
// time) write sorted, s2-compressed outputs under 64 MiB of shuffle
// memory each; 8 reduce tasks (2 at a time) fetch and merge them in key
// order — next to a loopback TCP copy and a disk write+read of the same
// bytes. Run with -benchtime 1x.
func BenchmarkShuffle(b *testing.B) {
	total := benchBytes()
	b.Run("baseline=tcp-loopback", func(b *testing.B) { benchTCP(b, total) })
	b.Run("baseline=disk-write-read", func(b *testing.B) { benchDisk(b, total) })
	for _, mode := range []string{"tls", "plain", "same-host"} {
		b.Run("shuffle="+mode, func(b *testing.B) { benchShuffle(b, total, mode) })
	}
}

// report gives MB/s of wall time and of the process's CPU time since
// cpu0: on a shared machine the second says what the code costs.
func report(b *testing.B, total int64, cpu0 time.Duration) {
	b.SetBytes(total)
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(total)*float64(b.N)/(cpuTime()-cpu0).Seconds()/1e6, "MB/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchTCP(b *testing.B, total int64) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer lis.Close()
	buf := make([]byte, 1<<20)
	cpu0 := cpuTime()
	for b.Loop() {
		done := make(chan int64)
		go func() {
			c, err := lis.Accept()
			if err != nil {
				done <- 0
				return
			}
			n, _ := io.Copy(io.Discard, c)
			c.Close()
			done <- n
		}()
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		for sent := int64(0); sent < total; sent += int64(len(buf)) {
			if _, err := c.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		c.Close()
		if n := <-done; n < total {
			b.Fatalf("received %d of %d", n, total)
		}
	}
	report(b, total, cpu0)
}

func benchDisk(b *testing.B, total int64) {
	dir := b.TempDir()
	buf := make([]byte, 1<<20)
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := os.Create(dir + "/copy")
		if err != nil {
			b.Fatal(err)
		}
		for w := int64(0); w < total; w += int64(len(buf)) {
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			b.Fatal(err)
		}
		if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil || n < total {
			b.Fatalf("re-read %d: %v", n, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	report(b, total, cpu0)
}

type benchExec struct {
	store *shuffle.Store
	mem   *shuffle.Memory
	loc   mapoutput.Location
	srv   *shuffleserver.Server
}

func benchShuffle(b *testing.B, total int64, mode string) {
	cpu0 := cpuTime()
	for b.Loop() {
		execs := make([]*benchExec, 2)
		for i := range execs {
			s, err := shuffle.OpenStore(b.TempDir() + "/store")
			if err != nil {
				b.Fatal(err)
			}
			srv, err := shuffleserver.Start(shuffleserver.Config{Store: s, AppID: app, Token: token, TLS: mode == "tls", Log: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			execs[i] = &benchExec{store: s, mem: shuffle.NewMemory(64 << 20), srv: srv,
				loc: mapoutput.Location{ExecutorID: "e" + strconv.Itoa(i), Host: "host-" + strconv.Itoa(i), Address: srv.Address().String()}}
		}
		sizes := make([][]uint64, benchMaps)
		var wg sync.WaitGroup
		for i, e := range execs { // one map task at a time per executor
			wg.Go(func() {
				for m := i; m < benchMaps; m += len(execs) {
					sizes[m] = mapTask(b, e, m, total/benchMaps)
				}
			})
		}
		wg.Wait()
		var got [2]int64
		for i := range 2 { // two reduce tasks at a time
			wg.Go(func() {
				host := "reducer-host"
				if mode == "same-host" {
					host = execs[i].loc.Host
				}
				c := shuffleserver.NewClient(app, token, time.Minute)
				defer c.Close()
				for r := i; r < benchReduces; r += 2 {
					got[i] += reduceTask(b, execs, sizes, r, shufflefetch.Config{Client: c, Host: host, Memory: shuffle.NewMemory(64 << 20).Task(),
						SpillDir: b.TempDir(), Rand: rand.New(rand.NewPCG(uint64(r), 0))})
				}
			})
		}
		wg.Wait()
		if got[0]+got[1] != total/benchMaps/recordSize*benchMaps*recordSize {
			b.Fatalf("reduced %d bytes of %d", got[0]+got[1], total)
		}
		for _, e := range execs {
			e.srv.Close()
			e.store.Close()
		}
	}
	report(b, total, cpu0)
}

func mapTask(b *testing.B, e *benchExec, m int, bytes int64) []uint64 {
	w, err := shuffle.NewWriter(shuffle.Config{Store: e.store, ShuffleID: 1, MapIndex: m, Partitions: benchReduces, Order: shuffle.ByteOrder,
		Compression: shuffleblock.S2, Memory: e.mem.Task()})
	if err != nil {
		b.Error(err)
		return nil
	}
	key, val := make([]byte, 10), make([]byte, 90)
	x := uint64(m)*0x9E3779B97F4A7C15 + 1
	for range bytes / recordSize {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.BigEndian.PutUint64(key, x)
		binary.BigEndian.PutUint64(val, x*31) // value bytes vary like gensort's payload
		if err := w.Add(int(x>>61)%benchReduces, key, val); err != nil {
			b.Error(err)
			return nil
		}
	}
	res, err := w.Commit()
	if err != nil {
		b.Error(err)
	}
	return res.Sizes
}

func reduceTask(b *testing.B, execs []*benchExec, sizes [][]uint64, r int, cfg shufflefetch.Config) int64 {
	var groups []mapoutput.FetchGroup
	for i, e := range execs {
		g := mapoutput.FetchGroup{Location: e.loc}
		for m := i; m < benchMaps; m += len(execs) {
			g.Blocks = append(g.Blocks, mapoutput.Block{MapIndex: m, ReduceIndex: r, Size: sizes[m][r]})
		}
		groups = append(groups, g)
	}
	rd, err := shufflefetch.Read(context.Background(), cfg, shufflefetch.Request{ShuffleID: 1, Groups: groups}, shuffle.ByteOrder, nil)
	if err != nil {
		b.Error(err)
		return 0
	}
	defer rd.Close()
	var n int64
	var prev [10]byte
	for {
		k, v, err := rd.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Error(err)
			return n
		}
		if string(k) < string(prev[:]) {
			b.Errorf("reduce %d out of order", r)
			return n
		}
		copy(prev[:], k)
		n += int64(len(k) + len(v))
	}
}
