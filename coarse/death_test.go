package coarse_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

// die kills its executor the way a crashing program does: a last word on
// stderr, then exit status 3.
var die = framework.Register("coarse_test.die", func(context.Context, int) (int, error) {
	fmt.Fprintln(os.Stderr, "FATAL: the disk is on fire")
	os.Exit(3)
	return 0, nil
})

// TestExecutorDeathIsDebuggable: when a task kills its executor, the job's
// error says which executor died on which agent, the exit status from the
// Mesos status, the last lines of its stderr (read through the agent's
// /files/read) and where the sandbox is.
func TestExecutorDeathIsDebuggable(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{agents: 1, workDir: work})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=1", "flint.executor.cores=1")
	_, err := framework.Map(context.Background(), r.fc, die, []int{1})
	var je *framework.JobError
	if !errors.As(err, &je) {
		t.Fatalf("Map = %v, want a JobError", err)
	}
	msg := err.Error()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`most recent failure: executor \d+ lost: it ran on \S+ \(agent \S+-S0\) and ended: Command exited with status 3 \(TASK_FAILED, REASON_COMMAND_EXECUTOR_FAILED\)\n`),
		regexp.MustCompile(`\n  last \d+ lines of its stderr:\n(    .*\n)*    FATAL: the disk is on fire\n`),
		regexp.MustCompile(`\n  its sandbox: (\S+/executors/\d+/runs/latest) on \S+; print its stderr with: flint mesos logs --master 127\.0\.0\.1:\d+ --framework \S+ --stderr \d+$`),
	} {
		if !want.MatchString(msg) {
			t.Errorf("the job error does not match %s:\n%s", want, msg)
		}
	}
	m := regexp.MustCompile(`its sandbox: (\S+) on`).FindStringSubmatch(msg)
	if m == nil || !strings.HasPrefix(m[1], work) {
		t.Fatalf("sandbox %v is not under the agents' work dir %s", m, work)
	}
	b, err := os.ReadFile(filepath.Join(m[1], "stderr"))
	if err != nil || !strings.Contains(string(b), "FATAL: the disk is on fire\n") {
		t.Errorf("the sandbox named holds no such stderr: %v %q", err, b)
	}
	if strings.Contains(msg, "token=") && !strings.Contains(msg, "token=*****") {
		t.Errorf("a fetch token leaked into the error:\n%s", msg)
	}
}
