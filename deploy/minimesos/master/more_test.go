package master_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "c.json")
	os.WriteFile(j, []byte(`{"credentials":[{"principal":"a","secret":"x"},{"principal":"b","secret":"y"}]}`), 0o600)
	p := filepath.Join(dir, "c.txt")
	os.WriteFile(p, []byte("# comment\na x\n\nb y\n"), 0o600)
	for _, f := range []string{j, p} {
		c, err := master.LoadCredentials(f)
		if err != nil || len(c) != 2 || c["a"] != "x" || c["b"] != "y" {
			t.Fatalf("%s: %v %v", f, c, err)
		}
	}
	if _, err := master.ParseCredentials([]byte("a b c\n")); err == nil {
		t.Fatal("three fields accepted")
	}
	if _, err := master.LoadCredentials(filepath.Join(dir, "none")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestLaunchGroup(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
	c := subscribe(t, s, allCodecs[1], frameworkInfo("grp"))
	o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
	ei := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_DEFAULT, ExecutorID: mesos.ExecutorID{Value: "ge"},
		Resources: mesos.Resources{scalar("cpus", 0.1), scalar("mem", 32)}}
	a, b := commandTask("ga", o, 1, 10), commandTask("gb", o, 1, 10)
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ei, a, b)}.WithOffers(o.ID)))
	m, err := s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil })
	if err != nil {
		t.Fatal(err)
	}
	if m.RunTask.Group == nil || len(m.RunTask.Group.Tasks) != 2 || m.RunTask.Executor.GetFrameworkID().GetValue() != c.id {
		t.Fatalf("%+v", m.RunTask)
	}
	waitState(t, s, func(d stateDoc) bool { return len(d.Frameworks) == 1 && len(d.Frameworks[0].Tasks) == 2 })
}

// Many frameworks subscribing, launching, updating and acking concurrently.
func TestConcurrentFrameworks(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(4, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.AllocateOnRelease = true
	}))
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := subscribe(t, s, allCodecs[i%2], frameworkInfo(fmt.Sprint("fw", i)))
			o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
			id := fmt.Sprint("task-", i)
			if err := c.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask(id, o, 0.1, 1))}.WithOffers(o.ID))); err != nil {
				errs <- err
				return
			}
			c.call(calls.Reconcile())
			c.call(calls.Decline())
			for _, ag := range s.Fakes {
				if ag.ID() == o.AgentID.Value {
					u, _ := ag.SendStatus(c.id, id, mesos.TASK_FINISHED)
					st := c.nextUpdate(id)
					for st.GetState() != mesos.TASK_FINISHED {
						st = c.nextUpdate(id)
					}
					if err := c.call(calls.Acknowledge(ag.ID(), id, u)); err != nil {
						errs <- err
					}
					// Leave, so that hoarded offers go back to the others.
					errs <- c.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	waitState(t, s, func(d stateDoc) bool { return len(d.Frameworks) == 0 && len(d.CompletedFrameworks) == n })
}

// BenchmarkSubscribeToFirstOffer measures SUBSCRIBE-to-first-offer
// latency with allocate-on-release and a 50ms allocation interval.
func BenchmarkSubscribeToFirstOffer(b *testing.B) {
	s := minimesostest.NewServer(b, minimesostest.WithFakeAgents(4, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.AllocationInterval = 5 * time.Millisecond
	}))
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c := subscribe(b, s, allCodecs[0], frameworkInfo("bench"))
		c.next(scheduler.Event_OFFERS)
		total += time.Since(start)
		c.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
		c.close()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/first-offer")
}

// BenchmarkOfferThroughput measures offers/s: a framework declines every
// offer with refuse_seconds 0 and the master re-offers each round.
func BenchmarkOfferThroughput(b *testing.B) {
	s := minimesostest.NewServer(b, minimesostest.WithFakeAgents(50, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.AllocationInterval = time.Millisecond
	}))
	c := subscribe(b, s, allCodecs[0], frameworkInfo("thr"))
	b.ResetTimer()
	start := time.Now()
	got := 0
	for got < b.N {
		e := c.next(scheduler.Event_OFFERS)
		ids := make([]mesos.OfferID, 0, len(e.Offers.Offers))
		for _, o := range e.Offers.Offers {
			ids = append(ids, o.ID)
		}
		got += len(ids)
		c.mustCall(calls.Decline(ids...).With(calls.RefuseSeconds(0)))
	}
	b.ReportMetric(float64(got)/time.Since(start).Seconds(), "offers/s")
}
