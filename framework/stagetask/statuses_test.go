package stagetask

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/flint-mesos/flint/framework/mapoutput"
)

// statusDriver is a driver's tracker behind a source that counts what
// it answered.
type statusDriver struct {
	mu    sync.Mutex
	tr    *mapoutput.Tracker
	calls int
	gate  chan struct{} // when set, every load waits for it
}

func newStatusDriver(t *testing.T, maps int) *statusDriver {
	t.Helper()
	tr := mapoutput.NewTracker(mapoutput.Config{})
	if err := tr.RegisterShuffle(1, maps, 2); err != nil {
		t.Fatal(err)
	}
	for m := range maps {
		loc := e1
		if m%2 == 1 {
			loc = e2
		}
		if err := tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 1, MapIndex: m, Location: loc, Sizes: []uint64{0, 100}}); err != nil {
			t.Fatal(err)
		}
	}
	return &statusDriver{tr: tr}
}

func (d *statusDriver) source(ctx context.Context, ref StatusRef) (*mapoutput.Snapshot, error) {
	d.mu.Lock()
	d.calls++
	gate := d.gate
	d.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tr.Snapshot(ref.ShuffleID)
}

func (d *statusDriver) epoch() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tr.Epoch()
}

func mapsOf(groups []mapoutput.FetchGroup) map[string][]int {
	out := map[string][]int{}
	for _, g := range groups {
		for _, b := range g.Blocks {
			out[g.Location.ExecutorID] = append(out[g.Location.ExecutorID], b.MapIndex)
		}
	}
	return out
}

// Tasks at one epoch load a shuffle's statuses once and cut their own
// partition's blocks from them (empty blocks left out).
func TestMapStatusesLoadOncePerEpoch(t *testing.T) {
	d := newStatusDriver(t, 4)
	m := NewMapStatuses(d.source)
	ctx := context.Background()
	ref := StatusRef{ShuffleID: 1, Epoch: d.epoch()}
	for range 3 {
		groups, err := m.Blocks(ctx, ref, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := mapsOf(groups); !slices.Equal(got["e1"], []int{0, 2}) || !slices.Equal(got["e2"], []int{1, 3}) || len(got) != 2 {
			t.Fatalf("blocks of partition 1: %v", got)
		}
		if groups, err := m.Blocks(ctx, ref, 0, 1); err != nil || len(groups) != 0 {
			t.Fatalf("partition 0 is empty in every output, got %v, %v", groups, err)
		}
	}
	if m.Loads() != 1 || d.calls != 1 {
		t.Fatalf("%d loads, %d calls to the driver; want 1", m.Loads(), d.calls)
	}
}

// After an executor loss the epoch moves: a task naming the new epoch
// never reads the snapshot that still lists the lost executor's outputs,
// and the old snapshot is dropped; a task naming an older epoch is served
// the newer snapshot.
func TestMapStatusesNewEpochReloads(t *testing.T) {
	d := newStatusDriver(t, 4)
	m := NewMapStatuses(d.source)
	ctx := context.Background()
	old := StatusRef{ShuffleID: 1, Epoch: d.epoch()}
	if _, err := m.Blocks(ctx, old, 1, 2); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	lost := d.tr.RemoveOutputsOnExecutor("e2")
	for _, l := range lost { // recomputed on e1
		if err := d.tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 1, MapIndex: l.MapIndex, Location: e1, Sizes: []uint64{0, 100}}); err != nil {
			t.Fatal(err)
		}
	}
	d.tr.IncrementEpoch() // the map stage finished again
	d.mu.Unlock()
	if len(lost) != 2 {
		t.Fatalf("lost %v", lost)
	}
	fresh := StatusRef{ShuffleID: 1, Epoch: d.epoch()}
	groups, err := m.Blocks(ctx, fresh, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := mapsOf(groups); !slices.Equal(got["e1"], []int{0, 1, 2, 3}) || len(got) != 1 {
		t.Fatalf("blocks at the new epoch: %v", got)
	}
	groups, err = m.Blocks(ctx, old, 1, 2)
	if err != nil || len(mapsOf(groups)["e2"]) != 0 {
		t.Fatalf("a task of the old epoch read %v, %v: want the newer snapshot", mapsOf(groups), err)
	}
	if m.Loads() != 2 {
		t.Fatalf("%d loads, want 2 (one per epoch)", m.Loads())
	}
}

// A snapshot missing an output gives the reducer the output's fetch
// failure and is not kept: once the output is back, the next task loads
// a complete one. Forget (a fetch failure, a release) drops a kept one.
func TestMapStatusesMissingOutputNotKept(t *testing.T) {
	d := newStatusDriver(t, 2)
	d.tr.UnregisterMapOutput(1, 1, e2)
	m := NewMapStatuses(d.source)
	ctx := context.Background()
	task := &Task{Reads: []Read{{ShuffleID: 1, Reduce: 1}}, Statuses: []StatusRef{{ShuffleID: 1, Epoch: d.epoch()}}}
	m.Resolve(ctx, task)
	if ff := task.Reads[0].Missing; ff == nil || ff.ShuffleID != 1 || ff.MapIndex != 1 || ff.ReduceIndex != 1 {
		t.Fatalf("missing output: %+v", task.Reads[0])
	}
	if err := d.tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 1, MapIndex: 1, Location: e1, Sizes: []uint64{0, 100}}); err != nil {
		t.Fatal(err)
	}
	task.Reads[0].Missing = nil
	m.Resolve(ctx, task)
	if r := task.Reads[0]; r.Missing != nil || !slices.Equal(mapsOf(r.Groups)["e1"], []int{0, 1}) {
		t.Fatalf("after the output came back: %+v", r)
	}
	m.Resolve(ctx, task)
	if m.Loads() != 2 {
		t.Fatalf("%d loads, want 2 (the holed snapshot was not kept, the complete one was)", m.Loads())
	}
	m.Forget(1)
	m.Resolve(ctx, task)
	if m.Loads() != 3 {
		t.Fatalf("%d loads after Forget, want 3", m.Loads())
	}
}

// Reads whose statuses cannot be had become Missing failures naming the
// shuffle and partition: no StatusRef, no source, a source answering an
// older epoch than the task's.
func TestMapStatusesUnavailable(t *testing.T) {
	ctx := context.Background()
	d := newStatusDriver(t, 2)
	task := &Task{Reads: []Read{{ShuffleID: 1, Reduce: 1}, {ShuffleID: 9, Reduce: 0}},
		Statuses: []StatusRef{{ShuffleID: 1, Epoch: d.epoch() + 1}}}
	NewMapStatuses(d.source).Resolve(ctx, task)
	for i, want := range []string{"at epoch 1 answered with shuffle 1 at epoch 0", "names no map statuses of shuffle 9"} {
		ff := task.Reads[i].Missing
		if ff == nil || ff.ShuffleID != task.Reads[i].ShuffleID || ff.MapIndex != -1 || ff.ReduceIndex != task.Reads[i].Reduce || !strings.Contains(ff.Message, want) {
			t.Fatalf("read %d: %+v, want a failure saying %q", i, ff, want)
		}
	}
	env := NewEnv(nil)
	task = &Task{Reads: []Read{{ShuffleID: 1, Reduce: 0}}, Statuses: []StatusRef{{ShuffleID: 1}}}
	env.MapStatuses().Resolve(ctx, task)
	if ff := task.Reads[0].Missing; ff == nil || !strings.Contains(ff.Message, ErrNoStatusSource.Error()) {
		t.Fatalf("no source: %+v", ff)
	}
	if _, err := env.MapStatuses().Snapshot(ctx, StatusRef{ShuffleID: 1}); !errors.Is(err, ErrNoStatusSource) {
		t.Fatalf("no source: %v", err)
	}
}

// Tasks asking while a load is in flight wait for it: one load for all;
// when the loading task is cancelled, a waiting one loads again.
func TestMapStatusesConcurrentTasksLoadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newStatusDriver(t, 4)
		d.gate = make(chan struct{})
		m := NewMapStatuses(d.source)
		ref := StatusRef{ShuffleID: 1, Epoch: d.epoch()}
		first, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 5)
		go func() { _, err := m.Snapshot(first, ref); errs <- err }()
		synctest.Wait() // the first task is loading
		for range 4 {
			go func() { _, err := m.Snapshot(context.Background(), ref); errs <- err }()
		}
		synctest.Wait() // the others wait for its load
		if d.calls != 1 {
			t.Fatalf("%d loads in flight, want 1", d.calls)
		}
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled task: %v", err)
		}
		synctest.Wait() // one waiter loads again, the others wait for it
		if d.calls != 2 {
			t.Fatalf("%d loads after the cancel, want 2", d.calls)
		}
		close(d.gate)
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if m.Loads() != 2 {
			t.Fatalf("%d loads, want 2", m.Loads())
		}
	})
}

// Releasing a shuffle drops its statuses with its outputs; closing the
// environment drops all of them.
func TestEnvReleaseShuffleDropsStatuses(t *testing.T) {
	d := newStatusDriver(t, 2)
	env := NewEnv(nil)
	env.SetStatusSource(d.source)
	ctx := context.Background()
	ref := StatusRef{ShuffleID: 1}
	for _, release := range []func(){
		func() {
			if err := env.ReleaseShuffle("run-1", 1, true); err != nil { // another namespace: kept
				t.Fatal(err)
			}
		},
		func() {
			if err := env.ReleaseShuffle("", 1, false); err != nil {
				t.Fatal(err)
			}
		},
		func() { env.Close() },
	} {
		if _, err := env.MapStatuses().Snapshot(ctx, ref); err != nil {
			t.Fatal(err)
		}
		release()
	}
	if _, err := env.MapStatuses().Snapshot(ctx, ref); err != nil {
		t.Fatal(err)
	}
	// loads: first, (kept across the other namespace's release), after
	// the release, after Close
	if got := env.MapStatuses().Loads(); got != 3 {
		t.Fatalf("%d loads, want 3", got)
	}
}
