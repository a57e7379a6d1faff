package dataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

type sparseArgs struct {
	Path  string
	Every int
	Level dataset.StorageLevel
}

// sparseOut is what the sparse persisted filter kept: the live heap it
// added, the storage budget it took, and its records read back.
type sparseOut struct {
	grew    int64
	memUsed int64
	got     []string
}

var sparseRuns = map[string]*sparseOut{}

// sparsePersist persists every a.Every-th line of a TextFile and notes,
// between the action that fills the cache and the one that reads it, the
// live heap it added (the local executor's cache is in this process).
var sparsePersist = dataset.Job("test.sparse-persist", func(b *dataset.Builder, a sparseArgs) error {
	kept := dataset.Filter(dataset.TextFile(b, a.Path), func(l string) bool {
		n, err := strconv.Atoi(l[:7])
		return err == nil && n%a.Every == 0
	})
	kept = dataset.Persist(kept, a.Level)
	out := &sparseOut{}
	before := liveHeap()
	if _, err := dataset.Count(kept); err != nil {
		return err
	}
	if b.Driver() {
		out.grew = liveHeap() - before
		out.memUsed, _ = dataset.CachedInMemory(b)
		sparseRuns[fmt.Sprint(a)] = out
	}
	var err error
	out.got, err = dataset.Collect(kept)
	return err
})

// liveHeap is the bytes of live heap objects after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// Persisting a sparse filter of a TextFile keeps memory in proportion to
// the lines kept, not to the 256 KiB chunks they were read into: 122 lines
// (13 KB with their headers) of 32 MiB kept 32 MB live before the cache
// detached its records (each line in its own chunk); now the heap grows by
// tens of KB, well under the 8 MiB asserted, the storage budget counts about
// the kept bytes, and the records read back are exact.
func TestPersistedSparseTextFileKeepsOnlyItsLines(t *testing.T) {
	const size, every = 32 << 20, 3000
	pad := " " + strings.Repeat("x", 83) + "\n"
	body := make([]byte, 0, size+len(pad)+7)
	var want []string
	for i := 0; len(body) < size; i++ {
		start := len(body)
		body = append(fmt.Appendf(body, "%07d", i), pad...)
		if i%every == 0 {
			want = append(want, string(body[start:len(body)-1]))
		}
	}
	path := filepath.Join(t.TempDir(), "lines.txt")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, level := range []dataset.StorageLevel{dataset.MemoryOnly, dataset.MemoryAndDisk} {
		t.Run(level.String(), func(t *testing.T) {
			a := sparseArgs{Path: path, Every: every, Level: level}
			if _, err := sparsePersist.Run(context.Background(), localContext(t), a); err != nil {
				t.Fatal(err)
			}
			out := sparseRuns[fmt.Sprint(a)]
			if !slices.Equal(out.got, want) {
				t.Fatalf("read back %d lines, want %d in order", len(out.got), len(want))
			}
			keptBytes := int64(len(want) * (len(want[0]) + 16))
			if out.grew > 8<<20 {
				t.Errorf("persisting %d lines (%d bytes with their headers) grew the live heap by %d bytes, want < 8 MiB: the lines keep their chunks", len(want), keptBytes, out.grew)
			}
			if out.memUsed < keptBytes/2 || out.memUsed > 2*keptBytes {
				t.Errorf("the storage budget counts %d bytes, want about the %d kept", out.memUsed, keptBytes)
			}
			t.Logf("%d lines kept (%d bytes with their headers): live heap +%d bytes, budget %d bytes", len(want), keptBytes, out.grew, out.memUsed)
		})
	}
}
