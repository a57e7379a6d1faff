package coarse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

type holdIn struct {
	Dir   string
	Index int
}

// hold records its executor's pid, then blocks until the file "go" exists.
var hold = framework.Register("coarse_test.hold", func(ctx context.Context, in holdIn) (int, error) {
	_ = os.WriteFile(filepath.Join(in.Dir, fmt.Sprintf("pid.%d.%d", in.Index, os.Getpid())), nil, 0o644)
	for {
		if _, err := os.Stat(filepath.Join(in.Dir, "go")); err == nil {
			return in.Index, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
})

// An agent and its executor gone together (a machine or container
// killed): the executor's tasks are lost with their agent, which is not
// their fault (issue 29). With flint.task.maxFailures=1 a counted loss
// would abort the job, and exclusion (on by default) would exclude the
// executor and, after two, the host every agent of the test shares. The
// job finishes instead, with every result and no exclusion.
func TestAgentLossCountsNeitherFailuresNorExclusion(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 2})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=1", "flint.executor.cores=2")
	dir := t.TempDir()
	in := []holdIn{{dir, 0}, {dir, 1}, {dir, 2}, {dir, 3}}
	done := make(chan error, 1)
	var out []int
	go func() {
		var err error
		out, err = framework.Map(context.Background(), r.fc, hold, in)
		done <- err
	}()
	waitFor(t, 30*time.Second, "4 running tasks", func() bool { return countPIDFiles(dir) == 4 })
	execs := r.executors()
	if len(execs) != 2 {
		t.Fatalf("%d executors, want one per agent", len(execs))
	}
	victim := execs[0]
	lost := -1
	for i, a := range c.Agents {
		if a.ID() == victim.agentID {
			lost = i
		}
	}
	if lost < 0 {
		t.Fatalf("no agent %s", victim.agentID)
	}
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Agents[lost].Stop()
	waitFor(t, 30*time.Second, "the lost agent's executor reported", func() bool {
		return strings.Contains(r.logs.String(), "executor "+victim.executorID+" lost")
	})
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("job failed after losing an agent: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("job did not finish within 60 s of losing an agent")
	}
	if !slices.Equal(out, []int{0, 1, 2, 3}) {
		t.Fatalf("results %v, want [0 1 2 3]", out)
	}
	if logs := r.logs.String(); strings.Contains(logs, "excluded") {
		t.Fatalf("an agent's loss excluded something:\n%s", logs)
	}
}

func countPIDFiles(dir string) int {
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "pid.") {
			n++
		}
	}
	return n
}
