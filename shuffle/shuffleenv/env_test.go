package shuffleenv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const app = "app-env"

var (
	token = shuffleserver.Token("the secret", app)
	strs  = recordcodec.For[string]()
	ints  = recordcodec.For[int64]()
	sum   = shuffle.Aggregator[int64, int64]{
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

func start(t testing.TB, id, host string, dir string, serve bool) *shuffleenv.Env {
	t.Helper()
	e, err := shuffleenv.Start(shuffleenv.Settings{AppID: app, ExecutorID: id, Host: host, Token: token, TLS: true, LocalDir: dir,
		Memory: 4 << 20, Compression: shuffleblock.S2, MaxRetries: 1, RetryWait: time.Millisecond, Timeout: 10 * time.Second}, serve, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func partition(w string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * 16777619
	}
	return int(h % uint32(n))
}

// wordCount runs 4 map tasks over execs (writing through the tracker's
// contract) and returns the tracker and the expected counts.
func wordCount(t *testing.T, execs []*shuffleenv.Env, reduces int) (*mapoutput.Tracker, map[string]int64) {
	t.Helper()
	tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
	if err := tr.RegisterShuffle(7, 4, reduces); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for m := range 4 {
		e := execs[m%len(execs)]
		w, err := shuffleenv.CombiningWriter(e, 7, m, 0, reduces, strs, ints, sum)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5000 {
			word := fmt.Sprintf("w%d", (i*(m+3))%1700)
			want[word]++
			if err := w.Add(partition(word, reduces), word, 1); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.RegisterMapOutput(e.Status(7, m, uint64(100+m), res)); err != nil {
			t.Fatal(err)
		}
	}
	return tr, want
}

func reduce(t *testing.T, e *shuffleenv.Env, tr *mapoutput.Tracker, r int, got map[string]int64) shufflefetchMetrics {
	t.Helper()
	snap, err := tr.Snapshot(7)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := e.Read(context.Background(), snap, r, shuffle.ByteOrder, shuffle.CombineBytes(ints, sum.MergeCombiners))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for kv, err := range shuffle.Records(rd, strs, ints) {
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[kv.Key]; dup {
			t.Fatalf("%q read twice", kv.Key)
		}
		got[kv.Key] = kv.Value
	}
	m := rd.Metrics()
	return shufflefetchMetrics{local: m.LocalBlocks, remote: m.RemoteBlocks}
}

type shufflefetchMetrics struct{ local, remote int64 }

func TestWordCountThroughTwoExecutorsAndTheTracker(t *testing.T) {
	dir := t.TempDir()
	a, b := start(t, "exec-a", "127.0.0.1", dir, true), start(t, "exec-b", "localhost", dir, true)
	tr, want := wordCount(t, []*shuffleenv.Env{a, b}, 3)
	got := map[string]int64{}
	var local, remote int64
	for r := range 3 {
		m := reduce(t, []*shuffleenv.Env{a, b}[r%2], tr, r, got)
		local, remote = local+m.local, remote+m.remote
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts differ: %d words, want %d", len(got), len(want))
	}
	if local == 0 || remote == 0 {
		t.Fatalf("local %d, remote %d blocks: want both paths used", local, remote)
	}
	if a.Memory().Used() != 0 || b.Memory().Used() != 0 {
		t.Fatalf("shuffle memory held after the tasks: %d, %d", a.Memory().Used(), b.Memory().Used())
	}
	if !a.HoldsOutputs() || !b.HoldsOutputs() {
		t.Fatal("executors with committed outputs say they hold none")
	}
	// The driver releases the shuffle: the files go, and so does the
	// reason to stay alive.
	if err := a.Release(7); err != nil {
		t.Fatal(err)
	}
	if a.HoldsOutputs() {
		t.Fatal("outputs held after Release")
	}
	for _, e := range []*shuffleenv.Env{a, b} {
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the local dir after Close: %v", left)
	}
}

func TestLostExecutorIsAFetchFailureNamingIt(t *testing.T) {
	dir := t.TempDir()
	a, b := start(t, "exec-a", "127.0.0.1", dir, true), start(t, "exec-b", "localhost", dir, true)
	defer a.Close()
	tr, _ := wordCount(t, []*shuffleenv.Env{a, b}, 2)
	snap, err := tr.Snapshot(7)
	if err != nil {
		t.Fatal(err)
	}
	b.Close() // killed: its server and its files are gone
	_, err = a.Read(context.Background(), snap, 0, shuffle.ByteOrder, nil)
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ExecutorID != "exec-b" || ff.ShuffleID != 7 || ff.MapIndex%2 != 1 || ff.ReduceIndex != 0 {
		t.Fatalf("reading from a killed executor: %v", err)
	}
	if a.Memory().Used() != 0 {
		t.Fatalf("memory held after a failed read: %d", a.Memory().Used())
	}
	if left, _ := filepath.Glob(filepath.Join(a.Dir(), "reduce-*")); len(left) != 0 {
		t.Fatalf("reduce spill dirs left: %v", left)
	}
}

func TestLocalModeReadsItsOwnStore(t *testing.T) {
	e := start(t, "driver", "localhost", t.TempDir(), false)
	defer e.Close()
	if !strings.HasPrefix(e.Location().Address, "file://") {
		t.Fatalf("unserved store's address %q", e.Location().Address)
	}
	tr, want := wordCount(t, []*shuffleenv.Env{e}, 2)
	got := map[string]int64{}
	for r := range 2 {
		if m := reduce(t, e, tr, r, got); m.remote != 0 {
			t.Fatalf("local mode fetched %d blocks remotely", m.remote)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("local mode counts differ")
	}
}

func TestSettingsFromConfig(t *testing.T) {
	c := config.New()
	for k, v := range map[string]string{"flint.executor.memory": "2g", "flint.shuffle.compress.codec": "zstd", "flint.reducer.maxSizeInFlight": "8m"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := shuffleenv.SettingsFromConfig(c, "app", "e1", "h", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory != (2<<30)/5 || s.Compression != shuffleblock.Zstd || s.MaxBytesInFlight != 8<<20 ||
		s.MaxRetries != 3 || s.RetryWait != 5*time.Second || s.Timeout != 120*time.Second || !s.TLS || s.MaxReqsInFlight != 64 {
		t.Fatalf("settings from defaults: %+v", s)
	}
	if err := c.Set("flint.shuffle.memory", "300m"); err != nil {
		t.Fatal(err)
	}
	if s, _ = shuffleenv.SettingsFromConfig(c, "app", "e1", "h", "tok"); s.Memory != 300<<20 {
		t.Fatalf("explicit flint.shuffle.memory: %d", s.Memory)
	}
}

func TestStartRefusesMissingPieces(t *testing.T) {
	if _, err := shuffleenv.Start(shuffleenv.Settings{AppID: app, Memory: 1 << 20, LocalDir: t.TempDir()}, true, quiet()); err == nil {
		t.Fatal("served without a token")
	}
	if _, err := shuffleenv.Start(shuffleenv.Settings{AppID: app, LocalDir: t.TempDir()}, false, quiet()); err == nil {
		t.Fatal("started without memory")
	}
}

func TestContextCarriesTheEnv(t *testing.T) {
	e := start(t, "e", "localhost", t.TempDir(), false)
	defer e.Close()
	if _, ok := shuffleenv.FromContext(context.Background()); ok {
		t.Fatal("an env in a bare context")
	}
	if got, ok := shuffleenv.FromContext(shuffleenv.NewContext(context.Background(), e)); !ok || got != e {
		t.Fatal("NewContext's env not found")
	}
}

// Every shuffle setting survives the trip from the executor's view to the
// wire and back, through the encoded ExecutorSettings an executor
// receives; every wire field is set, so a field added to the message but
// not to the conversion fails here.
func TestWireRoundTrip(t *testing.T) {
	in := shuffleenv.Settings{AppID: "a", Token: "t", TLS: true, LocalDir: "/d", Memory: 123, Compression: shuffleblock.Zstd,
		MaxBytesInFlight: 456, MaxReqsInFlight: 7, MaxRetries: 2, RetryWait: 3 * time.Second, Timeout: time.Minute, ServiceDir: "/srv/shuffle"}
	w := in.Wire()
	v := reflect.ValueOf(*w)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && !strings.HasPrefix(f.Name, "XXX_") && v.Field(i).IsZero() {
			t.Errorf("wire field %s is not set by Settings.Wire", f.Name)
		}
	}
	data, err := flintpb.EncodeSettings(&flintpb.ExecutorSettings{TaskCpus: 1, Shuffle: w})
	if err != nil {
		t.Fatal(err)
	}
	m, err := flintpb.DecodeSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	out, ok, err := shuffleenv.SettingsFromWire(m.Shuffle, "exec-9", "host-9")
	in.ExecutorID, in.Host = "exec-9", "host-9"
	if err != nil || !ok || out != in {
		t.Fatalf("round trip: %+v, %v, %v; want %+v", out, ok, err, in)
	}
	for _, c := range []shuffleblock.Compression{shuffleblock.S2, shuffleblock.None} {
		in.Compression = c
		if out, _, err := shuffleenv.SettingsFromWire(in.Wire(), "exec-9", "host-9"); err != nil || out.Compression != c {
			t.Errorf("codec %s came back as %s, %v", c, out.Compression, err)
		}
	}
	for _, none := range []*flintpb.ShuffleSettings{nil, {}, {Token: "t", MemoryBytes: 1}} {
		if _, ok, err := shuffleenv.SettingsFromWire(none, "e", "h"); ok || err != nil {
			t.Fatalf("no shuffle (%v): ok %v, %v", none, ok, err)
		}
	}
	bad := in.Wire()
	bad.MemoryBytes, bad.Codec, bad.Token = 0, flintpb.ShuffleCodec_SHUFFLE_CODEC_UNSPECIFIED, ""
	_, ok, err = shuffleenv.SettingsFromWire(bad, "e", "h")
	if !ok || err == nil || !strings.Contains(err.Error(), "shuffle memory 0") || !strings.Contains(err.Error(), "SHUFFLE_CODEC_UNSPECIFIED") || !strings.Contains(err.Error(), "no token") {
		t.Fatalf("bad settings: %v", err)
	}
}

func TestDriverSettingsGiveEveryExecutorTheSameApplication(t *testing.T) {
	c := config.New()
	a, err := shuffleconf.DriverSettings(c, "secret-a")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := shuffleconf.DriverSettings(c, "secret-a")
	other, _ := shuffleconf.DriverSettings(c, "secret-b")
	if !reflect.DeepEqual(a, again) || a.AppId == other.AppId || a.Token == other.Token {
		t.Fatalf("settings are not a function of the secret: %v / %v", a.AppId, other.AppId)
	}
	if strings.Contains(a.String(), "secret-a") {
		t.Fatalf("the secret itself is in the settings: %v", a)
	}
	s, ok, err := shuffleenv.SettingsFromWire(a, "e1", "h1")
	if err != nil || !ok || s.Token != shuffleserver.Token("secret-a", s.AppID) || s.Memory != (1<<30)/5 {
		t.Fatalf("executor side: %+v %v %v", s, ok, err)
	}
	if _, err := shuffleconf.DriverSettings(c, ""); err == nil {
		t.Fatal("no secret accepted")
	}
	if ip := localip.TowardsOrEmpty("127.0.0.1"); ip != "127.0.0.1" {
		t.Fatalf("localip.TowardsOrEmpty(127.0.0.1) = %q", ip)
	}
}

func TestNamespacesKeepRunsApartAndAreServed(t *testing.T) {
	dir := t.TempDir()
	a, b := start(t, "exec-a", "127.0.0.1", dir, true), start(t, "exec-b", "localhost", dir, true)
	defer a.Close()
	defer b.Close()
	// Two runs write shuffle 0, map 0 on b: each run reads its own.
	for _, run := range []string{"run-1", "run-2"} {
		ns, err := b.Namespace(run)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := b.Namespace(run); again != ns {
			t.Fatal("a namespace opened twice")
		}
		cfg := b.WriterConfig(0, 0, 0, 1, shuffle.ByteOrder)
		cfg.Store = ns.Store
		w, err := shuffle.NewWriter(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.Add(0, []byte(run), nil)
		res, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
		tr.RegisterShuffle(0, 1, 1)
		tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 0, MapIndex: 0, Location: ns.Location(), Sizes: res.Sizes})
		snap, _ := tr.Snapshot(0)
		rd, err := a.Read(context.Background(), snap, 0, shuffle.ByteOrder, nil) // remote: another host
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := rd.Next()
		if err != nil || string(k) != run || rd.Metrics().RemoteBlocks != 1 {
			t.Fatalf("%s read %q (%v), remote blocks %d", run, k, err, rd.Metrics().RemoteBlocks)
		}
		rd.Close()
	}
	local := start(t, "driver", "localhost", dir, false)
	defer local.Close()
	if _, err := local.Namespace("run-1"); err == nil {
		t.Fatal("a namespace on an unserved executor")
	}
}

// A released namespace's files are deleted and no longer served; other
// namespaces stay. An executor holds outputs until every one is released.
func TestReleasedNamespacesAreDeletedAndNoLongerServed(t *testing.T) {
	dir := t.TempDir()
	a, b := start(t, "exec-a", "127.0.0.1", dir, true), start(t, "exec-b", "localhost", dir, true)
	defer a.Close()
	defer b.Close()
	snaps := map[string]*mapoutput.Snapshot{}
	roots := map[string]string{}
	for _, run := range []string{"run-1", "run-2"} {
		ns, err := b.Namespace(run)
		if err != nil {
			t.Fatal(err)
		}
		roots[run] = ns.Store.Root()
		tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
		for shuffleID := range 2 {
			cfg := b.WriterConfig(shuffleID, 0, 0, 1, shuffle.ByteOrder)
			cfg.Store = ns.Store
			w, err := shuffle.NewWriter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.Add(0, []byte(run), nil)
			res, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			tr.RegisterShuffle(shuffleID, 1, 1)
			tr.RegisterMapOutput(mapoutput.Status{ShuffleID: shuffleID, MapIndex: 0, Location: ns.Location(), Sizes: res.Sizes})
		}
		snaps[run], _ = tr.Snapshot(0)
	}
	read := func(run string) error {
		rd, err := a.Read(context.Background(), snaps[run], 0, shuffle.ByteOrder, nil)
		if err != nil {
			return err
		}
		defer rd.Close()
		k, _, err := rd.Next()
		if err == nil && string(k) != run {
			t.Fatalf("%s read %q", run, k)
		}
		return err
	}
	if !b.HoldsOutputs() {
		t.Fatal("outputs in namespaces, but HoldsOutputs is false")
	}
	// one shuffle of run-2, then all of run-1
	if err := b.ReleaseShuffle("run-2", 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(roots["run-2"], "shuffle_1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("run-2's released shuffle 1: %v", err)
	}
	if err := b.ReleaseShuffle("run-1", 0, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(roots["run-1"]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("run-1's namespace directory after its release: %v", err)
	}
	var ff *mapoutput.FetchFailure
	if err := read("run-1"); !errors.As(err, &ff) {
		t.Fatalf("reading a released namespace: %v, want a fetch failure", err)
	}
	if err := read("run-2"); err != nil {
		t.Fatalf("run-2's shuffle 0 after run-1's release: %v", err)
	}
	if !b.HoldsOutputs() {
		t.Fatal("run-2's shuffle 0 is still held")
	}
	if err := b.ReleaseShuffle("run-2", 0, true); err != nil {
		t.Fatal(err)
	}
	if b.HoldsOutputs() {
		t.Fatal("every namespace released, but HoldsOutputs is true")
	}
	// releasing what is gone (or was never there) is not an error
	if err := b.ReleaseShuffle("run-1", 0, true); err != nil {
		t.Fatal(err)
	}
}

// Executors in containers (FLINT_SHUFFLE_PORT, FLINT_SHUFFLE_HOST_PORT)
// listen on the mapped port and advertise the agent's host and port; their
// stores are in their own file systems, so a reducer on the same host
// fetches every block through the server, and the counts are right.
func TestContainerExecutorsServeOnTheirMappedPorts(t *testing.T) {
	var execs []*shuffleenv.Env
	for _, id := range []string{"exec-a", "exec-b"} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
		lis.Close()
		env := map[string]string{contract.EnvShufflePort: port, contract.EnvShuffleHostPort: port, contract.EnvBindAddress: "127.0.0.1"}
		set := shuffleenv.Settings{AppID: app, ExecutorID: id, Host: "127.0.0.1", Token: token, TLS: true, LocalDir: t.TempDir(),
			Memory: 4 << 20, Compression: shuffleblock.S2, MaxRetries: 1, RetryWait: time.Millisecond, Timeout: 10 * time.Second}
		if err := set.FromContainer(func(k string) string { return env[k] }); err != nil {
			t.Fatal(err)
		}
		e, err := shuffleenv.Start(set, true, quiet())
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		addr, err := shuffleserver.ParseAddress(e.Location().Address)
		if err != nil {
			t.Fatal(err)
		}
		if addr.HostPort != "127.0.0.1:"+port || addr.Dir != "" {
			t.Fatalf("%s advertises %+v, want 127.0.0.1:%s and no directory", id, addr, port)
		}
		execs = append(execs, e)
	}
	tr, want := wordCount(t, execs, 3)
	got := map[string]int64{}
	var local, remote int64
	for r := range 3 {
		m := reduce(t, execs[r%2], tr, r, got)
		local, remote = local+m.local, remote+m.remote
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts differ: %d words, want %d", len(got), len(want))
	}
	if local != 0 || remote == 0 {
		t.Fatalf("local %d, remote %d blocks: want every block through the servers", local, remote)
	}
	bad := map[string]string{contract.EnvShufflePort: "x"}
	var s shuffleenv.Settings
	if err := s.FromContainer(func(k string) string { return bad[k] }); err == nil || !strings.Contains(err.Error(), contract.EnvShufflePort) {
		t.Fatalf("a bad port: %v", err)
	}
}
