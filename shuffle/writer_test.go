package shuffle_test

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

func sortRecs(rs []rec) []rec {
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b rec) int { return cmp.Compare(a.k, b.k) })
	return rs
}

func sortAll(rs []rec) []rec {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b rec) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.v, b.v)) })
	return rs
}

// expect is, per partition, the records in the order the writer must
// produce: sorted by key (stable: equal keys in input order) or, unordered,
// in input order.
func expect(recs []rec, parts int, sorted bool) [][]rec {
	out := make([][]rec, parts)
	for _, r := range recs {
		p := partOf(r.k, parts)
		out[p] = append(out[p], r)
	}
	if sorted {
		for p := range out {
			out[p] = sortRecs(out[p])
		}
	}
	return out
}

func TestWriterPartitionsAndSortsWithAndWithoutSpills(t *testing.T) {
	recs := randomRecords(1, 20000, 3000)
	for _, tc := range []struct {
		name   string
		order  shuffle.Order
		memory int64
		spills bool
	}{
		{"sorted in memory", shuffle.ByteOrder, 64 << 20, false},
		{"sorted spilling", shuffle.ByteOrder, 256 << 10, true},
		{"custom order spilling", shuffle.CustomOrder(func(a, b []byte) int { return cmp.Compare(string(a), string(b)) }), 256 << 10, true},
		{"unordered in memory", shuffle.Unordered, 64 << 20, false},
		{"unordered spilling", shuffle.Unordered, 256 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mem := shuffle.NewMemory(tc.memory)
			for _, comp := range []shuffleblock.Compression{shuffleblock.S2, shuffleblock.Zstd, shuffleblock.None} {
				mapIndex := int(comp)
				res := writeAll(t, shuffle.Config{Store: s, ShuffleID: 3, MapIndex: mapIndex, Partitions: 7, Order: tc.order, Compression: comp, Memory: mem.Task()}, recs)
				if got := res.Spills > 0; got != tc.spills {
					t.Fatalf("%v: spills = %d, want spilling %v", comp, res.Spills, tc.spills)
				}
				if res.RecordsWritten != int64(len(recs)) {
					t.Fatalf("RecordsWritten = %d", res.RecordsWritten)
				}
				want := expect(recs, 7, tc.order.Sorted())
				var total uint64
				for p := range 7 {
					got := readBlock(t, s, 3, mapIndex, p)
					if tc.order.Sorted() && !slices.IsSortedFunc(got, func(a, b rec) int { return cmp.Compare(a.k, b.k) }) {
						t.Fatalf("%v: partition %d is not sorted by key", comp, p)
					}
					// Equal keys come in no promised order: compare
					// the multisets.
					if !slices.Equal(sortAll(got), sortAll(want[p])) {
						t.Fatalf("%v: partition %d: %d records, want %d", comp, p, len(got), len(want[p]))
					}
					total += res.Sizes[p]
				}
				if st, _ := os.Stat(s.DataPath(3, mapIndex)); uint64(st.Size()) != total || res.BytesWritten != st.Size() {
					t.Fatalf("sizes add up to %d, data file is %d, BytesWritten %d", total, st.Size(), res.BytesWritten)
				}
			}
			if mem.Used() != 0 {
				t.Fatalf("memory held after commit: %d", mem.Used())
			}
			assertNoTempFiles(t, s)
		})
	}
}

func assertNoTempFiles(t *testing.T, s *shuffle.Store) {
	t.Helper()
	err := filepath.WalkDir(s.Root(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) != ".data" && filepath.Ext(p) != ".index" {
			t.Errorf("left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEmptyPartitionsHaveZeroSizeAndEmptyBlocks(t *testing.T) {
	s := openStore(t)
	res := writeAll(t, shuffle.Config{Store: s, Partitions: 50, Order: shuffle.ByteOrder, Memory: shuffle.NewMemory(1 << 20).Task()}, []rec{{"a", "1"}})
	nonEmpty := 0
	for p, n := range res.Sizes {
		if n > 0 {
			nonEmpty++
			if p != partOf("a", 50) {
				t.Fatalf("partition %d has %d bytes", p, n)
			}
		}
		if got := readBlock(t, s, 0, 0, p); (n == 0) != (len(got) == 0) {
			t.Fatalf("partition %d: size %d, %d records", p, n, len(got))
		}
	}
	if nonEmpty != 1 {
		t.Fatalf("%d non-empty partitions", nonEmpty)
	}
}

func TestFirstCommittedAttemptWins(t *testing.T) {
	s := openStore(t)
	mem := shuffle.NewMemory(1 << 20)
	first := writeAll(t, shuffle.Config{Store: s, ShuffleID: 1, MapIndex: 4, Attempt: 0, Partitions: 2, Order: shuffle.ByteOrder, Memory: mem.Task()}, []rec{{"a", "first"}})
	second := writeAll(t, shuffle.Config{Store: s, ShuffleID: 1, MapIndex: 4, Attempt: 1, Partitions: 2, Order: shuffle.ByteOrder, Memory: mem.Task()}, []rec{{"a", "second attempt, longer"}})
	if !slices.Equal(first.Sizes, second.Sizes) {
		t.Fatalf("second attempt's sizes %v, first's %v", second.Sizes, first.Sizes)
	}
	if got := readBlock(t, s, 1, 4, partOf("a", 2)); len(got) != 1 || got[0].v != "first" {
		t.Fatalf("block after two attempts: %v", got)
	}
	assertNoTempFiles(t, s)
}

func TestReplacedOutputAfterCorruptCommitIsRewritten(t *testing.T) {
	s := openStore(t)
	mem := shuffle.NewMemory(1 << 20)
	writeAll(t, shuffle.Config{Store: s, Partitions: 1, Order: shuffle.ByteOrder, Memory: mem.Task()}, []rec{{"a", "first"}})
	if err := os.Truncate(s.DataPath(0, 0), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenBlock(0, 0, 0); !errors.Is(err, shuffleblock.ErrCorrupt) || !strings.Contains(err.Error(), s.DataPath(0, 0)) {
		t.Fatalf("truncated data file: %v", err)
	}
	writeAll(t, shuffle.Config{Store: s, Attempt: 1, Partitions: 1, Order: shuffle.ByteOrder, Memory: mem.Task()}, []rec{{"a", "again"}})
	if got := readBlock(t, s, 0, 0, 0); len(got) != 1 || got[0].v != "again" {
		t.Fatalf("a new attempt did not replace an inconsistent output: %v", got)
	}
}

func TestDeletedAndReleasedOutputs(t *testing.T) {
	s := openStore(t)
	mem := shuffle.NewMemory(1 << 20)
	for m := range 3 {
		writeAll(t, shuffle.Config{Store: s, ShuffleID: 5, MapIndex: m, Partitions: 2, Order: shuffle.Unordered, Memory: mem.Task()}, []rec{{"k", "v"}})
	}
	writeAll(t, shuffle.Config{Store: s, ShuffleID: 6, Partitions: 2, Order: shuffle.Unordered, Memory: mem.Task()}, []rec{{"k", "v"}})
	os.Remove(s.DataPath(5, 1))
	if _, err := s.OpenBlock(5, 1, 0); !errors.Is(err, shuffle.ErrNoOutput) {
		t.Fatalf("deleted data file: %v", err)
	}
	os.Remove(s.IndexPath(5, 2))
	if _, err := s.OpenBlock(5, 2, 0); !errors.Is(err, shuffle.ErrNoOutput) {
		t.Fatalf("deleted index file: %v", err)
	}
	if _, err := s.OpenBlock(5, 0, 2); err == nil {
		t.Fatal("reduce partition out of range opened")
	}
	if err := s.RemoveShuffle(5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenBlock(5, 0, 0); !errors.Is(err, shuffle.ErrNoOutput) {
		t.Fatalf("released shuffle still readable: %v", err)
	}
	if _, err := s.OpenBlock(6, 0, partOf("k", 2)); err != nil {
		t.Fatalf("another shuffle went with it: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Root()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("store root after Close: %v", err)
	}
}

func TestAbortDeletesSpillsAndReleasesMemory(t *testing.T) {
	s := openStore(t)
	mem := shuffle.NewMemory(64 << 10)
	w, err := shuffle.NewWriter(shuffle.Config{Store: s, Partitions: 3, Order: shuffle.ByteOrder, Memory: mem.Task()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range randomRecords(2, 5000, 100) {
		if err := w.Add(partOf(r.k, 3), []byte(r.k), []byte(r.v)); err != nil {
			t.Fatal(err)
		}
	}
	if w.Metrics().Spills == 0 {
		t.Fatal("no spill under 64 KiB")
	}
	w.Abort()
	if mem.Used() != 0 {
		t.Fatalf("memory after Abort: %d", mem.Used())
	}
	entries, _ := os.ReadDir(filepath.Join(s.Root(), "shuffle_0"))
	if len(entries) != 0 {
		t.Fatalf("files after Abort: %v", entries)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
}

func TestWriterRejectsBadConfigAndPartitions(t *testing.T) {
	s := openStore(t)
	if _, err := shuffle.NewWriter(shuffle.Config{Store: s, Partitions: 0, Memory: shuffle.NewMemory(1).Task()}); err == nil {
		t.Fatal("zero partitions accepted")
	}
	if _, err := shuffle.NewWriter(shuffle.Config{Store: s, Partitions: 1, Memory: shuffle.NewMemory(1).Task(), Combine: func(d, a, b []byte) ([]byte, error) { return d, nil }}); err == nil {
		t.Fatal("combine without order accepted")
	}
	w, err := shuffle.NewWriter(shuffle.Config{Store: s, Partitions: 2, Memory: shuffle.NewMemory(1 << 20).Task()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Add(2, nil, nil); err == nil {
		t.Fatal("partition 2 of 2 accepted")
	}
}

func TestMemoryFairShare(t *testing.T) {
	m := shuffle.NewMemory(1000)
	a := m.Task()
	if !a.Grow(900) {
		t.Fatal("a lone task cannot take 900 of 1000")
	}
	b := m.Task()
	if b.Grow(600) {
		t.Fatal("the second task got more than its half")
	}
	if !b.Grow(100) || b.Grow(1) {
		t.Fatalf("second task: the pool had 100 left")
	}
	a.Release()
	if !b.Grow(400) || m.Used() != 500 {
		t.Fatalf("after a left, b holds %d, pool %d", b.Held(), m.Used())
	}
	b.Release()
	b.Release()
	if m.Used() != 0 {
		t.Fatalf("pool after releases: %d", m.Used())
	}
}

func TestCombiningWriterCountsWordsWhileSpilling(t *testing.T) {
	words := randomRecords(3, 50000, 5000)
	want := map[string]int64{}
	for _, w := range words {
		want[w.k]++
	}
	s := openStore(t)
	agg := shuffle.Aggregator[int64, int64]{
		CreateCombiner: func(v int64) int64 { return v },
		MergeValue:     func(c, v int64) int64 { return c + v },
		MergeCombiners: func(a, b int64) int64 { return a + b },
	}
	ints := recordcodec.For[int64]()
	w, err := shuffle.NewCombiningWriter(shuffle.Config{Store: s, ShuffleID: 2, Partitions: 4, Memory: shuffle.NewMemory(128 << 10).Task()}, recordcodec.For[string](), ints, agg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range words {
		if err := w.Add(partOf(r.k, 4), r.k, 1); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if res.Spills < 2 {
		t.Fatalf("spills = %d under 128 KiB for 5000 keys", res.Spills)
	}
	got := map[string]int64{}
	for p := range 4 {
		b, err := s.OpenBlock(2, 0, p)
		if err != nil {
			t.Fatal(err)
		}
		prev := ""
		for kv, err := range shuffle.Records(shuffleblock.NewReader(b), recordcodec.For[string](), ints) {
			if err != nil {
				t.Fatal(err)
			}
			if kv.Key <= prev {
				t.Fatalf("partition %d: %q after %q: not sorted and unique", p, kv.Key, prev)
			}
			if partOf(kv.Key, 4) != p {
				t.Fatalf("%q in partition %d", kv.Key, p)
			}
			prev = kv.Key
			got[kv.Key] = kv.Value
		}
		b.Close()
	}
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("count of %q = %d, want %d", k, got[k], n)
		}
	}
}

func TestCombiningWriterAccountsForGrowingCombiners(t *testing.T) {
	// groupByKey: one key whose list outgrows the memory must spill, and
	// the merge must concatenate the lists.
	s := openStore(t)
	agg := shuffle.Aggregator[string, []string]{
		CreateCombiner: func(v string) []string { return []string{v} },
		MergeValue:     func(c []string, v string) []string { return append(c, v) },
		MergeCombiners: func(a, b []string) []string { return append(a, b...) },
	}
	lists := recordcodec.For[[]string]()
	w, err := shuffle.NewCombiningWriter(shuffle.Config{Store: s, Partitions: 1, Memory: shuffle.NewMemory(64 << 10).Task()}, recordcodec.For[string](), lists, agg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 60000
	for i := range n {
		if err := w.Add(0, "k"+strconv.Itoa(i%3), strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if res.Spills == 0 {
		t.Fatal("three growing lists of 20,000 values each never spilled under 64 KiB")
	}
	b, err := s.OpenBlock(0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	total := 0
	for kv, err := range shuffle.Records(shuffleblock.NewReader(b), recordcodec.For[string](), lists) {
		if err != nil {
			t.Fatal(err)
		}
		total += len(kv.Value)
	}
	if total != n {
		t.Fatalf("%d values after the merge, want %d", total, n)
	}
}
