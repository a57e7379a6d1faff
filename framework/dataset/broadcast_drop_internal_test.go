package dataset

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
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

func holdsBroadcast(name string) bool {
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
	if !holdsBroadcast(a) || !holdsBroadcast(b) {
		t.Fatalf("after their runs the executors hold %s: %v, %s: %v; want both (no task ran since)", a, holdsBroadcast(a), b, holdsBroadcast(b))
	}
	if _, err := plainCount.Run(ctx, fc, ""); err != nil {
		t.Fatal(err)
	}
	if holdsBroadcast(a) {
		t.Errorf("the executor still holds %s after a task of a later stage that no longer lists it", a)
	}
	if !holdsBroadcast(b) {
		t.Errorf("a task of one driver dropped another driver's broadcast %s", b)
	}
}

// dropReleased drops only the owner's broadcasts numbered up to the
// task's BroadcastSeq: a later one (another run's, added after the task's
// action was planned, so not in its stage's files) is kept.
func TestDropReleasedKeepsLaterBroadcasts(t *testing.T) {
	mine, theirs := &shuffleenv.Env{}, &shuffleenv.Env{}
	loaded.Lock()
	for name, e := range map[string]*loadedBroadcast{
		"t-old.fbc": {owner: mine, seq: 5}, "t-new.fbc": {owner: mine, seq: 9}, "t-theirs.fbc": {owner: theirs, seq: 1},
	} {
		loaded.m[name] = e
	}
	loaded.Unlock()
	t.Cleanup(func() {
		for _, n := range []string{"t-old.fbc", "t-new.fbc", "t-theirs.fbc"} {
			dropBroadcast(n)
		}
	})
	// not a task's context: no file is listed
	dropReleased(context.Background(), mine, 7)
	if got := [3]bool{holdsBroadcast("t-old.fbc"), holdsBroadcast("t-new.fbc"), holdsBroadcast("t-theirs.fbc")}; got != [3]bool{false, true, true} {
		t.Fatalf("held after dropReleased(upTo 7): old, new, theirs = %v, want [false true true]", got)
	}
}
