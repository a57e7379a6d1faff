package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// fileBackend serves files as the Mesos backends do (backend.FileServer):
// by path, under a URL it makes up.
type fileBackend struct {
	recordBackend
	served   map[string]string // url → path
	unserved []string
}

func (b *fileBackend) ServeFile(path string) (string, string, int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", 0, err
	}
	sum := sha256.Sum256(data)
	url := "https://driver/files/" + hex.EncodeToString(sum[:])
	b.served[url] = path
	return url, hex.EncodeToString(sum[:]), int64(len(data)), nil
}

func (b *fileBackend) FileToken(string, []*backend.File) (string, error) { return "tok", nil }

func (b *fileBackend) UnserveFile(url string) bool {
	b.unserved = append(b.unserved, url)
	_, ok := b.served[url]
	return ok
}

// With a backend that serves files, a reduce task lists no block: it names
// its partition and a file of its shuffle's statuses, published once for
// all reducers launched at one tracker state, which decodes into the
// tracker's snapshot at the task's epoch; an executor loss publishes a
// new one; releasing the shuffle unserves and deletes them all.
func TestReducersReadStatusesFromAServedFile(t *testing.T) {
	sched, err := scheduler.New(scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	bus := event.NewBus(0)
	defer bus.Close()
	virtual := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := New(Config{Sched: sched, Now: func() time.Time { return virtual }, Bus: bus, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	b := &fileBackend{served: map[string]string{}}
	d.SetBackend(b)
	d.ExecutorUp("e1", "h1", 4)
	d.ExecutorUp("e2", "h2", 4)
	spec := dagscheduler.JobSpec{Name: "driver-submit-test", Final: "reduce", Nodes: []dagscheduler.Node{
		{ID: "map", Partitions: 2},
		{ID: "reduce", Partitions: 3, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "map", ShuffleID: 0}}},
	}}
	sub, err := d.Submit(&StageJob{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	d.Step(false)
	for i, td := range b.take() {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: []string{"e1", "e2"}[i%2], State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Sizes: []uint64{10, 20, 30}})})
	}
	d.Step(false)
	reduces := b.take()
	if len(reduces) != 3 {
		t.Fatalf("%d reduce tasks launched, want 3", len(reduces))
	}
	var file *backend.File
	for _, td := range reduces {
		st := decodeTask(t, td)
		if len(td.Files) != 1 || len(st.Statuses) != 1 || st.Statuses[0].File != td.Files[0].Name || !td.Files[0].Served {
			t.Fatalf("reduce task %d: files %+v, statuses %+v", td.TaskID, td.Files, st.Statuses)
		}
		if file == nil {
			file = td.Files[0]
		} else if td.Files[0] != file {
			t.Fatalf("reducers launched at one tracker state list different files: %+v, %+v", file, td.Files[0])
		}
		if len(td.Input) > 200 {
			t.Fatalf("reduce task %d's input is %d bytes", td.TaskID, len(td.Input))
		}
	}
	snap := servedSnapshot(t, b, file)
	if snap.Epoch != decodeTask(t, reduces[0]).Statuses[0].Epoch || snap.NumMaps() != 2 {
		t.Fatalf("served snapshot at epoch %d of %d maps; the task names epoch %d", snap.Epoch, snap.NumMaps(), decodeTask(t, reduces[0]).Statuses[0].Epoch)
	}
	for m, want := range []string{"e1", "e2"} {
		if loc, ok := snap.Output(m); !ok || loc.ExecutorID != want {
			t.Fatalf("served output %d at %+v, want %s", m, loc, want)
		}
	}

	// the job ends
	for _, td := range reduces {
		d.StatusUpdate(&backend.StatusUpdate{TaskID: td.TaskID, ExecutorID: td.ExecutorID, State: scheduler.Finished,
			Result: encodeOutput(t, stagetask.Output{Value: []byte("r")})})
	}
	d.Step(false)
	if _, err := sub.Result(); err != nil || !sub.Ended() {
		t.Fatalf("job: %v", err)
	}
	// the same state at a later launch: the same file
	refsNow := func() ([]stagetask.StatusRef, []*backend.File) {
		var refs []stagetask.StatusRef
		var files []*backend.File
		d.query(func(c *driverCore, _ time.Time) {
			refs, files = c.statusRefs([]stagetask.Read{{ShuffleID: 0, Reduce: 2}})
		})
		return refs, files
	}
	if refs, files := refsNow(); len(files) != 1 || files[0] != file || refs[0].Epoch != snap.Epoch {
		t.Fatalf("a launch at the same state names %+v, %+v", refs, files)
	}
	// e2 is lost: a launch now names a newer snapshot without e2's output
	d.ExecutorLost("e2", "gone", false)
	d.Step(false)
	refs, files := refsNow()
	if len(files) != 1 || files[0] == file || refs[0].File != files[0].Name {
		t.Fatalf("a launch after the loss names %+v, %+v", refs, files)
	}
	after := servedSnapshot(t, b, files[0])
	if _, ok := after.Output(1); ok || after.Epoch <= snap.Epoch || refs[0].Epoch != after.Epoch {
		t.Fatalf("snapshot after the loss: epoch %d (before %d, task names %d), output 1 kept: %v", after.Epoch, snap.Epoch, refs[0].Epoch, ok)
	}

	// releasing the shuffle unserves and deletes its files
	if !d.ReleaseShuffle(0) {
		t.Fatal("shuffle 0 not released")
	}
	if len(b.unserved) != 2 || len(b.served) != 2 {
		t.Fatalf("served %d files, unserved %v", len(b.served), b.unserved)
	}
	for _, path := range b.served {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("released statuses file %s: %v", path, err)
		}
	}
	d.Stop()
}

func servedSnapshot(t *testing.T, b *fileBackend, f *backend.File) *mapoutput.Snapshot {
	t.Helper()
	path, ok := b.served[f.URI]
	if !ok || !strings.HasPrefix(f.Name, "flint-mapstatuses-0-") {
		t.Fatalf("file %+v is not served", f)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s mapoutput.Snapshot
	if err := s.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Executors asking in process at one tracker state share one snapshot; an
// epoch moved by another shuffle gives the same outputs at the new epoch.
func TestMapStatusesSharedAcrossExecutors(t *testing.T) {
	sched, err := scheduler.New(scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	bus := event.NewBus(0)
	defer bus.Close()
	d, err := New(Config{Sched: sched, Now: time.Now, Bus: bus, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	var epoch int64
	d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) {
		for id := range 2 {
			if err := tr.RegisterShuffle(id, 1, 1); err != nil {
				t.Fatal(err)
			}
			if err := tr.RegisterMapOutput(mapoutput.Status{ShuffleID: id, MapIndex: 0, Location: mapoutput.Location{ExecutorID: "e1"}, Sizes: []uint64{5}}); err != nil {
				t.Fatal(err)
			}
		}
		epoch = tr.Epoch()
	})
	ctx := context.Background()
	a, err := d.MapStatuses(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := d.MapStatuses(ctx, 0); err != nil || b != a || a.Epoch != epoch {
		t.Fatalf("second ask: %p (%v), first %p at epoch %d", b, err, a, a.Epoch)
	}
	// shuffle 1 loses its output: shuffle 0's are the same, at the new epoch
	d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) {
		tr.UnregisterMapOutput(1, 0, mapoutput.Location{ExecutorID: "e1"})
	})
	b, err := d.MapStatuses(ctx, 0)
	if loc, ok := b.Output(0); err != nil || b.Epoch != epoch+1 || !ok || loc.ExecutorID != "e1" {
		t.Fatalf("after shuffle 1's loss: %+v, %v", b, err)
	}
	d.InspectMapOutputs(func(tr *mapoutput.Tracker, _ time.Time) { tr.RemoveOutputsOnExecutor("e1") })
	c, err := d.MapStatuses(ctx, 0)
	if err != nil || c.Epoch != epoch+2 {
		t.Fatalf("after the loss: %+v, %v", c, err)
	}
	if _, ok := c.Output(0); ok {
		t.Fatal("the snapshot after the loss still lists the lost output")
	}
	if _, err := d.MapStatuses(ctx, 7); err == nil {
		t.Fatal("an unknown shuffle has statuses")
	}
	d.Stop()
}
