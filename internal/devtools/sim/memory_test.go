package sim

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/mapoutput"
)

// The stated per-output bound: a byte per reducer below 2,000 reducers,
// the empty-block bitmap and the average from there on, plus a 40-byte
// record per map index; one byte over it is a violation.
func TestTrackerBound(t *testing.T) {
	for _, c := range []struct {
		maps, reduces, registered, limit int
	}{
		{10, 4, 10, 10*40 + 10*5},            // 1 + R each
		{10, 1999, 3, 10*40 + 3*2000},        // still a byte per reducer
		{10, 2000, 10, 10*40 + 10*(1+250+8)}, // bitmap of 250 bytes and the average
		{10, 10000, 2, 10*40 + 2*(1+1250+8)}, // 10,000 reducers: 1,259 bytes at most
		{100, 10, 0, 100 * 40},               // nothing registered: the records alone
	} {
		if v := trackerBound(7, c.maps, c.reduces, c.registered, c.limit); v != "" {
			t.Errorf("%+v at its limit: %s", c, v)
		}
		v := trackerBound(7, c.maps, c.reduces, c.registered, c.limit+1)
		if !strings.Contains(v, "the map-output tracker holds") || !strings.Contains(v, "shuffle 7") {
			t.Errorf("%+v one byte over: violation %q", c, v)
		}
	}
}

// The tracker itself stays within the bound, with a byte per reducer and
// with the highly compressed form: its own accounting of a shuffle of
// registered outputs is at most the stated bound.
func TestRealTrackerWithinBound(t *testing.T) {
	for _, reduces := range []int{1, 100, 1999, 2000, 10000} {
		tr := mapoutput.NewTracker(mapoutput.Config{})
		const maps = 50
		if err := tr.RegisterShuffle(0, maps, reduces); err != nil {
			t.Fatal(err)
		}
		for m := range maps - 5 { // five left unregistered
			sizes := make([]uint64, reduces)
			for r := range sizes {
				sizes[r] = uint64(100 * (1 + (m*r)%1000))
			}
			loc := mapoutput.Location{ExecutorID: "e", Host: "h", Address: "h:1"}
			if err := tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 0, MapIndex: m, TaskID: uint64(m), Location: loc, Sizes: sizes}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := tr.MapOutputBytes(0)
		if err != nil {
			t.Fatal(err)
		}
		if v := trackerBound(0, maps, reduces, maps-5, n); v != "" {
			t.Errorf("%d reducers: %s", reduces, v)
		}
		if l := tr.LocationBytes(); l > locationBound(mapoutput.Location{ExecutorID: "e", Host: "h", Address: "h:1"}) {
			t.Errorf("%d reducers: one location takes %d bytes, over its bound", reduces, l)
		}
	}
}

// Each of the driver core's counts over its bound is named.
func TestRetainedBound(t *testing.T) {
	ok := driver.Retained{Attempts: 3, TaskCoreAttempts: 3, SlotUses: 3, TaskSets: 3, Jobs: 2, Stages: 5, EndedStages: 1}
	if v := retainedBound(ok, 3, 1, 2); v != "" {
		t.Fatalf("within bounds: %s", v)
	}
	for _, c := range []struct {
		name string
		bad  func(r *driver.Retained)
	}{
		{"attempts (driver core)", func(r *driver.Retained) { r.Attempts = 4 }},
		{"attempts (task core)", func(r *driver.Retained) { r.TaskCoreAttempts = 4 }},
		{"attempts holding cores", func(r *driver.Retained) { r.SlotUses = 4 }},
		{"task sets", func(r *driver.Retained) { r.TaskSets = 4 }},
		{"jobs", func(r *driver.Retained) { r.Jobs = 3 }},
		{"stage statuses not ended", func(r *driver.Retained) { r.Stages = 6 }},
		{"ended stage statuses", func(r *driver.Retained) { r.Stages, r.EndedStages = 1004, 1001 }},
	} {
		r := ok
		c.bad(&r)
		if v := retainedBound(r, 3, 1, 2); !strings.Contains(v, c.name+", over its bound") {
			t.Errorf("%s over its bound: violation %q", c.name, v)
		}
	}
}
