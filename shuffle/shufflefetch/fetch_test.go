package shufflefetch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shufflefetch"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const app = "app-fetch"

var token = shuffleserver.Token("secret", app)

var (
	strs = recordcodec.For[string]()
	ints = recordcodec.For[int64]()
	sum  = shuffle.Aggregator[int64, int64]{
		CreateCombiner: func(v int64) int64 { return v },
		MergeValue:     func(c, v int64) int64 { return c + v },
		MergeCombiners: func(a, b int64) int64 { return a + b },
	}
)

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// executor is a store and, unless local, its shuffle server, on host.
type executor struct {
	id, host string
	store    *shuffle.Store
	addr     shuffleserver.Address
}

func newExecutor(t *testing.T, id, host string, handler func(http.Handler) http.Handler) *executor {
	t.Helper()
	s, err := shuffle.OpenStore(t.TempDir() + "/" + id)
	if err != nil {
		t.Fatal(err)
	}
	e := &executor{id: id, host: host, store: s}
	if handler == nil {
		srv, err := shuffleserver.Start(shuffleserver.Config{Store: s, AppID: app, Token: token, TLS: true, Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		e.addr = srv.Address()
		return e
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: handler(shuffleserver.Handler(s, app, token, quiet()))}
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(lis) }()
	t.Cleanup(func() { hs.Close(); <-done })
	e.addr = shuffleserver.Address{HostPort: lis.Addr().String(), Dir: s.Root()}
	return e
}

func (e *executor) location() mapoutput.Location {
	return mapoutput.Location{ExecutorID: e.id, Host: e.host, Address: e.addr.String()}
}

// words are map m's words: "w<i>" for i drawn from a Zipf-ish spread.
func words(m, n int) []string {
	r := rand.New(rand.NewPCG(uint64(m), 7))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%05d", r.IntN(1+r.IntN(20000)))
	}
	return out
}

// mapOutputs writes maps word counts spread over the executors and
// returns, per reduce partition, the fetch groups, and the expected
// counts per word.
func mapOutputs(t *testing.T, execs []*executor, maps, reduces, perMap int) (func(r int) []mapoutput.FetchGroup, map[string]int64) {
	t.Helper()
	want := map[string]int64{}
	type out struct {
		e     *executor
		sizes []uint64
	}
	var outs []out
	for m := range maps {
		e := execs[m%len(execs)]
		w, err := shuffle.NewCombiningWriter(shuffle.Config{Store: e.store, ShuffleID: 4, MapIndex: m, Partitions: reduces, Memory: shuffle.NewMemory(8 << 20).Task()}, strs, ints, sum)
		if err != nil {
			t.Fatal(err)
		}
		for _, wd := range words(m, perMap) {
			want[wd]++
			if err := w.Add(partition(wd, reduces), wd, 1); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out{e, res.Sizes})
	}
	return func(r int) []mapoutput.FetchGroup {
		byExec := map[*executor]*mapoutput.FetchGroup{}
		var groups []*mapoutput.FetchGroup
		for m, o := range outs {
			if o.sizes[r] == 0 {
				continue
			}
			g := byExec[o.e]
			if g == nil {
				g = &mapoutput.FetchGroup{Location: o.e.location()}
				byExec[o.e] = g
				groups = append(groups, g)
			}
			g.Blocks = append(g.Blocks, mapoutput.Block{MapIndex: m, ReduceIndex: r, Size: o.sizes[r]})
			g.Bytes += o.sizes[r]
		}
		res := make([]mapoutput.FetchGroup, len(groups))
		for i, g := range groups {
			res[i] = *g
		}
		return res
	}, want
}

func partition(w string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * 16777619
	}
	return int(h % uint32(n))
}

func config(t *testing.T, host string, memory int64) shufflefetch.Config {
	c := shuffleserver.NewClient(app, token, 5*time.Second)
	t.Cleanup(c.Close)
	return shufflefetch.Config{Client: c, Host: host, Memory: shuffle.NewMemory(memory).Task(), SpillDir: t.TempDir(),
		MaxRetries: 2, RetryWait: time.Millisecond, Rand: rand.New(rand.NewPCG(1, 1))}
}

// reduceAll reads every reduce partition and checks the counts.
func reduceAll(t *testing.T, cfg shufflefetch.Config, groups func(int) []mapoutput.FetchGroup, reduces int, want map[string]int64) shufflefetch.ReadMetrics {
	t.Helper()
	got := map[string]int64{}
	var total shufflefetch.ReadMetrics
	for r := range reduces {
		rd, err := shufflefetch.Read(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: groups(r)}, shuffle.ByteOrder, shuffle.CombineBytes(ints, sum.MergeCombiners))
		if err != nil {
			t.Fatal(err)
		}
		prev := ""
		for kv, err := range shuffle.Records(rd, strs, ints) {
			if err != nil {
				t.Fatal(err)
			}
			if kv.Key <= prev || partition(kv.Key, reduces) != r {
				t.Fatalf("reduce %d: %q after %q", r, kv.Key, prev)
			}
			prev = kv.Key
			got[kv.Key] = kv.Value
		}
		m := rd.Metrics()
		total.LocalBlocks += m.LocalBlocks
		total.RemoteBlocks += m.RemoteBlocks
		total.RemoteBytesToDisk += m.RemoteBytesToDisk
		total.MergePasses += m.MergePasses
		total.Retries += m.Retries
		rd.Close()
	}
	if len(got) != len(want) {
		t.Fatalf("%d words, want %d", len(got), len(want))
	}
	for w, n := range want {
		if got[w] != n {
			t.Fatalf("count of %s = %d, want %d", w, got[w], n)
		}
	}
	return total
}

func TestReduceReadsLocalAndRemoteBlocksExactly(t *testing.T) {
	execs := []*executor{newExecutor(t, "e1", "host-a", nil), newExecutor(t, "e2", "host-b", nil)}
	groups, want := mapOutputs(t, execs, 6, 3, 3000)
	cfg := config(t, "host-a", 64<<20)
	m := reduceAll(t, cfg, groups, 3, want)
	if m.LocalBlocks != 9 || m.RemoteBlocks != 9 {
		t.Fatalf("local %d remote %d blocks, want 9 and 9 (3 maps per host, 3 reducers)", m.LocalBlocks, m.RemoteBlocks)
	}
	if m.RemoteBytesToDisk != 0 || m.MergePasses != 0 || m.Retries != 0 {
		t.Fatalf("with ample memory: %+v", m)
	}
}

func TestLocalModeReadsFilesWithoutAClient(t *testing.T) {
	e := newExecutor(t, "driver", "localhost", nil)
	groups, want := mapOutputs(t, []*executor{e}, 3, 2, 1000)
	cfg := config(t, "localhost", 64<<20)
	cfg.Client = nil
	if m := reduceAll(t, cfg, groups, 2, want); m.RemoteBlocks != 0 {
		t.Fatalf("local mode fetched %d blocks remotely", m.RemoteBlocks)
	}
}

func TestPartitionFourTimesTheMemoryCompletesSpilling(t *testing.T) {
	execs := []*executor{newExecutor(t, "e1", "host-a", nil), newExecutor(t, "e2", "host-b", nil)}
	groups, want := mapOutputs(t, execs, 24, 1, 6000)
	var total uint64
	for _, g := range groups(0) {
		total += g.Bytes
	}
	cfg := config(t, "host-c", int64(total/4))
	cfg.FanIn = 4
	m := reduceAll(t, cfg, groups, 1, want)
	if m.RemoteBytesToDisk < int64(total/2) || m.MergePasses == 0 {
		t.Fatalf("a partition of %d bytes under %d of memory: %+v", total, total/4, m)
	}
}

// flaky wraps a handler: the first n responses have a byte flipped, or
// the first n requests fail with 503.
func flaky(n int32, mode string, seen *atomic.Int32) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen.Add(1) > n {
				h.ServeHTTP(w, r)
				return
			}
			if mode == "unavailable" {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			rec := &recorder{header: http.Header{}}
			h.ServeHTTP(rec, r)
			rec.body.Bytes()[rec.body.Len()/2] ^= 0x40
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			w.Write(rec.body.Bytes())
		})
	}
}

type recorder struct {
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

func oneBlock(t *testing.T, e *executor) []mapoutput.FetchGroup {
	t.Helper()
	groups, _ := mapOutputs(t, []*executor{e}, 1, 1, 100)
	return groups(0)
}

func TestCorruptBlockIsRefetchedOnceThenReported(t *testing.T) {
	var seen atomic.Int32
	e := newExecutor(t, "e1", "host-a", flaky(1, "flip", &seen))
	cfg := config(t, "host-b", 1<<20)
	rd, err := shufflefetch.Read(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: oneBlock(t, e)}, shuffle.ByteOrder, nil)
	if err != nil {
		t.Fatalf("a block corrupt once: %v", err)
	}
	if m := rd.Metrics(); m.Retries != 1 || seen.Load() != 2 {
		t.Fatalf("retries %d, requests %d", m.Retries, seen.Load())
	}
	rd.Close()

	var seen2 atomic.Int32
	e2 := newExecutor(t, "e2", "host-a", flaky(100, "flip", &seen2))
	_, err = shufflefetch.Read(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: oneBlock(t, e2)}, shuffle.ByteOrder, nil)
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 4 || ff.MapIndex != 0 || ff.ReduceIndex != 0 || ff.ExecutorID != "e2" || ff.Address != e2.addr.String() ||
		!strings.Contains(ff.Message, "checksum") || seen2.Load() != 2 {
		t.Fatalf("a block corrupt every time: %v (%d requests)", err, seen2.Load())
	}
}

func TestFlippedByteOnDiskIsAFetchFailure(t *testing.T) {
	e := newExecutor(t, "e1", "host-a", nil)
	groups := oneBlock(t, e)
	path := e.store.DataPath(4, 0)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"host-b", "host-a"} { // fetched, then read on the same host
		rd, err := shufflefetch.Read(context.Background(), config(t, host, 1<<20), shufflefetch.Request{ShuffleID: 4, Groups: groups}, shuffle.ByteOrder, nil)
		if err == nil {
			_, _, err = rd.Next()
			for err == nil {
				_, _, err = rd.Next()
			}
			rd.Close()
		}
		var ff *mapoutput.FetchFailure
		if !errors.As(err, &ff) || ff.MapIndex != 0 || !strings.Contains(ff.Message, "checksum") {
			t.Fatalf("reader on %s: %v", host, err)
		}
	}
}

func TestDeletedAndTruncatedFilesAreFetchFailures(t *testing.T) {
	e := newExecutor(t, "e1", "host-a", nil)
	groups := oneBlock(t, e)
	if err := os.Truncate(e.store.DataPath(4, 0), 5); err != nil {
		t.Fatal(err)
	}
	cfg := config(t, "host-b", 1<<20)
	_, err := shufflefetch.Fetch(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: groups})
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || !strings.Contains(ff.Message, "after 3 attempts") || !strings.Contains(ff.Message, "its index says") {
		t.Fatalf("truncated (retried, then reported): %v", err)
	}
	os.Remove(e.store.DataPath(4, 0))
	_, err = shufflefetch.Fetch(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: groups})
	if !errors.As(err, &ff) || !strings.Contains(ff.Message, "after 1 attempts") || !strings.Contains(ff.Message, "404") {
		t.Fatalf("deleted (not retried): %v", err)
	}
	local := config(t, "host-a", 1<<20)
	if _, err = shufflefetch.Fetch(context.Background(), local, shufflefetch.Request{ShuffleID: 4, Groups: groups}); !errors.As(err, &ff) || !strings.Contains(ff.Message, "no such map output") {
		t.Fatalf("deleted, same host: %v", err)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	var seen atomic.Int32
	e := newExecutor(t, "e1", "host-a", flaky(2, "unavailable", &seen))
	cfg := config(t, "host-b", 1<<20)
	var waits []time.Duration
	var mu sync.Mutex
	cfg.RetryWait = 5 * time.Second
	cfg.After = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	f, err := shufflefetch.Fetch(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: oneBlock(t, e)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metrics.Retries != 2 || fmt.Sprint(waits) != "[5s 5s]" {
		t.Fatalf("retries %d, waits %v", f.Metrics.Retries, waits)
	}
}

func TestUnresponsivePeerIsAFetchFailure(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	defer func() {
		lis.Close()
		for c := range conns {
			c.Close()
		}
	}()
	c := shuffleserver.NewClient(app, token, 100*time.Millisecond)
	defer c.Close()
	cfg := shufflefetch.Config{Client: c, Host: "here", MaxRetries: 1, RetryWait: time.Millisecond, SpillDir: t.TempDir()}
	loc := mapoutput.Location{ExecutorID: "silent", Host: "there", Address: shuffleserver.Address{HostPort: lis.Addr().String()}.String()}
	_, err = shufflefetch.Fetch(context.Background(), cfg, shufflefetch.Request{ShuffleID: 2, Groups: []mapoutput.FetchGroup{{Location: loc, Blocks: []mapoutput.Block{{MapIndex: 3, ReduceIndex: 1, Size: 10}}}}})
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 2 || ff.MapIndex != 3 || ff.ReduceIndex != 1 || ff.ExecutorID != "silent" || !strings.Contains(ff.Message, "no progress") {
		t.Fatalf("peer that never answers: %v", err)
	}
}

func TestInFlightLimits(t *testing.T) {
	// The server holds requests until two are in flight: with a cap of
	// two requests the fetch completes, and never exceeds two.
	var cur, peak atomic.Int32
	gate := make(chan struct{})
	var once sync.Once
	e := newExecutor(t, "e1", "host-a", func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := cur.Add(1)
			defer cur.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if n >= 2 {
				once.Do(func() { close(gate) })
			}
			<-gate
			h.ServeHTTP(w, r)
		})
	})
	groups, want := mapOutputs(t, []*executor{e}, 10, 1, 200)
	cfg := config(t, "host-b", 64<<20)
	cfg.MaxReqsInFlight = 2
	reduceAll(t, cfg, groups, 1, want)
	if peak.Load() != 2 {
		t.Fatalf("peak requests in flight %d, want 2", peak.Load())
	}
	// A byte budget below one block still fetches, one block at a time.
	peak.Store(0)
	cfg.MaxReqsInFlight, cfg.MaxBytesInFlight = 10, 1
	reduceAll(t, cfg, groups, 1, want)
	if peak.Load() != 1 {
		t.Fatalf("peak requests under a 1-byte budget %d, want 1", peak.Load())
	}
}

func TestForeignCredentialsAreRefusedAsFetchFailure(t *testing.T) {
	e := newExecutor(t, "e1", "host-a", nil)
	c := shuffleserver.NewClient(app, shuffleserver.Token("another app's secret", "app-2"), time.Minute)
	defer c.Close()
	cfg := shufflefetch.Config{Client: c, Host: "host-b", MaxRetries: 3, SpillDir: t.TempDir()}
	_, err := shufflefetch.Fetch(context.Background(), cfg, shufflefetch.Request{ShuffleID: 4, Groups: oneBlock(t, e)})
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || !strings.Contains(ff.Message, "401") || !strings.Contains(ff.Message, "after 1 attempts") {
		t.Fatalf("another application's token: %v", err)
	}
}
