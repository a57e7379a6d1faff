package dataset

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
)

// keptNames is, per key, the name of keptBroadcast's broadcast.
var keptNames = map[string]string{}

// keptBroadcast reads a broadcast in one action and ends without
// destroying it: the run's end releases it on the driver.
var keptBroadcast = Job("test.broadcast-kept", func(b *Builder, key string) error {
	bc := NewBroadcast(b, "value of "+key)
	n, err := Count(Filter(Range(b, 0, 8, 2), func(int64) bool { return bc.Value() == "value of "+key }))
	if b.Driver() {
		keptNames[key] = bc.meta.Name
	}
	if err == nil && n != 8 {
		return fmt.Errorf("count %d, want 8", n)
	}
	return err
})

var plainCount = Job("test.plain-count", func(b *Builder, _ string) error {
	_, err := Count(Range(b, 0, 4, 2))
	return err
})

// holdsBroadcast reports whether fc's executor (local mode: its
// environment, in this process) holds a copy of name.
func holdsBroadcast(fc *framework.Context, name string) bool {
	return driverState(fc).loaded.holds(name)
}

func (loaded *loadedStore) holds(name string) bool {
	loaded.Lock()
	defer loaded.Unlock()
	return loaded.m[name] != nil
}

func driverContext(t *testing.T) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc
}

// A broadcast its run released (here: the run ended without Destroy) is
// dropped by the executor at its next task of the driver, whatever run
// that task belongs to; another driver's copy in the same process (local
// mode) is not touched.
func TestExecutorsDropReleasedBroadcasts(t *testing.T) {
	ctx := context.Background()
	fc, other := driverContext(t), driverContext(t)
	if _, err := keptBroadcast.Run(ctx, fc, t.Name()+"/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := keptBroadcast.Run(ctx, other, t.Name()+"/b"); err != nil {
		t.Fatal(err)
	}
	a, b := keptNames[t.Name()+"/a"], keptNames[t.Name()+"/b"]
	if !holdsBroadcast(fc, a) || !holdsBroadcast(other, b) {
		t.Fatalf("after their runs the executors hold %s: %v, %s: %v; want both (no task ran since)", a, holdsBroadcast(fc, a), b, holdsBroadcast(other, b))
	}
	if _, err := plainCount.Run(ctx, fc, ""); err != nil {
		t.Fatal(err)
	}
	if holdsBroadcast(fc, a) {
		t.Errorf("the executor still holds %s after a task of a later stage that no longer lists it", a)
	}
	if !holdsBroadcast(other, b) {
		t.Errorf("a task of one driver dropped another driver's broadcast %s", b)
	}
}

// dropReleased drops only the owner's broadcasts numbered up to the
// task's BroadcastSeq: a later one (another run's, added after the task's
// action was planned, so not in its stage's files) is kept.
func TestDropReleasedKeepsLaterBroadcasts(t *testing.T) {
	mine, theirs := newState(), newState()
	mine.loaded.m["t-old.fbc"] = &loadedBroadcast{seq: 5}
	mine.loaded.m["t-new.fbc"] = &loadedBroadcast{seq: 9}
	theirs.loaded.m["t-theirs.fbc"] = &loadedBroadcast{seq: 1}
	// not a task's context: no file is listed
	mine.loaded.dropReleased(context.Background(), 7)
	if got := [3]bool{mine.loaded.holds("t-old.fbc"), mine.loaded.holds("t-new.fbc"), theirs.loaded.holds("t-theirs.fbc")}; got != [3]bool{false, true, true} {
		t.Fatalf("held after dropReleased(upTo 7): old, new, theirs = %v, want [false true true]", got)
	}
}
