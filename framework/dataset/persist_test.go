package dataset_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

type persistArgs struct {
	N        int
	Level    dataset.StorageLevel
	LocalDir string
}

// persistOut is, per level and budget, what the persisted closure computed,
// the cache files seen between the actions, and the second action's
// records.
type persistOut struct {
	computed int64
	files    []string
	got      []string
}

var persistRuns = map[string]*persistOut{}

var persistedTwice = dataset.Job("test.persisted-twice", func(b *dataset.Builder, a persistArgs) error {
	computed := dataset.Counter(b, "computed")
	recs := dataset.Map(dataset.Range(b, 0, int64(a.N), 4), func(x int64) string {
		computed.Add(1)
		return fmt.Sprintf("record %06d of a persisted dataset", x)
	})
	recs = dataset.Persist(recs, a.Level)
	if _, err := dataset.Count(recs); err != nil {
		return err
	}
	var files []string
	if b.Driver() {
		files, _ = filepath.Glob(filepath.Join(a.LocalDir, "*", "cache", "part-*"))
	}
	got, err := dataset.Collect(recs)
	if b.Driver() {
		persistRuns[fmt.Sprint(a)] = &persistOut{computed: computed.Value(), files: files, got: got}
	}
	return err
})

// A persisted dataset is computed once however many actions read it: with
// MemoryAndDisk and a storage budget smaller than the data, its
// partitions are written to the executor's local directory and read back
// from there (the second action's records are exact, the closure ran once
// per record); with a budget that holds them nothing is written; with
// MemoryOnly and the small budget the partitions are not kept and the
// second action recomputes them; with DiskOnly they are written to disk
// whatever the budget.
func TestPersistMemoryAndDiskSpillsWhatDoesNotFit(t *testing.T) {
	const n = 4000
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("record %06d of a persisted dataset", i)
	}
	for _, tc := range []struct {
		level        dataset.StorageLevel
		budget       string
		computed     int64
		filesWritten bool
	}{
		{dataset.MemoryAndDisk, "4k", n, true},
		{dataset.MemoryAndDisk, "64m", n, false},
		{dataset.MemoryOnly, "4k", 2 * n, false},
		{dataset.MemoryOnly, "64m", n, false},
		{dataset.DiskOnly, "4k", n, true},
		{dataset.DiskOnly, "64m", n, true},
	} {
		t.Run(tc.level.String()+"-"+tc.budget, func(t *testing.T) {
			dir := t.TempDir()
			fc := localContext(t, "flint.storage.memory", tc.budget, "flint.local.dir", dir)
			a := persistArgs{N: n, Level: tc.level, LocalDir: dir}
			if _, err := persistedTwice.Run(context.Background(), fc, a); err != nil {
				t.Fatal(err)
			}
			out := persistRuns[fmt.Sprint(a)]
			if !slices.Equal(out.got, want) {
				t.Fatalf("the second action collected %d records, want %d in order (first %q)", len(out.got), n, out.got[:min(1, len(out.got))])
			}
			if out.computed != tc.computed {
				t.Errorf("the persisted closure ran %d times, want %d", out.computed, tc.computed)
			}
			if got := len(out.files) > 0; got != tc.filesWritten {
				t.Errorf("cache files in the local dir between the actions: %v, want written=%v", out.files, tc.filesWritten)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*", "cache", "part-*"))
			if len(left) != 0 {
				t.Errorf("cache files left after the run: %v", left)
			}
		})
	}
}

var manyKeysOut = map[int]map[int64]int64{}

var manyKeys = dataset.Job("test.many-keys", func(b *dataset.Builder, n int) error {
	kvs := dataset.Map(dataset.Range(b, 0, int64(n), 2), func(x int64) dataset.KV[int64, int64] {
		return dataset.KV[int64, int64]{Key: x % 150_001, Value: x}
	})
	sums, err := dataset.Collect(dataset.ReduceByKey(kvs, func(a, b int64) int64 { return a + b }, 3))
	if b.Driver() {
		m := map[int64]int64{}
		for _, kv := range sums {
			m[kv.Key] += kv.Value
		}
		manyKeysOut[n] = m
	}
	return err
})

// A map task with more distinct keys than its front combiner holds
// (65,536) flushes it on the way and the sums are still exact, one
// record per key.
func TestReduceByKeyPastTheFrontCombiner(t *testing.T) {
	const n = 400_000
	if _, err := manyKeys.Run(context.Background(), localContext(t), n); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{}
	for x := range int64(n) {
		want[x%150_001] += x
	}
	got := manyKeysOut[n]
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %d: sum %d, want %d", k, got[k], v)
		}
	}
}

type diskOnlyOut struct {
	computed       []int64 // after each of the three actions
	filesPersisted []string
	filesUnpersist []string
	memUsed        int64
	memParts       int
	first, second  []string
	third          int64
}

var diskOnlyRuns = map[string]*diskOnlyOut{}

// diskOnlyJob persists a dataset DiskOnly, reads it twice, unpersists it
// and counts it again, noting between the actions what the driver's
// process (local mode's executor) holds in memory and on disk.
var diskOnlyJob = dataset.Job("test.disk-only", func(b *dataset.Builder, a persistArgs) error {
	computed := dataset.Counter(b, "computed")
	recs := dataset.Map(dataset.Range(b, 0, int64(a.N), 4), func(x int64) string {
		computed.Add(1)
		return fmt.Sprintf("record %06d on disk", x)
	})
	recs = dataset.Persist(recs, dataset.DiskOnly)
	out := &diskOnlyOut{}
	glob := func() []string {
		files, _ := filepath.Glob(filepath.Join(a.LocalDir, "*", "cache", "part-*"))
		return files
	}
	var err error
	if out.first, err = dataset.Collect(recs); err != nil {
		return err
	}
	if b.Driver() {
		out.computed = append(out.computed, computed.Value())
		out.filesPersisted = glob()
		out.memUsed, out.memParts = dataset.CachedInMemory(b)
	}
	if out.second, err = dataset.Collect(recs); err != nil {
		return err
	}
	if b.Driver() {
		out.computed = append(out.computed, computed.Value())
	}
	recs = dataset.Unpersist(recs)
	if b.Driver() {
		out.filesUnpersist = glob()
	}
	if out.third, err = dataset.Count(recs); err != nil {
		return err
	}
	if b.Driver() {
		out.computed = append(out.computed, computed.Value())
		diskOnlyRuns[a.LocalDir] = out
	}
	return nil
})

// Spark's DistributedSuite "caching on disk" and CacheManagerSuite's
// "get cached rdd" for DiskOnly, in local mode: the partitions are
// computed once (the second action reads them from their files), the
// records are exact, the process's memory store holds none of them (no
// budget used, no partition kept as records, though the budget would
// hold them), a file per partition exists while persisted and none after
// Unpersist, and the next action recomputes them.
func TestPersistDiskOnlyWritesEveryPartitionAndUnpersistDeletesThem(t *testing.T) {
	const n = 4000
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("record %06d on disk", i)
	}
	dir := t.TempDir()
	fc := localContext(t, "flint.storage.memory", "64m", "flint.local.dir", dir)
	a := persistArgs{N: n, Level: dataset.DiskOnly, LocalDir: dir}
	if _, err := diskOnlyJob.Run(context.Background(), fc, a); err != nil {
		t.Fatal(err)
	}
	out := diskOnlyRuns[dir]
	if !slices.Equal(out.first, want) || !slices.Equal(out.second, want) {
		t.Fatalf("collected %d then %d records, want %d in order", len(out.first), len(out.second), n)
	}
	if out.third != n {
		t.Errorf("counted %d after Unpersist, want %d", out.third, n)
	}
	if !slices.Equal(out.computed, []int64{n, n, 2 * n}) {
		t.Errorf("the closure had run %v times after each action, want [%d %d %d]", out.computed, n, n, 2*n)
	}
	if len(out.filesPersisted) != 4 {
		t.Errorf("cache files while persisted: %v, want one per partition (4)", out.filesPersisted)
	}
	if out.memUsed != 0 || out.memParts != 0 {
		t.Errorf("the memory store held %d bytes in %d partitions, want none", out.memUsed, out.memParts)
	}
	if len(out.filesUnpersist) != 0 {
		t.Errorf("cache files after Unpersist: %v, want none", out.filesUnpersist)
	}
}
