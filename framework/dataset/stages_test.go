package dataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// jobStages records, per job, the stages submitted and completed.
type jobStages struct {
	mu        sync.Mutex
	submitted map[int64][]int
	completed []int
	jobs      int
}

func (l *jobStages) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		l.submitted[e.JobID] = append(l.submitted[e.JobID], e.StageID)
	case event.StageCompleted:
		if e.FailureReason == "" {
			l.completed = append(l.completed, e.StageID)
		}
	case event.JobEnd:
		l.jobs++
	}
}

var twoActionsOut = map[int]*result[[2]int64]{}

// twoActions runs two actions over one shuffled dataset.
var twoActions = dataset.Job("test.two-actions", func(b *dataset.Builder, n int) error {
	kv := dataset.KeyBy(dataset.Range(b, 0, int64(n), 4), func(x int64) int64 { return x % 7 })
	sums := dataset.ReduceByKey(kv, func(x, y int64) int64 { return x + y }, 3)
	c, err := dataset.Count(sums)
	if err != nil {
		return err
	}
	total, _, err := dataset.Reduce(dataset.Values(sums), func(x, y int64) int64 { return x + y })
	if b.Driver() {
		twoActionsOut[n] = &result[[2]int64]{[2]int64{c, total}}
	}
	return err
})

// Map stages live in the Context's DAG core: the second action over the
// same shuffle runs only its result stage (Spark's skipped stages), and
// the result is still exact.
func TestASecondActionSkipsTheMapStage(t *testing.T) {
	fc := localContext(t)
	l := &jobStages{submitted: map[int64][]int{}}
	fc.AddListener(l)
	if _, err := twoActions.Run(context.Background(), fc, 1000); err != nil {
		t.Fatal(err)
	}
	if got, want := twoActionsOut[1000].v, [2]int64{7, 999 * 1000 / 2}; got != want {
		t.Fatalf("count and sum %v, want %v", got, want)
	}
	waitfor.True(t, 10*time.Second, "two jobs ended", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.jobs == 2 })
	l.mu.Lock()
	defer l.mu.Unlock()
	if first, second := l.submitted[0], l.submitted[1]; len(first) != 2 || len(second) != 1 || slices.Contains(first, second[0]) {
		t.Fatalf("stages submitted by job 0: %v, by job 1: %v; want the map stage and a result stage, then only a new result stage", first, second)
	}
	if len(l.completed) != 3 {
		t.Fatalf("completed stages %v, want 3 (the map stage once)", l.completed)
	}
}

var lostOut = map[string]*result[[3]int64]{}

// lostFiles counts words, then deletes every map output file under the
// local dir on the driver (as if the disk lost them) and reads the same
// shuffle again.
var lostFiles = dataset.Job("test.lost-files", func(b *dataset.Builder, localDir string) error {
	mapped := dataset.Counter(b, "mapped")
	kv := dataset.Map(dataset.Range(b, 0, 1000, 4), func(x int64) dataset.KV[int64, int64] {
		mapped.Add(1)
		return dataset.KV[int64, int64]{Key: x % 10, Value: x}
	})
	sums := dataset.ReduceByKey(kv, func(x, y int64) int64 { return x + y }, 3)
	n, err := dataset.Count(sums)
	if err != nil {
		return err
	}
	if b.Driver() {
		files, _ := filepath.Glob(filepath.Join(localDir, "flint-shuffle-*", "shuffle_*", "*.data"))
		if len(files) != 4 {
			return fmt.Errorf("found %d map outputs under %s, want 4", len(files), localDir)
		}
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	total, _, err := dataset.Reduce(dataset.Values(sums), func(x, y int64) int64 { return x + y })
	if b.Driver() {
		lostOut[localDir] = &result[[3]int64]{[3]int64{n, total, mapped.Value()}}
	}
	return err
})

// Lost map outputs are fetch failures for the driver's DAG core: it
// recomputes them and resubmits the reading stage, and the failure does
// not count toward flint.task.maxFailures (1 here: any counted failure
// would abort the job). The map stage's accumulator applies its updates
// again for the recomputed outputs (Spark's rule for transformations).
func TestLostMapOutputsAreRecomputedNotCounted(t *testing.T) {
	dir := t.TempDir()
	fc := localContext(t, "flint.local.dir", dir, "flint.task.maxFailures", "1")
	l := &jobStages{submitted: map[int64][]int{}}
	fc.AddListener(l)
	failed := &stageFailures{}
	fc.AddListener(failed)
	if _, err := lostFiles.Run(context.Background(), fc, dir); err != nil {
		t.Fatal(err)
	}
	if got, want := lostOut[dir].v, [3]int64{10, 999 * 1000 / 2, 2000}; got != want {
		t.Fatalf("count, sum and mapped records %v, want %v (the map stage ran twice)", got, want)
	}
	waitfor.True(t, 10*time.Second, "two jobs ended", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.jobs == 2 })
	failed.mu.Lock()
	defer failed.mu.Unlock()
	if len(failed.reasons) == 0 || !strings.Contains(failed.reasons[0], "fetch") {
		t.Fatalf("failed stages %q, want the reading stage failed by a fetch failure", failed.reasons)
	}
}

type stageFailures struct {
	mu      sync.Mutex
	reasons []string
}

func (s *stageFailures) OnEvent(e event.Event) {
	if sc, ok := e.(event.StageCompleted); ok && sc.FailureReason != "" {
		s.mu.Lock()
		s.reasons = append(s.reasons, sc.FailureReason)
		s.mu.Unlock()
	}
}
