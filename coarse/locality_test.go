package coarse_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// hostAgent prepares an agent advertising hostname (served on loopback
// like the cluster's own agents); start registers it with c's master. It is
// closed, killing what it runs, when the test ends — after the cleanups
// registered later, such as a run's Stop.
func hostAgent(t *testing.T, c *cluster.Cluster, hostname string) (start func()) {
	t.Helper()
	return hostAgentIn(t, c, hostname, t.TempDir())
}

// hostAgentIn is hostAgent with its work directory in dir.
func hostAgentIn(t *testing.T, c *cluster.Cluster, hostname, dir string) (start func()) {
	t.Helper()
	log, _ := mesostest.Logger(t)
	log.SetLevel(logrus.InfoLevel)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fetch, err := cluster.NewFetch(filepath.Join(dir, "fetch-cache"), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{WorkDir: dir, Hostname: hostname, Endpoint: lis.Addr().String(),
		Resources: "cpus:2;mem:1024;disk:1024;ports:[31000-31100]", Fetch: fetch,
		ShutdownGrace: time.Second, KillGrace: time.Second, Logger: log.WithField("agent", hostname)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: a.Handler()}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	client := link.Dial(c.URL(), link.ClientConfig{Logger: log})
	t.Cleanup(func() {
		_ = a.Close()
		client.Close()
		_ = srv.Close()
		<-served
	})
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Start(ctx, client); err != nil {
			t.Fatalf("agent %s: %v", hostname, err)
		}
	}
}

// starts records TaskStart events.
type starts struct {
	mu  sync.Mutex
	all []event.TaskStart
}

func (s *starts) OnEvent(e event.Event) {
	if ts, ok := e.(event.TaskStart); ok {
		s.mu.Lock()
		s.all = append(s.all, ts)
		s.mu.Unlock()
	}
}

func (s *starts) list() []event.TaskStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]event.TaskStart(nil), s.all...)
}

// Tasks prefer host-b and flint.cores.max allows one executor. host-a is
// offered first: the backend holds its offer back (Spark's
// satisfiesLocality) until host-b is offered, starts the executor there,
// and every task runs NODE_LOCAL.
func TestExecutorStartsOnPreferredHost(t *testing.T) {
	c := mesostest.StartCluster(t, mesostest.Cluster{Agents: 0, ShutdownGrace: time.Second})
	startA := hostAgent(t, c, "host-a")
	startB := hostAgent(t, c, "host-b")
	r := mustRun(t, mesosURL(c), "flint.cores.max=2", "flint.locality.wait=20s")
	st := &starts{}
	r.fc.AddListener(st)

	const n = 8
	job := &framework.Job{Name: "prefers host-b"}
	for i := range n {
		task, err := double.Task(i, framework.Location{Host: "host-b"})
		if err != nil {
			t.Fatal(err)
		}
		job.Tasks = append(job.Tasks, task)
	}
	type outcome struct {
		res []framework.Result
		err error
	}
	done := make(chan outcome, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		res, err := r.fc.RunJob(ctx, job)
		done <- outcome{res, err}
	}()
	waitFor(t, 10*time.Second, "the job to be submitted", func() bool { return len(r.fc.ActiveStages()) == 1 })

	startA()
	waitFor(t, 10*time.Second, "host-a's offer to be held back for host-b", func() bool {
		return strings.Contains(r.logs.String(), "to wait for the hosts pending tasks prefer")
	})
	if n := len(r.executors()); n != 0 {
		t.Fatalf("%d executors started before the preferred host was offered", n)
	}
	startB()

	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	for i, res := range out.res {
		if v, err := double.Output(res); err != nil || v != 2*i {
			t.Fatalf("result %d = %d (%v), want %d", i, v, err, 2*i)
		}
	}
	procs := mesostest.Procs(func(env map[string]string) bool {
		return env["FLINT_TEST_MARK"] == r.mark && env[flint.EnvRole] == "coarse-executor"
	})
	if len(procs) != 1 || procs[0].Env["FLINT_EXECUTOR_HOST"] != "host-b" {
		var hosts []string
		for _, p := range procs {
			hosts = append(hosts, p.Env["FLINT_EXECUTOR_HOST"])
		}
		t.Fatalf("executors on %v, want exactly one, on host-b", hosts)
	}
	waitFor(t, 5*time.Second, "every TaskStart event", func() bool { return len(st.list()) >= n })
	got := st.list()
	if len(got) != n {
		t.Fatalf("%d TaskStart events, want %d", len(got), n)
	}
	for _, ts := range got {
		if ts.Locality != "NODE_LOCAL" || ts.Host != "host-b" {
			t.Fatalf("task %d started %s on %s, want NODE_LOCAL on host-b", ts.Index, ts.Locality, ts.Host)
		}
	}
	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	r.checkNoOrphans(t)
}
