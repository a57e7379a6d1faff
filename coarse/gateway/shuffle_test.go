package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// mapOut is what the test's map task returns: its map status.
type mapOut struct {
	ExecutorID, Host, Address string
	Sizes                     []uint64
}

type reduceIn struct {
	Snapshot []byte
	Reduce   int
}

var sumAgg = shuffle.Aggregator[int64, int64]{
	CreateCombiner: func(v int64) int64 { return v },
	MergeValue:     func(c, v int64) int64 { return c + v },
	MergeCombiners: func(a, b int64) int64 { return a + b },
}

func wordOf(m, i int) string { return fmt.Sprintf("w%d", (i*(m+2))%300) }

// shuffleRegistry adds a word-count map task and its reduce task, which
// find the executor's shuffle in their context.
func shuffleRegistry() *task.Registry {
	r := testRegistry(nil)
	strs, ints := recordcodec.For[string](), recordcodec.For[int64]()
	task.MustRegister(r, "wc.map", func(ctx context.Context, m int) (mapOut, error) {
		env, ok := shuffleenv.FromContext(ctx)
		if !ok {
			return mapOut{}, errors.New("no shuffle in the task's context")
		}
		w, err := shuffleenv.CombiningWriter(env, 3, m, 0, 2, strs, ints, sumAgg)
		if err != nil {
			return mapOut{}, err
		}
		for i := range 2000 {
			word := wordOf(m, i)
			if err := w.Add(len(word)%2, word, 1); err != nil {
				return mapOut{}, err
			}
		}
		res, err := w.Commit()
		loc := env.Location()
		return mapOut{ExecutorID: loc.ExecutorID, Host: loc.Host, Address: loc.Address, Sizes: res.Sizes}, err
	}, nil)
	task.MustRegister(r, "wc.reduce", func(ctx context.Context, in reduceIn) (map[string]int64, error) {
		env, ok := shuffleenv.FromContext(ctx)
		if !ok {
			return nil, errors.New("no shuffle in the task's context")
		}
		var snap mapoutput.Snapshot
		if err := snap.UnmarshalBinary(in.Snapshot); err != nil {
			return nil, err
		}
		rd, err := env.Read(ctx, &snap, in.Reduce, shuffle.ByteOrder, shuffle.CombineBytes(ints, sumAgg.MergeCombiners))
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		out := map[string]int64{}
		for kv, err := range shuffle.Records(rd, strs, ints) {
			if err != nil {
				return nil, err
			}
			out[kv.Key] = kv.Value
		}
		return out, nil
	}, nil)
	return r
}

func launchGob[T any](t *testing.T, gw *gateway.Gateway, rec *recorder, exec string, id uint64, fn string, in any) T {
	t.Helper()
	data, err := codec.Gob.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Launch(exec, &flintpb.TaskDescription{TaskId: id, Function: fn, Codec: "gob", Input: data}); err != nil {
		t.Fatal(err)
	}
	u := rec.waitState(t, id, flintpb.TaskState_TASK_FINISHED)
	var out T
	if err := codec.Gob.Unmarshal(u.Result.GetInline(), &out); err != nil {
		t.Fatalf("task %d (%s): %v", id, fn, err)
	}
	return out
}

// Coarse executors given shuffle properties at registration serve their
// map outputs (TLS, the application's token) and read each other's: a
// word count's two stages run on two executors with an exact result, and
// the executors leave nothing in their local directory when they stop.
func TestCoarseExecutorsServeAndReadShuffleOutputs(t *testing.T) {
	dir := t.TempDir()
	set := shuffleenv.Settings{AppID: "app-gw", Token: shuffleserver.Token(secret, "app-gw"), TLS: true, LocalDir: dir,
		Memory: 4 << 20, Compression: shuffleblock.S2, MaxRetries: 1, RetryWait: time.Millisecond, Timeout: 10 * time.Second}
	rec := newRecorder()
	gw := startGateway(t, rec, func(c *gateway.Config) { c.Settings.Shuffle = set.Wire() })
	reg := shuffleRegistry()
	runs := []*executorRun{
		startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.ExecutorID, c.Host = reg, "exec-1", "localhost" }),
		startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.ExecutorID, c.Host = reg, "exec-2", "127.0.0.1" }),
	}
	rec.waitRegistered(t)
	rec.waitRegistered(t)

	tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
	if err := tr.RegisterShuffle(3, 2, 2); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for m, exec := range []string{"exec-1", "exec-2"} {
		out := launchGob[mapOut](t, gw, rec, exec, uint64(10+m), "wc.map", m)
		if out.ExecutorID != exec {
			t.Fatalf("map %d ran on %s, its status says %s", m, exec, out.ExecutorID)
		}
		st := mapoutput.Status{ShuffleID: 3, MapIndex: m, TaskID: uint64(10 + m), Location: mapoutput.Location{ExecutorID: out.ExecutorID, Host: out.Host, Address: out.Address}, Sizes: out.Sizes}
		if err := tr.RegisterMapOutput(st); err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			want[wordOf(m, i)]++
		}
	}
	snap, err := tr.Snapshot(3)
	if err != nil {
		t.Fatal(err)
	}
	data, err := snap.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for r := range 2 {
		maps.Copy(got, launchGob[map[string]int64](t, gw, rec, "exec-1", uint64(20+r), "wc.reduce", reduceIn{Snapshot: data, Reduce: r}))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("word count over the shuffle: %d words, want %d", len(got), len(want))
	}
	for _, r := range runs {
		r.cancel()
		if err := r.wait(t, 10*time.Second); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in flint.local.dir after the executors stopped: %v", left)
	}
}
