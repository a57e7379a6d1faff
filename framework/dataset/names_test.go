package dataset_test

import (
	"bufio"
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

// names records job and stage names by job, in submission order.
type names struct {
	mu     sync.Mutex
	jobs   map[int64]string
	stages map[int64][]string
	ended  int
}

func (l *names) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case event.JobStart:
		l.jobs[e.JobID] = e.Name
	case event.StageSubmitted:
		l.stages[e.JobID] = append(l.stages[e.JobID], e.Name)
	case event.JobEnd:
		l.ended++
	}
}

// namedJob's marked lines are where the test expects names to point.
var namedJob = dataset.Job("test.names", func(b *dataset.Builder, dir string) error {
	words := dataset.Parallelize(b, []string{"a", "b", "a", "c"}, 2)
	kv := dataset.Map(words, func(w string) dataset.KV[string, int] { return dataset.KV[string, int]{Key: w, Value: 1} }) // mark:kv
	counts := dataset.ReduceByKey(kv, func(x, y int) int { return x + y }, 2)                                             // mark:reduce
	lines := dataset.Map(counts, func(kv dataset.KV[string, int]) string { return fmt.Sprint(kv.Key, kv.Value) })
	if _, err := dataset.CountByKey(kv); err != nil { // mark:countByKey
		return err
	}
	if err := dataset.SaveAsTextFile(lines, dir); err != nil { // mark:save
		return err
	}
	left := dataset.MapValues(kv, func(v int) int { return v + 1 })                                                  // mark:left
	right := dataset.Map(words, func(w string) dataset.KV[string, bool] { return dataset.KV[string, bool]{Key: w} }) // mark:right
	_, err := dataset.Count(dataset.Join(left, right, 2))                                                            // mark:join
	return err
})

// markedLines finds the "// mark:NAME" comments of this file by reading
// it, so the expected sites do not come from the code under test.
func markedLines(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("names_test.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if _, mark, ok := strings.Cut(sc.Text(), "// mark:"); ok {
			out[mark] = n
		}
	}
	return out
}

// A job is named for its action's call site (CountByKey as countByKey, not
// the collect it runs on); a map stage for the dataset whose records it
// writes to the shuffle, as Spark names a stage by its last RDD's short
// call site (the operation the user called there: the map CountByKey
// builds is countByKey's; the two sides of a join are their own), a
// result stage for the action (issue 23, item 5).
func TestJobsAndStagesAreNamedForTheirCallSites(t *testing.T) {
	fc := localContext(t)
	l := &names{jobs: map[int64]string{}, stages: map[int64][]string{}}
	fc.AddListener(l)
	if _, err := namedJob.Run(context.Background(), fc, filepath.Join(t.TempDir(), "out")); err != nil {
		t.Fatal(err)
	}
	waitfor.True(t, 10*time.Second, "three jobs ended", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.ended == 3 })
	m := markedLines(t)
	at := func(op, mark string) string { return fmt.Sprintf("%s at dataset/names_test.go:%d", op, m[mark]) }
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, want := l.jobs[0], "test.names: "+at("countByKey", "countByKey"); got != want {
		t.Errorf("job 0 is named %q, want %q", got, want)
	}
	if got, want := l.jobs[1], "test.names: "+at("saveAsTextFile", "save"); got != want {
		t.Errorf("job 1 is named %q, want %q", got, want)
	}
	// CountByKey's own map and shuffle are made on the user's line, as
	// Spark names the RDDs an action builds
	if got, want := strings.Join(l.stages[0], " | "), at("countByKey", "countByKey")+" | "+at("countByKey", "countByKey"); got != want {
		t.Errorf("job 0's stages are %q, want %q", got, want)
	}
	if got, want := strings.Join(l.stages[1], " | "), at("map", "kv")+" | "+at("saveAsTextFile", "save"); got != want {
		t.Errorf("job 1's stages are %q, want %q", got, want)
	}
	// a join's map stages are named for their own sides, in either order
	sides := slices.Clone(l.stages[2][:min(2, len(l.stages[2]))])
	slices.Sort(sides)
	want := []string{at("map", "right"), at("mapValues", "left")}
	slices.Sort(want)
	if !slices.Equal(sides, want) || len(l.stages[2]) != 3 || l.stages[2][2] != at("count", "join") {
		t.Errorf("job 2's stages are %q, want the sides %q (either order) then %q", l.stages[2], want, at("count", "join"))
	}
}
