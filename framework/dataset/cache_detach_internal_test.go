package dataset

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/flint-mesos/flint/framework/dataset/internal/detach"
	"github.com/flint-mesos/flint/framework/recordcodec"
)

// cachedLines runs partition 0 of a MemoryOnly node of n lines, each a
// string over buf as TextFile's are, in batches of 100, through the cache
// with the given storage budget, and returns the records it emitted and
// whether the partition was kept.
func cachedLines(t *testing.T, buf []byte, n int, budget int64) ([]string, bool) {
	t.Helper()
	whole := unsafe.String(&buf[0], len(buf))
	lines := strings.SplitN(whole, "\n", n+1)[:n]
	node := &tnode[string]{nodeInfo: nodeInfo{id: "lines", parts: 1, storage: MemoryOnly}}
	node.compute = func(tc *taskContext, p int, emit func([]string) error) error {
		for i := 0; i < n; i += 100 {
			if err := emit(lines[i:min(n, i+100)]); err != nil {
				return err
			}
		}
		return nil
	}
	tc := &taskContext{ctx: context.Background(), env: &taskEnv{runID: "run", state: newState()}, storage: budget}
	var got []string
	err := runCached(tc, node, 0, func(b []string) error {
		got = append(got, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, kept := tc.env.state.cache.m[cacheKey{run: "run", node: "lines", part: 0}]
	return got, kept
}

// inBuf counts the strings of ss whose bytes are buf's.
func inBuf(ss []string, buf []byte) int {
	lo := uintptr(unsafe.Pointer(&buf[0]))
	k := 0
	for _, s := range ss {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); len(s) > 0 && p >= lo && p < lo+uintptr(len(buf)) {
			k++
		}
	}
	return k
}

// A partition kept in memory holds copies of its strings, not the buffer
// they were cut from; a partition over the budget is handed on as computed,
// its records not copied (only the kept path pays).
func TestCacheDetachesOnlyKeptRecords(t *testing.T) {
	const n = 1000
	buf := []byte(strings.Repeat("a line of text\n", n))
	got, kept := cachedLines(t, buf, n, 64<<20)
	if !kept || len(got) != n || got[n-1] != "a line of text" {
		t.Fatalf("within the budget: kept=%v, %d records (last %q), want kept, %d", kept, len(got), got[len(got)-1], n)
	}
	if k := inBuf(got, buf); k != 0 {
		t.Errorf("within the budget: %d of %d kept records still share the reader's buffer", k, n)
	}
	got, kept = cachedLines(t, buf, n, 1)
	if kept || len(got) != n {
		t.Fatalf("over the budget: kept=%v, %d records, want not kept, %d", kept, len(got), n)
	}
	if k := inBuf(got, buf); k != n {
		t.Errorf("over the budget: %d of %d records handed on share the reader's buffer, want all (not copied)", k, n)
	}
}

// A map task's front combiner keeps copies of the keys it holds until its
// flush, not the lines they were cut from: a word of a TextFile line would
// keep the line's 256 KiB chunk, and rare words spread through a task's
// input would keep all of its chunks.
func TestPrecombinerDetachesItsKeys(t *testing.T) {
	buf := []byte(strings.Repeat("alpha beta gamma delta\n", 64))
	text := unsafe.String(&buf[0], len(buf))
	var in []KV[string, int64]
	for _, w := range strings.Fields(text) {
		in = append(in, KV[string, int64]{Key: w, Value: 1})
	}
	if inBuf([]string{in[0].Key}, buf) != 1 {
		t.Fatal("the test's keys are not over its buffer")
	}
	p := wordPrecombiner(detach.For[string]())
	if err := p.add(in); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range p.entries {
		keys = append(keys, e.key)
		if e.c != 64 {
			t.Errorf("%q combined to %d, want 64", e.key, e.c)
		}
	}
	for k := range p.idx {
		keys = append(keys, k)
	}
	if len(keys) != 8 {
		t.Fatalf("keys %q, want 4 entries and 4 index keys", keys)
	}
	if n := inBuf(keys, buf); n != 0 {
		t.Errorf("%d of the combiner's keys still point into the input's buffer", n)
	}
}

// wordPrecombiner is a word count's front combiner (no writer: the test
// does not flush), with detachKey as given.
func wordPrecombiner(detachKey func([]string)) *precombiner[string, int64, int64] {
	add := func(x, y int64) int64 { return x + y }
	return &precombiner[string, int64, int64]{agg: Aggregator[int64, int64]{CreateCombiner: func(v int64) int64 { return v }, MergeValue: add, MergeCombiners: add},
		keys: recordcodec.For[string](), part: HashPartitioner(4), idx: map[string]int32{}, detachKey: detachKey}
}
