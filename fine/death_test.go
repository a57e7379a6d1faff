package fine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

// die kills its (fine-grained Mesos) executor: a last word on stderr, then
// exit status 3.
var die = framework.Register("fine_test.die", func(context.Context, int) (int, error) {
	fmt.Fprintln(os.Stderr, "FATAL: the disk is on fire")
	os.Exit(3)
	return 0, nil
})

// killed kills its executor with SIGKILL after a last word on stderr.
var killed = framework.Register("fine_test.killed", func(context.Context, int) (int, error) {
	fmt.Fprintln(os.Stderr, "FATAL: out of patience")
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
})

// TestExecutorDeathIsDebuggable: the job error of a task that killed its
// executor names the executor and agent, Mesos' verdict with the exit
// status (from the FAILURE event Mesos sends for the executor), the last
// lines of the executor's stderr and where its sandbox is.
func TestExecutorDeathIsDebuggable(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{agents: 1, workDir: work})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=1")
	_, err := framework.Map(context.Background(), r.fc, die, []int{1})
	var je *framework.JobError
	if !errors.As(err, &je) {
		t.Fatalf("Map = %v, want a JobError", err)
	}
	msg := err.Error()
	for _, want := range []*regexp.Regexp{
		// The description alone: it says what Mesos' status does.
		regexp.MustCompile(`most recent failure: fine: executor flint-fine-\S+ died: it ran on \S+ \(agent \S+-S0\) and ended: Executor terminated; it exited with status 3 \(TASK_FAILED, REASON_EXECUTOR_TERMINATED\)\n`),
		regexp.MustCompile(`\n  last \d+ lines of its stderr:\n(    .*\n)*    FATAL: the disk is on fire\n`),
		regexp.MustCompile(`\n  its sandbox: ` + regexp.QuoteMeta(work) + `\S+/executors/flint-fine-\S+/runs/latest on \S+; print its stderr with: flint mesos logs --master \S+ --framework \S+ --stderr \S+$`),
	} {
		if !want.MatchString(msg) {
			t.Errorf("the job error does not match %s:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "token=") && !strings.Contains(msg, "token=*****") {
		t.Errorf("a fetch token leaked into the error:\n%s", msg)
	}
}

// TestExecutorKilledBySignalIsNamed: an executor killed by a signal is
// reported with the signal, and its stderr's last line.
func TestExecutorKilledBySignalIsNamed(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=1")
	_, err := framework.Map(context.Background(), r.fc, killed, []int{1})
	want := regexp.MustCompile(`: executor flint-fine-\S+ died: it ran on \S+ \(agent \S+-S0\) and ended: Executor terminated; it was killed by signal 9 \(killed\) \(TASK_FAILED, REASON_EXECUTOR_TERMINATED\)\n` +
		`  last \d+ lines of its stderr:\n(    .*\n)*    FATAL: out of patience\n  its sandbox: `)
	if err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("Map = %v\nwant an error matching %s", err, want)
	}
}
