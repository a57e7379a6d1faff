package coarse_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
)

type specArgs struct {
	N   int64
	Dir string // holds "first" (created by partition 0's first attempt) and the FIFO "gate"
}

var specOut = map[string]specResult{}

type specResult struct {
	count int64
	seen  *dataset.Accumulator[int64]
}

// taskEnds counts TaskEnd events (any state) of task index 0.
type taskEnds struct {
	mu    sync.Mutex
	ends  int
	atTwo chan struct{}
}

func (e *taskEnds) OnEvent(ev event.Event) {
	if te, ok := ev.(event.TaskEnd); ok && te.Index == 0 {
		e.mu.Lock()
		if e.ends++; e.ends == 2 {
			close(e.atTwo)
		}
		e.mu.Unlock()
	}
}

// specCount counts records in an accumulator. Partition 0's first
// attempt adds its updates, then blocks reading Dir/gate, so speculation
// launches a copy on the other host; the copy finds Dir/first and runs
// through.
var specCount = dataset.Job("coarse_test.speculated-count", func(b *dataset.Builder, a specArgs) error {
	seen := dataset.Counter(b, "records")
	counted := dataset.MapPartitions(dataset.Range(b, 0, a.N, 4), func(part int, records func(func(int64) bool), yield func(int64)) error {
		records(func(x int64) bool { seen.Add(1); yield(x); return true })
		if part != 0 {
			return nil
		}
		f, err := os.OpenFile(filepath.Join(a.Dir, "first"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			return os.WriteFile(filepath.Join(a.Dir, "copy"), nil, 0o644) // the speculative copy
		}
		if err != nil {
			return err
		}
		f.Close()
		_, err = os.ReadFile(filepath.Join(a.Dir, "gate"))
		return err
	})
	n, err := dataset.Count(counted)
	if err != nil {
		return err
	}
	if b.Driver() {
		specOut[a.Dir] = specResult{n, seen}
	}
	return nil
})

// With speculation on, partition 0 runs twice — both attempts add to the
// accumulator, the first finishing after the copy — and counts once.
func TestDatasetAccumulatorUnderSpeculation(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	startB := hostAgent(t, c, "spec-host-b")
	startB()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.speculation=true", "flint.speculation.interval=20ms",
		"flint.speculation.quantile=0.5", "flint.speculation.minTaskRuntime=0s")
	ends := &taskEnds{atTwo: make(chan struct{})}
	r.fc.AddListener(ends)
	waitFor(t, 20*time.Second, "4 registered executors on 2 hosts", func() bool { return r.fc.DefaultParallelism() == 4 })
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 4000
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := specCount.Run(ctx, r.fc, specArgs{N: n, Dir: dir})
		done <- err
	}()
	err := <-done // the copy succeeded while the first attempt still waits at the gate
	// release the first attempt (opening the write end waits for its reader)
	if w, oerr := os.OpenFile(gate, os.O_WRONLY, 0); oerr == nil {
		w.Close()
	} else {
		t.Error(oerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "copy")); err != nil {
		t.Fatalf("partition 0 ran only once (no speculative copy): %v", err)
	}
	// Both attempts of partition 0 ended (the first one after the job,
	// its late result dropped): the accumulator still counts it once.
	select {
	case <-ends.atTwo:
	case <-ctx.Done():
		t.Fatal("partition 0's first attempt never ended")
	}
	if got := specOut[dir]; got.count != n || got.seen.Value() != n {
		t.Fatalf("count %d, accumulator %d; want %d and %d (each partition once)", got.count, got.seen.Value(), n, n)
	}
}
