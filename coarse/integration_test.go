package coarse_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
)

func mesosURL(c interface{ URL() string }) string {
	return "mesos://" + strings.TrimPrefix(c.URL(), "http://")
}

func TestExamplesOnMesos(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, r.fc, 8, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi estimate %f too far from π", est)
	}
	text := []byte("the quick brown fox jumps over the lazy dog the end\nthe fox\n")
	counts, err := wordcount.Run(ctx, r.fc, wordcount.Split("sample", text, 16))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, wc := range counts {
		got[wc.Word] = wc.Count
	}
	if got["the"] != 4 || got["fox"] != 2 || got["dog"] != 1 {
		t.Fatalf("word counts %v", got)
	}
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
	if err := r.fc.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	r.checkNoOrphans(t)
	if logs := r.logs.String(); regexp.MustCompile(`token=[0-9a-f]{16}`).MatchString(logs) {
		t.Fatalf("the file server token was logged")
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
	mu  sync.Mutex
	per map[int]int
}

func (f *finishes) OnEvent(e event.Event) {
	if te, ok := e.(event.TaskEnd); ok && te.State == "FINISHED" {
		f.mu.Lock()
		f.per[te.Index]++
		f.mu.Unlock()
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
	waitFor(t, 10*time.Second, "some tasks to finish", func() bool { return fin.total() >= 4 })
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
	waitFor(t, 5*time.Second, "every TaskEnd event", func() bool { return fin.total() >= n })
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive meanwhile
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
	waitFor(t, 10*time.Second, "some tasks to finish", func() bool { return fin.total() >= 4 })
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
	waitFor(t, 10*time.Second, "executors of the lost agent to exit", func() bool {
		for _, p := range r.executors() {
			if doomed[p.executorID] {
				return false
			}
		}
		return true
	})
}

func TestUnreachableMaster(t *testing.T) {
	start := time.Now()
	_, err := newRun(t, "mesos://127.0.0.1:1", "flint.network.timeout=2s")
	if err == nil {
		t.Fatal("NewContext succeeded against a closed port")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error %q does not name the master", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("gave up after %s, want about flint.network.timeout", d)
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
	waitFor(t, 10*time.Second, "some tasks to finish", func() bool { return fin.total() >= 4 })
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

// The master restarts mid-job (a Mesos master failover: same id and
// address, no state): agents re-register with the executors they run, the
// framework re-subscribes with its id, the executors keep serving the
// driver, and the job finishes with every task exactly once.
func TestMasterRestartedMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.mesos.failoverTimeout=60s", "flint.mesos.checkpoint=true")
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	m := regexp.MustCompile(`as framework (\S+)"`).FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatal("framework id not logged")
	}
	done := make(chan error, 1)
	go func() {
		_, err := framework.Map(context.Background(), r.fc, nap, ints(40))
		done <- err
	}()
	waitFor(t, 10*time.Second, "some tasks to finish", func() bool { return fin.total() >= 4 })
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
	waitFor(t, 5*time.Second, "every TaskEnd event", func() bool { return fin.total() >= 40 })
	for i := 0; i < 40; i++ {
		if n := fin.count(i); n != 1 {
			t.Fatalf("task %d finished %d times, want exactly once", i, n)
		}
	}
}
