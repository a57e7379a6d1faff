package coarse_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

func mesosURL(c interface{ URL() string }) string {
	return "mesos://" + strings.TrimPrefix(c.URL(), "http://")
}

func TestExamplesOnMesos(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, r.fc, 8, 20000)
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
	// Four 1-core executors on two 2-cpu agents, each a real process.
	waitFor(t, 10*time.Second, "4 registered executors", func() bool { return r.fc.DefaultParallelism() == 4 })
	procs := r.executors()
	if n := len(procs); n != 4 {
		t.Fatalf("%d executor processes, want 4", n)
	}
	for _, p := range procs { // flint.executor.memory=64m (baseConf)
		if len(p.certPin) != 64 {
			t.Fatalf("executor %s has no certificate pin: the stream must be TLS by default", p.executorID)
		}
		if p.memLimit != "64MiB" {
			t.Fatalf("executor %s runs with GOMEMLIMIT %q, want 64MiB", p.executorID, p.memLimit)
		}
	}
	// The agents' fetcher wrote each executor's fetch URL into its sandbox;
	// the credential in it died when the executor registered.
	mesostest.CheckCredentialsDead(t, work)
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	r.checkNoOrphans(t)
	if logs := r.logs.String(); regexp.MustCompile(`token=[0-9a-f]{16}`).MatchString(logs) {
		t.Fatalf("the file server token was logged")
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
		"flint.executor.sha256="+strings.Repeat("0", 64), "flint.mesos.coarse.noExecutorTimeout=1s", "flint.mesos.executor.maxFailuresPerAgent=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, r.fc, double, ints(2)); !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it", err)
	}
	if logs := r.logs.String(); !strings.Contains(logs, "Command exited with status 65: its binary failed the SHA-256 check") {
		t.Fatalf("the driver does not report the failed check")
	}
	if n := mesostest.SandboxesContaining(t, work, "binary SHA-256 mismatch", "the driver expects "+strings.Repeat("0", 64)); n == 0 {
		t.Fatal("no sandbox's stderr says why the executor refused to run")
	}
}

func TestTaskFailuresAreRetried(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.task.maxFailures=4", "flint.excludeOnFailure.enabled=false")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	in := make([]flakyIn, 6)
	for i := range in {
		in[i] = flakyIn{Dir: dir, Index: i, Fails: 2}
	}
	out, err := framework.Map(ctx, r.fc, flaky, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != i {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	_, err = framework.Map(ctx, r.fc, fail, []int{7})
	var je *framework.JobError
	if !errors.As(err, &je) || !strings.Contains(je.Message, "task 7 always fails") {
		t.Fatalf("always-failing job: err = %v, want a JobError with the task's message", err)
	}
}

// finishes counts TaskEnd FINISHED events per task index.
type finishes struct {
	mu      sync.Mutex
	per     map[int]int
	n       int
	waiters map[int]chan struct{} // closed once n reaches the key
}

func (f *finishes) OnEvent(e event.Event) {
	if te, ok := e.(event.TaskEnd); ok && te.State == "FINISHED" {
		f.mu.Lock()
		f.per[te.Index]++
		f.n++
		for k, ch := range f.waiters {
			if f.n >= k {
				close(ch)
				delete(f.waiters, k)
			}
		}
		f.mu.Unlock()
	}
}

// atLeast is closed once k tasks finished.
func (f *finishes) atLeast(k int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n >= k {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if f.waiters == nil {
		f.waiters = map[int]chan struct{}{}
	}
	if _, ok := f.waiters[k]; !ok {
		f.waiters[k] = make(chan struct{})
	}
	return f.waiters[k]
}

// await waits for the event of k tasks finished while the job (done) runs
// — an event, not a time: the bound only catches a hang, however loaded
// the machine.
func (f *finishes) await(t *testing.T, k int, done <-chan error) {
	t.Helper()
	select {
	case <-f.atLeast(k):
	case err := <-done:
		t.Fatalf("the job ended (err %v) before %d tasks finished", err, k)
	case <-time.After(3 * time.Minute):
		t.Fatalf("%d tasks did not finish within 3 minutes (%d did)", k, f.total())
	}
}

func (f *finishes) count(index int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.per[index]
}

func (f *finishes) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.per {
		n += c
	}
	return n
}

func TestExecutorKilledMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	const n = 40
	done := make(chan error, 1)
	var out []int
	go func() {
		var err error
		out, err = framework.Map(context.Background(), r.fc, nap, ints(n))
		done <- err
	}()
	fin.await(t, 4, done)
	procs := r.executors()
	if len(procs) == 0 {
		t.Fatal("no executor process found")
	}
	victim := procs[0]
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed after executor %s was killed: %v", victim.executorID, err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("result %d = %d, want %d", i, v, 2*i)
		}
	}
	fin.await(t, n, nil) // the job ended; its events may still be on their way
	// Stop ends the application and delivers every queued event: no
	// duplicate can arrive after it.
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	fin.mu.Lock()
	defer fin.mu.Unlock()
	for i := 0; i < n; i++ {
		if fin.per[i] != 1 {
			t.Fatalf("task %d finished %d times, want exactly once", i, fin.per[i])
		}
	}
	if !strings.Contains(r.logs.String(), "executor "+victim.executorID+" lost") {
		t.Fatalf("executor %s's loss was not reported", victim.executorID)
	}
}

func TestAgentLostMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(40))
		done <- err
	}()
	fin.await(t, 4, done)
	agentID := r.executors()[0].agentID
	doomed := map[string]bool{}
	for _, p := range r.executors() {
		if p.agentID == agentID {
			doomed[p.executorID] = true
		}
	}
	if err := c.Master.Faults().RemoveAgent(agentID, false); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed after agent %s was lost: %v", agentID, err)
	}
	// The lost agent's executors were told to stop. (The agent process is
	// alive and may re-register: executors started there afterwards are new
	// ones, and a removal by the master does not count against the agent.)
	waitFor(t, 2*time.Minute, "executors of the lost agent to exit", func() bool {
		for _, p := range r.executors() {
			if doomed[p.executorID] {
				return false
			}
		}
		return true
	})
}

// A master nobody listens for: NewContext gives up with mesosconn's
// start timeout, naming the master and the setting to raise. (How long it
// waits is tested exactly on a fake clock by mesosconn
// TestUnreachableMasterStartTimeout.)
func TestUnreachableMaster(t *testing.T) {
	_, err := newRun(t, "mesos://127.0.0.1:1", "flint.mesos.connectTimeout=2s")
	if !errors.Is(err, mesosconn.ErrStartTimeout) {
		t.Fatalf("NewContext against a closed port: %v, want mesosconn.ErrStartTimeout", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "within 2s") || !strings.Contains(msg, "flint.mesos.connectTimeout") {
		t.Fatalf("error %q does not name the master, the 2s timeout and the setting", err)
	}
}

func TestAuthenticationRefused(t *testing.T) {
	c := startCluster(t, clusterOpts{master: func(mc *master.Config) { mc.Credentials = map[string]string{"flint": "right"} }})
	_, err := newRun(t, mesosURL(c), "flint.mesos.principal=flint", "flint.mesos.secret=wrong")
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "auth") {
		t.Fatalf("err = %v, want an authentication error", err)
	}
	r := mustRun(t, mesosURL(c), "flint.mesos.principal=flint", "flint.mesos.secret=right")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, r.fc, double, ints(4)); err != nil {
		t.Fatal(err)
	}
}

func TestNoOfferFitsNamesTheResource(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.memory=100g", "flint.mesos.coarse.noExecutorTimeout=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := framework.Map(ctx, r.fc, double, ints(2))
	if !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it (not the test's deadline)", err)
	}
	if !strings.Contains(err.Error(), "no executor could be started") || !strings.Contains(err.Error(), "mem 1024 MiB < 102432 MiB needed") {
		t.Fatalf("job error does not name the short memory: %v", err)
	}
}

func TestExecutorCrashingAtStartExcludesAgents(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.mesos.executor.command=/bin/false", "flint.mesos.coarse.noExecutorTimeout=1s",
		"flint.mesos.executor.maxFailuresPerAgent=2")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := framework.Map(ctx, r.fc, double, ints(2)); !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it", err)
	}
	logs := r.logs.String()
	for _, want := range []string{"excluded for", "last executor failure", "Command exited with status 1"} {
		if !strings.Contains(logs, want) {
			t.Fatalf("logs lack %q", want)
		}
	}
}

// The master drops the framework's stream mid-job (as a master failover
// does): the backend re-subscribes with the same framework id, keeps its
// executors, and the job finishes.
func TestSubscriptionDroppedMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.mesos.failoverTimeout=60s")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(30))
		done <- err
	}()
	fin.await(t, 4, done)
	// Every executor (one per cpu: 2 agents × 2) registered before the
	// drop, so that all are counted before it: counting while some were
	// still starting made later registrations look like new executors
	// (2 before, 4 after, under load).
	waitFor(t, 20*time.Second, "all four executors to register", func() bool {
		return strings.Count(r.logs.String(), "registered from") == 4 && len(r.executors()) == 4
	})
	before := len(r.executors())
	if err := c.Master.Faults().DropFrameworkStream(m[1]); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed after the stream was dropped: %v", err)
	}
	waitFor(t, 10*time.Second, "re-registration", func() bool {
		return strings.Contains(r.logs.String(), "re-registered with the Mesos master at") && strings.Contains(r.logs.String(), m[1])
	})
	if after := len(r.executors()); after != before {
		t.Fatalf("%d executors before the drop, %d after: executors should survive re-subscription", before, after)
	}
}

// reregisterAsMesos gives agents a minute to re-register with a restarted
// master, as Mesos' --agent_reregister_timeout does (10 minutes by default):
// until then the master does not answer explicit reconciliation of their
// tasks. The test clusters' default window (five 200 ms pings) is shorter
// than re-registration takes on a loaded machine, and a reconciliation
// answered after it says TASK_LOST for executors that are still starting,
// so the driver replaced them and the restart tests failed under load.
func reregisterAsMesos(mc *master.Config) { mc.AgentReregisterTimeout = time.Minute }

// The master restarts mid-job (a Mesos master failover: same id and
// address, no state): agents re-register with the executors they run, the
// framework re-subscribes with its id, the executors keep serving the
// driver, and the job finishes with every task exactly once.
func TestMasterRestartedMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{master: reregisterAsMesos})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.mesos.failoverTimeout=60s", "flint.mesos.checkpoint=true")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	const n = 80
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(n))
		done <- err
	}()
	// Every executor (one per cpu: 2 agents × 2) registered before the
	// restart, so that all of them are counted before it; counting while
	// some were still starting made later registrations look like new
	// executors.
	waitFor(t, 20*time.Second, "all four executors to register", func() bool {
		return strings.Count(r.logs.String(), "registered from") == 4 && len(r.executors()) == 4
	})
	before := len(r.executors())
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job failed across the master restart: %v", err)
	}
	waitFor(t, 15*time.Second, "re-subscription to the restarted master", func() bool {
		return strings.Contains(r.logs.String(), "re-registered with the Mesos master at") && strings.Contains(r.logs.String(), m[1])
	})
	if after := len(r.executors()); after != before {
		t.Fatalf("%d executors before the restart, %d after: they should survive it", before, after)
	}
	fin.await(t, n, nil) // the job ended; its events may still be on their way
	for i := 0; i < n; i++ {
		if c := fin.count(i); c != 1 {
			t.Fatalf("task %d finished %d times, want exactly once", i, c)
		}
	}
	checkNoLaunchStorm(t, r.logs.String())
}

var launchLine = regexp.MustCompile(`coarse: launching executor \d+ on \S+ \(agent (\S+)\)`)

// checkNoLaunchStorm fails t if the driver's logs show a launch refused
// for resources the agent does not have, or more than one executor launch
// per cpu on an agent (2 agents × 2 cpus, flint.executor.cores=1).
func checkNoLaunchStorm(t *testing.T, logs string) {
	t.Helper()
	if n := strings.Count(logs, "outdated resource state"); n > 0 {
		t.Errorf("%d launches refused for resources the restarted master offered while in use", n)
	}
	perAgent := map[string]int{}
	for _, m := range launchLine.FindAllStringSubmatch(logs, -1) {
		perAgent[m[1]]++
	}
	if len(perAgent) != 2 {
		t.Fatalf("launches on agents %v, want both", perAgent)
	}
	for agent, n := range perAgent {
		if n > 2 {
			t.Errorf("agent %s: %d executor launches, want at most one per cpu (2)", agent, n)
		}
	}
}

// The master removes the framework mid-job (its stream dropped with
// flint.mesos.failoverTimeout=0, so the re-subscription is refused): the
// running job fails at once naming the removal, and so does a job
// submitted afterwards — neither waits for
// flint.mesos.coarse.noExecutorTimeout (set far beyond the test's wait).
func TestFrameworkRemovedFailsJobsAtOnce(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.mesos.failoverTimeout=0s", "flint.mesos.coarse.noExecutorTimeout=1h")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(200))
		done <- err
	}()
	fin.await(t, 2, done)
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
	_, err = framework.Map(context.Background(), r.fc, nap, ints(2))
	if !errors.Is(err, framework.ErrBackendAborted) || !strings.Contains(err.Error(), "ended the framework") {
		t.Fatalf("a later job's error = %v, want an abort naming the framework's removal", err)
	}
}

// A master restarted while every executor is still starting (its binary
// download held until the master is back) causes no launch storm: the
// re-registering agents report the starting executors' tasks and the new
// master books them before offering anything, so no launch is refused for
// resources the agent does not have ("Task assumes outdated resource
// state") and each agent gets one launch per cpu, as without a restart.
// (Bounding the launch rate on any master, when launches are refused, is
// the backends' part and tested with them.)
func TestMasterRestartWhileExecutorsStartLaunchesNoStorm(t *testing.T) {
	c := startCluster(t, clusterOpts{master: reregisterAsMesos})
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var fetches atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fetches.Add(1)
		select {
		case <-release:
		case <-req.Context().Done():
			return
		}
		http.ServeFile(w, req, bin)
	}))
	defer files.Close()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.mesos.failoverTimeout=60s", "flint.mesos.checkpoint=true",
		"flint.executor.uri="+files.URL+"/coarse.test")
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(80))
		done <- err
	}()
	waitFor(t, 20*time.Second, "four executors launched, both agents fetching their binary", func() bool {
		return len(launchLine.FindAllString(r.logs.String(), -1)) >= 4 && fetches.Load() >= 2
	})
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "re-subscription to the restarted master", func() bool {
		return strings.Contains(r.logs.String(), "re-registered with the Mesos master at")
	})
	close(release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("job failed across the master restart: %v", err)
	}
	checkNoLaunchStorm(t, r.logs.String())
}

// Context.Explain reports, for a task that cannot be placed, the placement
// reasons of the offers the backend saw: here every offer is short of the
// executor's memory (placement.MemShort, with the shortfall).
func TestExplainReportsPlacementReasons(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.memory=100g", "flint.mesos.coarse.noExecutorTimeout=1h")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(ctx, r.fc, double, ints(2))
		done <- err
	}()
	var ex framework.Explanation
	waitFor(t, 20*time.Second, "the placement reasons of an offer", func() bool {
		e, err := r.fc.Explain(0, 0)
		ex = e
		return err == nil && len(e.Offers) > 0
	})
	cancel()
	<-done
	if ex.Reason != framework.TaskNoOffers {
		t.Fatalf("core reason = %s, want %s (no executor, so no offer of cores)", ex.Reason, framework.TaskNoOffers)
	}
	for _, f := range ex.Offers {
		if f.Reason != placement.MemShort.String() || !f.Unfit || !strings.Contains(f.Detail, "MiB needed") {
			t.Fatalf("offer reason = %s (%s), want %s naming the shortfall", f.Reason, f.Detail, placement.MemShort)
		}
	}
}

// Executors crash at start on both agents until both are excluded, and no
// exclusion ends before flint.mesos.coarse.noExecutorTimeout: the job fails
// at once, listing the exclusions, instead of waiting out the timeout (set
// far beyond the test's wait).
func TestEveryAgentExcludedFailsAtOnce(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.mesos.executor.command=/bin/false", "flint.mesos.coarse.noExecutorTimeout=1h",
		"flint.mesos.executor.maxFailuresPerAgent=2", "flint.mesos.executor.agentExclusionTimeout=2h")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := framework.Map(ctx, r.fc, double, ints(2))
	if !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
		t.Fatalf("job error = %v, want the backend to abort it at once", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "every agent that offered resources is excluded") || strings.Count(msg, "excluded until") != 2 ||
		!strings.Contains(msg, "Command exited with status 1") {
		t.Fatalf("job error does not list both agents' exclusions: %v", err)
	}
}

// With default settings, pi and wordcount succeed on a cluster that
// allocates and fetches as Apache Mesos does, and no fetch credential in
// the sandboxes opens anything afterwards.
func TestExamplesWithDefaultsOnAMesosFaithfulCluster(t *testing.T) {
	work := t.TempDir()
	c := mesostest.FaithfulCluster(t, work)
	mesostest.ExamplesWithDefaults(t, mesosURL(c), func() { mesostest.CheckCredentialsDead(t, work) })
}
