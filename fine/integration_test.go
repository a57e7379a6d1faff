package fine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

const envDriver = "FINE_TEST_DRIVER"

func TestExamplesInFineMode(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, r.fc, 16, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi estimate %f too far from π", est)
	}
	// wordcount over datasets: executors read the file, a shuffle between
	// them (map-side combined), results checked against a direct count.
	in := filepath.Join(t.TempDir(), "in.txt")
	text := strings.Repeat("the quick brown fox jumps over the lazy dog the end\nthe fox\n", 50)
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := wordcount.Count(ctx, r.fc, wordcount.Options{Paths: []string{in}, Top: 3, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[{the 200} {fox 100} {brown 50}]"; fmt.Sprint(res.Top) != want || res.Words != 650 || res.Distinct != 9 {
		t.Fatalf("word counts %+v, want top %s of 650 words, 9 distinct", res, want)
	}
	// sort, join and PageRank on the executors, checked exactly
	examplecheck.All(ctx, t, r.fc)
	// One executor process per agent, reused by every task.
	if n := len(executors(r.mark)); n < 1 || n > 2 {
		t.Fatalf("%d executor processes, want one per agent used (1 or 2)", n)
	}
	// The agents' fetcher wrote each executor's fetch URL into its sandbox;
	// the credential in it died when the executor sent its first update.
	mesostest.CheckCredentialsDead(t, work)
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	checkNoOrphans(t, r.mark)
	if logs := r.logs.String(); regexp.MustCompile(`token=[0-9A-Za-z_-]{16}`).MatchString(logs) {
		t.Fatalf("the file server token was logged")
	}
}

func TestManyTasksAndLargeResults(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(300))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	// 3 MiB results exceed the inline limit: fetched from the executors.
	res, err := framework.Map(ctx, r.fc, big, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res {
		if len(b) != 3<<20 || b[0] != byte(i+1) || b[len(b)-1] != byte(i+1) {
			t.Fatalf("result %d: %d bytes starting %d", i, len(b), b[0])
		}
	}
}

// An executor whose binary does not have the SHA-256 the driver expects
// does not register: it exits with status 65 and says why on stderr, and
// the driver reports that cause.
func TestExecutorRefusesMismatchedBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c), "flint.executor.uri="+self, "flint.mesos.executor.command=./"+filepath.Base(self),
		"flint.executor.sha256="+strings.Repeat("0", 64), "flint.task.maxFailures=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, r.fc, double, ints(1)); err == nil || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the job to fail (not the test's deadline)", err)
	}
	waitFor(t, 10*time.Second, "the driver to report the failed check", func() bool {
		return strings.Contains(r.logs.String(), "exited: its binary failed the SHA-256 check (exit status 65)")
	})
	if n := mesostest.SandboxesContaining(t, work, "binary SHA-256 mismatch", "the driver expects "+strings.Repeat("0", 64)); n == 0 {
		t.Fatal("no sandbox's stderr says why the executor refused to run")
	}
}

// The master removes the framework mid-job (its stream dropped with
// flint.mesos.failoverTimeout=0, so the re-subscription is refused): the
// running job fails at once naming the removal, and so does a later job —
// neither waits for flint.mesos.fine.noFitTimeout (set far beyond the
// test's wait).
func TestFrameworkRemovedFailsJobsAtOnce(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.mesos.failoverTimeout=0s", "flint.mesos.fine.noFitTimeout=1h")
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	in := make([]int, 100)
	for i := range in {
		in[i] = 200
	}
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, sleepy, in)
		done <- err
	}()
	waitfor.True(t, 20*time.Second, "an executor to start", func() bool { return strings.Contains(r.logs.String(), "starting executor") })
	if err := c.Master.Faults().DropFrameworkStream(m[1]); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the job still runs 30s after the master removed the framework")
	}
	if !errors.Is(err, framework.ErrBackendAborted) || !strings.Contains(err.Error(), "ended the framework") {
		t.Fatalf("job error = %v, want an abort naming the framework's removal", err)
	}
	_, err = framework.Map(context.Background(), r.fc, double, []int{1, 2})
	if !errors.Is(err, framework.ErrBackendAborted) || !strings.Contains(err.Error(), "ended the framework") {
		t.Fatalf("a later job's error = %v, want an abort naming the framework's removal", err)
	}
}

// With default settings (fine mode selected), pi and wordcount succeed on
// a cluster that allocates and fetches as Apache Mesos does, and no fetch
// credential in the sandboxes opens anything afterwards.
func TestExamplesWithDefaultsOnAMesosFaithfulCluster(t *testing.T) {
	work := t.TempDir()
	c := mesostest.FaithfulCluster(t, work)
	mesostest.ExamplesWithDefaults(t, mesosURL(c), func() { mesostest.CheckCredentialsDead(t, work) }, "flint.mesos.coarse=false")
}
