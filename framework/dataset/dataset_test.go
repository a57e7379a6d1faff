package dataset_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	_ "github.com/flint-mesos/flint/framework/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func localContext(t *testing.T, kv ...string) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	kv = append([]string{"flint.master", "local[2]"}, kv...)
	for i := 0; i < len(kv); i += 2 {
		if err := cfg.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
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

// result carries a job's outputs out of its body (on the driver only).
type result[T any] struct{ v T }

type wcArgs struct {
	Paths []string
	Parts int
}

var wcOut = map[string]*result[map[string]int64]{}

var wordCountJob = dataset.Job("test.wordcount", func(b *dataset.Builder, a wcArgs) error {
	lines := dataset.TextFile(b, a.Paths...)
	words := dataset.FlatMap(lines, func(l string, yield func(dataset.KV[string, int64])) {
		for _, w := range strings.Fields(l) {
			yield(dataset.KV[string, int64]{Key: w, Value: 1})
		}
	})
	counts := dataset.ReduceByKey(words, func(x, y int64) int64 { return x + y }, a.Parts)
	kvs, err := dataset.Collect(counts)
	if err != nil {
		return err
	}
	if b.Driver() {
		m := map[string]int64{}
		for _, kv := range kvs {
			if _, dup := m[kv.Key]; dup {
				return fmt.Errorf("key %q twice", kv.Key)
			}
			m[kv.Key] = kv.Value
		}
		wcOut[a.Paths[0]] = &result[map[string]int64]{m}
	}
	return nil
})

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWordCountLocal(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	want := map[string]int64{}
	for i := range 5000 {
		w := fmt.Sprintf("w%d", (i*7919)%613)
		text.WriteString(w)
		want[w]++
		if i%11 == 0 {
			text.WriteString("\n")
		} else {
			text.WriteString(" ")
		}
	}
	path := filepath.Join(dir, "in.txt")
	writeFile(t, path, text.String())
	// small splits: many map tasks, lines cut across split boundaries
	fc := localContext(t, "flint.files.maxPartitionBytes", "997")
	if _, err := wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{path}, Parts: 3}); err != nil {
		t.Fatal(err)
	}
	got := wcOut[path].v
	if !maps.Equal(got, want) {
		keys := slices.Sorted(maps.Keys(want))
		for _, k := range keys {
			if got[k] != want[k] {
				t.Fatalf("count of %q = %d, want %d (%d words vs %d)", k, got[k], want[k], len(got), len(want))
			}
		}
		t.Fatalf("got %d words, want %d", len(got), len(want))
	}
	_ = sort.Strings
}
