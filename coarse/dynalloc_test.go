package coarse_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// lastBackend is the coarse backend most recently built in this test
// binary (its tests do not run in parallel): the dynamic allocation hooks
// are methods of the concrete backend, which a framework.Context keeps to
// itself.
var lastBackend atomic.Pointer[coarse.Backend]

func init() {
	backend.Register(backend.MesosCoarse, func(p backend.Params) (backend.Backend, error) {
		b, err := coarse.NewBackend(p)
		if err == nil {
			lastBackend.Store(b)
		}
		return b, err
	})
}

// registered counts the backend's registered executors.
func registered(b *coarse.Backend) int {
	n := 0
	for _, e := range b.Executors() {
		if e.Registered {
			n++
		}
	}
	return n
}

// offersAnswered waits until every offer the master has made is answered
// (declined, with "no demand"'s two-minute filter, or used): the positive
// event proving that the offers of this round came and went without an
// extra executor (an accepted one is listed by Executors at once).
func offersAnswered(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	waitFor(t, 20*time.Second, "every offer answered", func() bool {
		m := c.Master.Metrics()
		return m["master/offers_sent"] > 0 && m["master/outstanding_offers"] == 0
	})
}

// RequestTotalExecutors bounds how many executors the backend keeps: with
// room for four 1-core executors, a total of 1 starts one, a total of 3
// brings that to three (offers declined meanwhile come back through
// REVIVE), and the job runs on them.
func TestRequestTotalExecutors(t *testing.T) {
	c := mesostest.StartCluster(t, mesostest.Cluster{Agents: 0, ShutdownGrace: time.Second})
	startA := hostAgent(t, c, "host-a")
	startB := hostAgent(t, c, "host-b")
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	b := lastBackend.Load()
	if b == nil || b.GatewayAddr() == "" {
		t.Fatal("the coarse backend was not captured")
	}
	b.RequestTotalExecutors(1)
	startA()
	startB()
	waitFor(t, 10*time.Second, "one registered executor", func() bool { return registered(b) == 1 })
	offersAnswered(t, c) // more offers come and go meanwhile
	if n := len(b.Executors()); n != 1 {
		t.Fatalf("%d executors with a requested total of 1", n)
	}
	if n := len(r.executors()); n != 1 {
		t.Fatalf("%d executor processes with a requested total of 1", n)
	}

	b.RequestTotalExecutors(3)
	waitFor(t, 15*time.Second, "three registered executors", func() bool { return registered(b) == 3 })
	offersAnswered(t, c)
	if n := len(b.Executors()); n != 3 {
		t.Fatalf("%d executors with a requested total of 3 (room for 4)", n)
	}
	waitFor(t, 5*time.Second, "three executor processes", func() bool { return len(r.executors()) == 3 })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(12))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("result %d = %d, want %d", i, v, 2*i)
		}
	}
	if n := len(r.executors()); n != 3 {
		t.Fatalf("%d executor processes after the job, want 3", n)
	}
}

// KillExecutor stops a busy executor: its process exits, its running tasks
// are resubmitted, the job succeeds with every task finished exactly once,
// and an unknown or already killed executor is refused.
func TestKillExecutor(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	b := lastBackend.Load()
	if b == nil || b.GatewayAddr() == "" {
		t.Fatal("the coarse backend was not captured")
	}
	fin := &finishes{per: map[int]int{}}
	r.fc.AddListener(fin)
	st := &starts{}
	r.fc.AddListener(st)
	run := &runningTasks{per: map[string]int{}}
	r.fc.AddListener(run)
	const n = 40
	done := make(chan error, 1)
	var out []int
	go func() {
		var err error
		out, err = framework.Map(context.Background(), r.fc, nap, ints(n))
		done <- err
	}()
	fin.await(t, 4, done)

	// The victim is an executor running a task right now.
	var victim string
	for _, e := range b.Executors() {
		if e.Registered && run.on(e.ID) > 0 {
			victim = e.ID
			break
		}
	}
	if victim == "" {
		t.Fatal("no busy executor")
	}
	var pid int
	for _, p := range r.executors() {
		if p.executorID == victim {
			pid = p.pid
		}
	}
	if pid == 0 {
		t.Fatalf("no process for executor %s", victim)
	}
	if err := b.KillExecutor(victim); err != nil {
		t.Fatal(err)
	}
	if err := b.KillExecutor(victim); err == nil {
		t.Fatal("killing an executor twice succeeded")
	}
	if err := b.KillExecutor("no-such-executor"); err == nil {
		t.Fatal("killing an unknown executor succeeded")
	}
	mesostest.CheckGone(t, 10*time.Second, func() []int {
		if mesostest.Zombie(pid) {
			return nil
		}
		return []int{pid}
	}, func(p int) int { return p }, "killed executor's process still running")
	for _, e := range b.Executors() {
		if e.ID == victim {
			t.Fatalf("killed executor %s still listed: %+v", victim, e)
		}
	}

	if err := <-done; err != nil {
		t.Fatalf("job failed after executor %s was killed: %v", victim, err)
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
	for i := range n {
		if c := fin.count(i); c != 1 {
			t.Fatalf("task %d finished %d times, want exactly once", i, c)
		}
	}
	// Some task was running on the victim and was started again elsewhere.
	onVictim := map[int]bool{}
	resubmitted := false
	for _, s := range st.list() {
		if s.ExecutorID == victim {
			onVictim[s.Index] = true
		} else if onVictim[s.Index] && s.Attempt > 0 {
			resubmitted = true
		}
	}
	if !resubmitted {
		t.Fatalf("no task of killed executor %s was resubmitted elsewhere", victim)
	}
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	r.checkNoOrphans(t)
}

// runningTasks counts, per executor, the tasks started and not yet ended
// (the driver loop, not the backend, keeps executors' free cores).
type runningTasks struct {
	mu  sync.Mutex
	per map[string]int
}

func (r *runningTasks) OnEvent(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := e.(type) {
	case event.TaskStart:
		r.per[e.ExecutorID]++
	case event.TaskEnd:
		r.per[e.ExecutorID]--
	}
}

func (r *runningTasks) on(executorID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.per[executorID]
}
