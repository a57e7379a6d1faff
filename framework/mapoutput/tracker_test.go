package mapoutput

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

var (
	e1 = Location{ExecutorID: "e1", Host: "h1", Address: "h1:7001"}
	e2 = Location{ExecutorID: "e2", Host: "h2", Address: "h2:7001"}
	e3 = Location{ExecutorID: "e3", Host: "h1", Address: "h1:7002"} // second executor on h1
)

func mustRegister(t *testing.T, tr *Tracker, st Status) {
	t.Helper()
	if err := tr.RegisterMapOutput(st); err != nil {
		t.Fatal(err)
	}
}

func TestTrackerRegisterAndQuery(t *testing.T) {
	tr := NewTracker(Config{})
	if err := tr.RegisterShuffle(7, 3, 2); err != nil {
		t.Fatal(err)
	}
	if tr.IsAvailable(7) || !slices.Equal(tr.Missing(7), []int{0, 1, 2}) {
		t.Fatalf("fresh shuffle: available=%v missing=%v", tr.IsAvailable(7), tr.Missing(7))
	}
	mustRegister(t, tr, Status{ShuffleID: 7, MapIndex: 0, TaskID: 11, Location: e1, Sizes: []uint64{100, 0}})
	mustRegister(t, tr, Status{ShuffleID: 7, MapIndex: 2, TaskID: 13, Location: e2, Sizes: []uint64{0, 50}})
	if got := tr.Missing(7); !slices.Equal(got, []int{1}) || tr.NumAvailable(7) != 2 {
		t.Fatalf("missing %v available %d", got, tr.NumAvailable(7))
	}
	mustRegister(t, tr, Status{ShuffleID: 7, MapIndex: 1, TaskID: 12, Location: e1, Sizes: []uint64{10, 10}})
	// a second attempt's output replaces the first without double counting
	mustRegister(t, tr, Status{ShuffleID: 7, MapIndex: 1, TaskID: 14, Location: e3, Sizes: []uint64{10, 10}})
	if !tr.IsAvailable(7) || tr.NumAvailable(7) != 3 {
		t.Fatalf("after all maps: available=%v n=%d", tr.IsAvailable(7), tr.NumAvailable(7))
	}
	if loc, tid, ok := tr.Output(7, 1); !ok || loc != e3 || tid != 14 {
		t.Fatalf("Output(7,1) = %v %d %v", loc, tid, ok)
	}
	if sz, ok := tr.BlockSize(7, 0, 0); !ok || sz != DecompressSize(CompressSize(100)) {
		t.Fatalf("BlockSize = %d %v", sz, ok)
	}
	if tr.Epoch() != 0 {
		t.Fatalf("registration changed the epoch to %d", tr.Epoch())
	}
}

func TestTrackerRejectsBadInput(t *testing.T) {
	tr := NewTracker(Config{})
	if err := tr.RegisterMapOutput(Status{ShuffleID: 1, Location: e1}); !errors.Is(err, ErrUnknownShuffle) {
		t.Fatalf("unknown shuffle: %v", err)
	}
	if err := tr.RegisterShuffle(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if err := tr.RegisterShuffle(1, 2, 3); err != nil {
		t.Fatalf("same shape again: %v", err)
	}
	err := tr.RegisterShuffle(1, 2, 4)
	if !errors.Is(err, ErrInvalidShuffle) || err.Error() != "mapoutput: invalid shuffle: shuffle 1 is registered with 2 maps and 3 reducers, not 2 and 4" {
		t.Fatalf("other shape: %v", err)
	}
	if err := tr.RegisterShuffle(2, -1, 1); !errors.Is(err, ErrInvalidShuffle) {
		t.Fatalf("negative maps: %v", err)
	}
	for _, st := range []Status{
		{ShuffleID: 1, MapIndex: 2, Location: e1, Sizes: make([]uint64, 3)},
		{ShuffleID: 1, MapIndex: -1, Location: e1, Sizes: make([]uint64, 3)},
		{ShuffleID: 1, MapIndex: 0, Location: e1, Sizes: make([]uint64, 2)},
		{ShuffleID: 1, MapIndex: 0, Sizes: make([]uint64, 3)},
	} {
		if err := tr.RegisterMapOutput(st); !errors.Is(err, ErrInvalidStatus) {
			t.Errorf("%+v: %v", st, err)
		}
	}
	if tr.NumAvailable(1) != 0 {
		t.Fatal("a rejected status was recorded")
	}
	err = tr.RegisterMapOutput(Status{ShuffleID: 1, MapIndex: 0, Location: e1, Sizes: make([]uint64, 2)})
	if err.Error() != "mapoutput: invalid map status: shuffle 1 map 0 reports 2 block sizes for 3 reducers" {
		t.Fatalf("message: %v", err)
	}
}

func TestTrackerUnregister(t *testing.T) {
	tr := NewTracker(Config{})
	_ = tr.RegisterShuffle(1, 4, 1)
	_ = tr.RegisterShuffle(2, 2, 1)
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 0, Location: e1, Sizes: []uint64{1}})
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 1, Location: e2, Sizes: []uint64{1}})
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 2, Location: e3, Sizes: []uint64{1}})
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 3, Location: e1, Sizes: []uint64{1}})
	mustRegister(t, tr, Status{ShuffleID: 2, MapIndex: 0, Location: e1, Sizes: []uint64{1}})
	mustRegister(t, tr, Status{ShuffleID: 2, MapIndex: 1, Location: e3, Sizes: []uint64{1}})

	// a fetch failure naming a location the output no longer has is ignored
	if tr.UnregisterMapOutput(1, 1, e1) || tr.Epoch() != 0 {
		t.Fatal("unregistered an output at another location")
	}
	if !tr.UnregisterMapOutput(1, 1, e2) || tr.Epoch() != 1 || tr.UnregisterMapOutput(1, 1, e2) {
		t.Fatalf("unregister: epoch %d", tr.Epoch())
	}
	lost := tr.RemoveOutputsOnExecutor("e1")
	if want := []Lost{{1, 0}, {1, 3}, {2, 0}}; !slices.Equal(lost, want) || tr.Epoch() != 2 {
		t.Fatalf("lost %v epoch %d, want %v epoch 2", lost, tr.Epoch(), want)
	}
	if tr.RemoveOutputsOnExecutor("e1") != nil || tr.Epoch() != 2 {
		t.Fatal("second removal changed something")
	}
	lost = tr.RemoveOutputsOnHost("h1") // e3 lives on h1 too
	if want := []Lost{{1, 2}, {2, 1}}; !slices.Equal(lost, want) || tr.Epoch() != 3 {
		t.Fatalf("host removal lost %v epoch %d", lost, tr.Epoch())
	}
	if tr.NumAvailable(1) != 0 || tr.NumAvailable(2) != 0 {
		t.Fatal("outputs left")
	}
}

func TestTrackerPreferredHosts(t *testing.T) {
	tr := NewTracker(Config{})
	_ = tr.RegisterShuffle(1, 4, 2)
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 0, Location: e1, Sizes: []uint64{1000, 0}})
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 1, Location: e2, Sizes: []uint64{300, 0}})
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 2, Location: e3, Sizes: []uint64{1000, 0}})
	if got := tr.PreferredHosts(1, 0, 0.2); got != nil {
		t.Fatalf("with a map output missing: %v", got)
	}
	mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 3, Location: e2, Sizes: []uint64{10, 0}})
	// h1 holds 2000 of 2310 bytes, h2 310 (13 %): only h1 passes 20 %
	if got := tr.PreferredHosts(1, 0, 0.2); !slices.Equal(got, []string{"h1"}) {
		t.Fatalf("preferred %v", got)
	}
	if got := tr.PreferredHosts(1, 0, 0.1); !slices.Equal(got, []string{"h1", "h2"}) {
		t.Fatalf("preferred at 10%%: %v", got)
	}
	if got := tr.PreferredHosts(1, 1, 0.2); got != nil {
		t.Fatalf("empty partition: %v", got)
	}
}

func TestSnapshotBlocks(t *testing.T) {
	tr := NewTracker(Config{})
	_ = tr.RegisterShuffle(3, 3, 3)
	mustRegister(t, tr, Status{ShuffleID: 3, MapIndex: 0, Location: e1, Sizes: []uint64{0, 10, 20}})
	mustRegister(t, tr, Status{ShuffleID: 3, MapIndex: 1, Location: e2, Sizes: []uint64{0, 0, 0}})
	snap, err := tr.Snapshot(3)
	if err != nil {
		t.Fatal(err)
	}
	_, err = snap.Blocks(0, 3)
	var ff *FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 3 || ff.MapIndex != 2 || ff.ExecutorID != "" {
		t.Fatalf("missing output: %v", err)
	}
	mustRegister(t, tr, Status{ShuffleID: 3, MapIndex: 2, Location: e1, Sizes: []uint64{5, 0, 7}})
	if _, err := snap.Blocks(0, 3); err == nil {
		t.Fatal("an old snapshot saw a later registration")
	}
	snap, _ = tr.Snapshot(3)
	groups, err := snap.Blocks(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	c := func(s uint64) uint64 { return DecompressSize(CompressSize(s)) }
	want := []FetchGroup{{Location: e1, Blocks: []Block{{0, 1, c(10)}, {0, 2, c(20)}, {2, 2, c(7)}}, Bytes: c(10) + c(20) + c(7)}}
	if len(groups) != 1 || groups[0].Location != want[0].Location || !slices.Equal(groups[0].Blocks, want[0].Blocks) || groups[0].Bytes != want[0].Bytes {
		t.Fatalf("groups %+v\nwant %+v", groups, want)
	}
	if _, err := snap.Blocks(2, 2); err == nil {
		t.Fatal("empty range accepted")
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	tr := NewTracker(Config{MinPartitionsToHighlyCompress: 4, AccurateBlockThreshold: 1 << 20})
	_ = tr.RegisterShuffle(9, 3, 5)
	mustRegister(t, tr, Status{ShuffleID: 9, MapIndex: 0, TaskID: 3, Location: e1, Sizes: []uint64{0, 10, 20, 2 << 20, 0}})
	mustRegister(t, tr, Status{ShuffleID: 9, MapIndex: 2, TaskID: 4, Location: e2, Sizes: []uint64{1, 1, 1, 1, 1}})
	tr.IncrementEpoch()
	snap, _ := tr.Snapshot(9)
	b, err := snap.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got.ShuffleID != 9 || got.Epoch != 1 || got.NumReduces != 5 || got.NumMaps() != 3 || !slices.Equal(got.Locations, snap.Locations) {
		t.Fatalf("decoded header %+v", got)
	}
	for m := range 3 {
		for r := range 5 {
			a, aok := snap.BlockSize(m, r)
			b, bok := got.BlockSize(m, r)
			if a != b || aok != bok {
				t.Fatalf("map %d reduce %d: %d/%v vs %d/%v", m, r, a, aok, b, bok)
			}
		}
	}
	if sz, _ := got.BlockSize(0, 3); sz != 2<<20 {
		t.Fatalf("huge block not exact: %d", sz)
	}
	for n := range len(b) {
		var s Snapshot
		if err := s.UnmarshalBinary(b[:n]); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrBadSnapshot) || got.NumMaps() != 3 {
		t.Fatalf("trailing byte: %v (snapshot changed: %d maps)", err, got.NumMaps())
	}
}

func FuzzSnapshotUnmarshal(f *testing.F) {
	tr := NewTracker(Config{MinPartitionsToHighlyCompress: 3})
	_ = tr.RegisterShuffle(1, 2, 4)
	_ = tr.RegisterMapOutput(Status{ShuffleID: 1, MapIndex: 1, Location: e1, Sizes: []uint64{0, 1, 200 << 20, 4}})
	snap, _ := tr.Snapshot(1)
	b, _ := snap.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Snapshot
		if err := s.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error without ErrBadSnapshot: %v", err)
			}
			return
		}
		// anything accepted must be usable and re-encode identically
		for m := range min(s.NumMaps(), 64) {
			for r := range min(s.NumReduces, 4096) {
				s.BlockSize(m, r)
			}
		}
		if s.NumReduces > 0 && s.NumReduces < 1000 {
			_, _ = s.Blocks(0, s.NumReduces)
		}
		again, _ := s.MarshalBinary()
		if string(again) != string(data) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// Encoded sizes share slab buffers; re-registering an output must leave
// its neighbours and snapshots taken before untouched.
func TestTrackerOutputsDoNotShareBytes(t *testing.T) {
	const maps, reduces = 200, 5 // several slab buffers
	tr := NewTracker(Config{})
	if err := tr.RegisterShuffle(1, maps, reduces); err != nil {
		t.Fatal(err)
	}
	sizesOf := func(m int, scale uint64) []uint64 {
		s := make([]uint64, reduces)
		for r := range s {
			s[r] = scale * uint64(m*reduces+r+1)
		}
		return s
	}
	for m := range maps {
		mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: m, Location: e1, Sizes: sizesOf(m, 1)})
	}
	before, err := tr.Snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	for m := 0; m < maps; m += 3 {
		mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: m, Location: e2, Sizes: sizesOf(m, 1000)})
	}
	for m := range maps {
		scale := uint64(1)
		if m%3 == 0 {
			scale = 1000
		}
		for r, want := range sizesOf(m, scale) {
			got, _ := tr.BlockSize(1, m, r)
			if DecompressSize(CompressSize(want)) != got {
				t.Fatalf("map %d reduce %d: size %d, want %d's code", m, r, got, want)
			}
			old, _ := before.BlockSize(m, r)
			if wantOld := DecompressSize(CompressSize(sizesOf(m, 1)[r])); old != wantOld {
				t.Fatalf("snapshot map %d reduce %d: size %d, want %d", m, r, old, wantOld)
			}
		}
	}
}

// TestMapOutputBytes: a record per map index plus each registered
// output's encoded sizes — one byte per reducer plus the format byte below
// MinPartitionsToHighlyCompress, 13 bytes (format, empty count, average)
// for 10,000 reducers with no empty block, the bitmap's 1,250 bytes more
// with half of them empty.
func TestMapOutputBytes(t *testing.T) {
	tr := NewTracker(Config{})
	loc := Location{ExecutorID: "e1", Host: "h1", Address: "h1:7337"}
	if err := tr.RegisterShuffle(0, 3, 10); err != nil {
		t.Fatal(err)
	}
	if err := tr.RegisterShuffle(1, 3, 10000); err != nil {
		t.Fatal(err)
	}
	full, half := make([]uint64, 10000), make([]uint64, 10000)
	for r := range full {
		full[r], half[r] = 500, uint64(r%2*500)
	}
	for _, st := range []Status{
		{ShuffleID: 0, MapIndex: 0, Location: loc, Sizes: make([]uint64, 10)},
		{ShuffleID: 0, MapIndex: 2, Location: loc, Sizes: make([]uint64, 10)},
		{ShuffleID: 1, MapIndex: 0, Location: loc, Sizes: full},
		{ShuffleID: 1, MapIndex: 1, Location: loc, Sizes: half},
	} {
		if err := tr.RegisterMapOutput(st); err != nil {
			t.Fatal(err)
		}
	}
	record := int(unsafe.Sizeof(output{}))
	for _, c := range []struct{ shuffle, want int }{
		{0, 3*record + 2*11},
		{1, 3*record + 13 + 1 + 1250 + 8},
	} {
		if got, err := tr.MapOutputBytes(c.shuffle); err != nil || got != c.want {
			t.Errorf("shuffle %d: %d bytes (%v), want %d", c.shuffle, got, err, c.want)
		}
	}
	if _, err := tr.MapOutputBytes(9); !errors.Is(err, ErrUnknownShuffle) {
		t.Errorf("unknown shuffle: %v, want ErrUnknownShuffle", err)
	}
	// one location: its record, its host index, 2+2+7 string bytes, one host string
	if got, want := tr.LocationBytes(), int(unsafe.Sizeof(Location{}))+4+11+int(unsafe.Sizeof(""))+2; got != want {
		t.Errorf("LocationBytes %d, want %d", got, want)
	}
}

// A shuffle's version moves with every change of its outputs and with
// nothing else, and never repeats, even for a shuffle registered again.
func TestTrackerVersion(t *testing.T) {
	tr := NewTracker(Config{})
	for _, id := range []int{1, 2} {
		if err := tr.RegisterShuffle(id, 2, 1); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Version(1) != 0 || tr.Version(9) != 0 {
		t.Fatalf("fresh: %d, unknown: %d", tr.Version(1), tr.Version(9))
	}
	seen := map[uint64]bool{0: true}
	step := func(what string, id int, moved bool, change func()) {
		t.Helper()
		before, other := tr.Version(id), tr.Version(3-id)
		change()
		v := tr.Version(id)
		if moved == (v == before) || moved && seen[v] || tr.Version(3-id) != other {
			t.Fatalf("%s: version %d → %d (moved: %v), other shuffle %d → %d", what, before, v, moved, other, tr.Version(3-id))
		}
		seen[v] = true
		if s, err := tr.Snapshot(id); err == nil && s.Version != v {
			t.Fatalf("%s: snapshot at version %d, tracker at %d", what, s.Version, v)
		}
	}
	step("register", 1, true, func() { mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 0, Location: e1, Sizes: []uint64{1}}) })
	step("register the other", 2, true, func() { mustRegister(t, tr, Status{ShuffleID: 2, MapIndex: 0, Location: e1, Sizes: []uint64{1}}) })
	step("replace", 1, true, func() { mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 0, Location: e2, Sizes: []uint64{1}}) })
	step("epoch", 1, false, func() { tr.IncrementEpoch() })
	step("unregister elsewhere", 1, false, func() { tr.UnregisterMapOutput(1, 0, e1) })
	step("unregister", 1, true, func() { tr.UnregisterMapOutput(1, 0, e2) })
	step("executor lost", 2, true, func() { tr.RemoveOutputsOnExecutor("e1") })
	step("register again", 1, true, func() {
		tr.UnregisterShuffle(1)
		if err := tr.RegisterShuffle(1, 2, 1); err != nil {
			t.Fatal(err)
		}
		mustRegister(t, tr, Status{ShuffleID: 1, MapIndex: 1, Location: e3, Sizes: []uint64{1}})
	})
}
