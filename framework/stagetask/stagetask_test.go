package stagetask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

var (
	e1 = mapoutput.Location{ExecutorID: "e1", Host: "h1", Address: "h1:1"}
	e2 = mapoutput.Location{ExecutorID: "e2", Host: "h2", Address: "h2:1"}
)

func sampleTask() *Task {
	return &Task{Kind: Map, Job: "wordcount", Args: []byte{1, 2, 3}, Node: "reduceByKey@wc.go:12#0", Partition: 3,
		JobID: 7, StageID: 2, StageAttempt: 1, Attempt: 99, AttemptNumber: 2, Epoch: 5, ShuffleID: 4, NumReduces: 8, Executor: e2,
		Reads:    []Read{{ShuffleID: 1, Reduce: 3}, {ShuffleID: 2, Reduce: 3}, {ShuffleID: 2, Reduce: 4}},
		Statuses: []StatusRef{{ShuffleID: 1, Epoch: 5, File: "flint-mapstatuses-1-e5-1"}, {ShuffleID: 2, Epoch: 5}}}
}

// A read's blocks never travel: the executor cuts them from the
// statuses (MapStatuses.Resolve).
func TestTaskCarriesNoBlocks(t *testing.T) {
	in := sampleTask()
	in.Reads[0].Groups = []mapoutput.FetchGroup{{Location: e1, Blocks: []mapoutput.Block{{MapIndex: 0, ReduceIndex: 3, Size: 10}}, Bytes: 10}}
	in.Reads[1].Missing = &mapoutput.FetchFailure{ShuffleID: 2, MapIndex: 1, ReduceIndex: 3, Message: "no location"}
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out Task
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Reads, sampleTask().Reads) {
		t.Fatalf("reads after a round trip: %+v", out.Reads)
	}
}

func TestTaskRoundTrip(t *testing.T) {
	in := sampleTask()
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out Task
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, &out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, *in)
	}
	for n := range len(b) {
		var x Task
		if err := x.UnmarshalBinary(b[:n]); !errors.Is(err, ErrBadEncoding) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	o := Output{Sizes: []uint64{1, 0, 7}, Value: []byte("v"), FetchFailure: &mapoutput.FetchFailure{ShuffleID: 1, MapIndex: 2, ReduceIndex: 3,
		ExecutorID: "e1", Host: "h1", Address: "h1:1", Message: "refused"}, Location: e2,
		Cached: []CachedPartition{{Node: "links@pr.go:9#1", Partition: 3}, {Node: "x", Partition: 0}}}
	ob, _ := o.MarshalBinary()
	var o2 Output
	if err := o2.UnmarshalBinary(ob); err != nil || !reflect.DeepEqual(o, o2) {
		t.Fatalf("output round trip: %v %+v", err, o2)
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := sampleTask().MarshalBinary()
	f.Add(b)
	ob, _ := (&Output{Sizes: []uint64{3}, Value: []byte("x")}).MarshalBinary()
	f.Add(ob)
	f.Fuzz(func(t *testing.T, data []byte) {
		var tk Task
		if err := tk.UnmarshalBinary(data); err == nil {
			again, _ := tk.MarshalBinary()
			var tk2 Task
			if err := tk2.UnmarshalBinary(again); err != nil || !reflect.DeepEqual(tk, tk2) {
				t.Fatalf("accepted task does not round-trip: %v", err)
			}
		} else if !errors.Is(err, ErrBadEncoding) {
			t.Fatalf("error without ErrBadEncoding: %v", err)
		}
		var o Output
		if err := o.UnmarshalBinary(data); err != nil && !errors.Is(err, ErrBadEncoding) {
			t.Fatalf("error without ErrBadEncoding: %v", err)
		}
	})
}

func drain(t *testing.T, s Stream) []string {
	t.Helper()
	defer s.Close()
	var out []string
	for {
		k, v, err := s.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(k)+"="+string(v))
	}
}

func sum(dst, a, b []byte) ([]byte, error) {
	x, err := strconv.Atoi(string(a))
	if err != nil {
		return nil, err
	}
	y, err := strconv.Atoi(string(b))
	if err != nil {
		return nil, err
	}
	return strconv.AppendInt(dst, int64(x+y), 10), nil
}

func startEnv(t *testing.T, id string) *shuffleenv.Env {
	t.Helper()
	env, err := shuffleenv.Start(shuffleenv.Settings{AppID: "app", ExecutorID: id, Host: "h1", LocalDir: t.TempDir(), Memory: 4 << 20,
		Compression: shuffleblock.S2, MaxRetries: 1}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env
}

// The executor's shuffle as stage tasks see it: map outputs with
// map-side combine, a later attempt's commit losing to the first, a
// merged and combined read across two executors, and a lost output read
// as the fetch failure naming it.
func TestEnvShuffle(t *testing.T) {
	ctx := context.Background()
	envs := []*shuffleenv.Env{startEnv(t, "e1"), startEnv(t, "e2")}
	write := func(env *shuffleenv.Env, mapIndex int, attempt uint64, recs ...string) []uint64 {
		w, err := EnvShuffle(env).Create(ctx, WriteSpec{ShuffleID: 0, MapIndex: mapIndex, Partitions: 2, Attempt: attempt,
			Compare: bytes.Compare, Combine: sum})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(recs); i += 2 {
			p := 0
			if recs[i] >= "m" {
				p = 1
			}
			if err := w.Add(p, []byte(recs[i]), []byte(recs[i+1])); err != nil {
				t.Fatal(err)
			}
		}
		sizes, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return sizes
	}
	sizes := write(envs[0], 0, 1, "b", "1", "a", "2", "b", "3", "x", "1")
	if sizes[0] == 0 || sizes[1] == 0 {
		t.Fatalf("sizes %v: both partitions hold records", sizes)
	}
	if again := write(envs[0], 0, 2, "zzz", "1"); !reflect.DeepEqual(again, sizes) {
		t.Fatalf("a later attempt replaced the first: %v, want %v", again, sizes)
	}
	sizes2 := write(envs[1], 1, 3, "a", "5")
	read := Read{ShuffleID: 0, Reduce: 0, Groups: []mapoutput.FetchGroup{
		{Location: envs[0].Location(), Blocks: []mapoutput.Block{{MapIndex: 0, ReduceIndex: 0, Size: sizes[0]}}},
		{Location: envs[1].Location(), Blocks: []mapoutput.Block{{MapIndex: 1, ReduceIndex: 0, Size: sizes2[0]}}}}}
	s, err := EnvShuffle(envs[1]).Open(ctx, read, bytes.Compare, sum)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := drain(t, s), []string{"a=7", "b=4"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if err := envs[0].Release(0); err != nil {
		t.Fatal(err)
	}
	_, err = EnvShuffle(envs[1]).Open(ctx, read, bytes.Compare, sum)
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 0 || ff.MapIndex != 0 || ff.ReduceIndex != 0 || ff.ExecutorID != "e1" {
		t.Fatalf("read after loss: %v", err)
	}
	if _, err := EnvShuffle(envs[0]).Create(ctx, WriteSpec{Partitions: 1, Combine: sum}); err == nil {
		t.Fatal("combine without an order accepted")
	}
	if _, err := EnvShuffle(envs[0]).Open(ctx, Read{}, nil, sum); err == nil {
		t.Fatal("combining read without an order accepted")
	}
}

func TestRunFoldsFetchFailures(t *testing.T) {
	ff := &mapoutput.FetchFailure{ShuffleID: 3, MapIndex: 1, ReduceIndex: 0, ExecutorID: "e1", Message: "gone"}
	r := RunnerFunc(func(ctx context.Context, t *Task, sh Shuffle) (Output, error) {
		return Output{}, fmt.Errorf("reading: %w", ff)
	})
	out, err := Run(context.Background(), r, &Task{}, nil)
	if err != nil || out.FetchFailure != ff {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	missing := &Task{Reads: []Read{{ShuffleID: 3, Missing: ff}}}
	out, err = Run(context.Background(), RunnerFunc(func(ctx context.Context, t *Task, sh Shuffle) (Output, error) {
		_, err := sh.Open(ctx, t.Reads[0], nil, nil)
		return Output{}, err
	}), missing, EnvShuffle(startEnv(t, "e1")))
	if err != nil || out.FetchFailure != ff {
		t.Fatalf("missing output: %+v %v", out, err)
	}
	boom := errors.New("boom")
	if _, err := Run(context.Background(), RunnerFunc(func(context.Context, *Task, Shuffle) (Output, error) {
		return Output{}, boom
	}), &Task{}, nil); err != boom {
		t.Fatalf("other errors pass through: %v", err)
	}
}

var registrations int

func TestRegistry(t *testing.T) {
	registrations++ // -count=N registers a new name each time
	name := fmt.Sprintf("test.job%d", registrations)
	r := RunnerFunc(func(context.Context, *Task, Shuffle) (Output, error) { return Output{Value: []byte("ok")}, nil })
	Register(name, r)
	got, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := got.RunTask(context.Background(), &Task{}, nil); string(out.Value) != "ok" {
		t.Fatalf("looked up the wrong runner: %q", out.Value)
	}
	if _, err := Lookup("nope"); err == nil || !strings.HasPrefix(err.Error(), `stagetask: no runner registered for job "nope" (registered: [test.job1`) {
		t.Fatalf("unknown job: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate registration did not panic")
		}
	}()
	Register(name, r)
}
