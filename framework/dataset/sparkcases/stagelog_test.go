package sparkcases_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// stageLog records the stages every job of a Context submitted, so a case
// can check that an operation added no shuffle: an action over a dataset
// with s shuffles in its lineage runs s+1 stages, less the map stages an
// earlier action of the run computed (skipped, as in Spark).
// One is installed per Context, the first time a case asks for it; it only
// records, so the shared Context runs every later case as before.
type stageLog struct {
	mu     sync.Mutex
	jobs   []int64 // in the order they started
	names  map[int64]string
	stages map[int64]map[int]bool
	ended  map[int64]bool
}

func (l *stageLog) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case event.JobStart:
		l.jobs = append(l.jobs, e.JobID)
		l.names[e.JobID] = e.Name
	case event.JobEnd:
		l.ended[e.JobID] = true
	case event.StageSubmitted:
		if l.stages[e.JobID] == nil {
			l.stages[e.JobID] = map[int]bool{}
		}
		l.stages[e.JobID][e.StageID] = true
	}
}

var stageLogs = struct {
	sync.Mutex
	m map[*framework.Context]*stageLog
}{m: map[*framework.Context]*stageLog{}}

// stagesOf is fc's stage log.
func stagesOf(fc *framework.Context) *stageLog {
	stageLogs.Lock()
	defer stageLogs.Unlock()
	l := stageLogs.m[fc]
	if l == nil {
		l = &stageLog{names: map[int64]string{}, stages: map[int64]map[int]bool{}, ended: map[int64]bool{}}
		fc.AddListener(l)
		stageLogs.m[fc] = l
	}
	return l
}

// mark is where the next job will be in the log.
func (l *stageLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.jobs)
}

// since is, for each job of the registered job named job started after
// mark, "action stages" ("collect 2"): the action the job ran and how
// many stages it submitted. The bus delivers events in order but after
// the job returns, so it waits until n such jobs have ended.
func (l *stageLog) since(t *testing.T, mark int, job string, n int) []string {
	t.Helper()
	var out []string
	collect := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		out = out[:0]
		ended := 0
		for _, id := range l.jobs[mark:] {
			name, ok := strings.CutPrefix(l.names[id], job+": ")
			if !ok {
				continue
			}
			if l.ended[id] {
				ended++
			}
			action, _, _ := strings.Cut(name, " ")
			out = append(out, fmt.Sprintf("%s %d", action, len(l.stages[id])))
		}
		return ended >= n
	}
	waitfor.True(t, 30*time.Second, fmt.Sprintf("%d jobs of %s ended", n, job), collect)
	return out
}
