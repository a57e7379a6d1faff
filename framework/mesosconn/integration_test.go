package mesosconn

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// Integration tests against the in-process minimesos master, on the real clock.

func minimesosConfig(s *minimesostest.Server) Config {
	return Config{
		Master:             s.URL,
		Name:               "itest",
		User:               "tester",
		Principal:          "flint",
		Secret:             "s3cret",
		FailoverTimeout:    time.Minute,
		Logger:             quietLogger(),
		Rand:               rand.New(rand.NewPCG(1, 2)),
		StartTimeout:       10 * time.Second,
		MinBackoff:         20 * time.Millisecond,
		MaxBackoff:         200 * time.Millisecond,
		DisablePeriodicRec: true,
	}
}

func withCredentials(c *master.Config) { c.Credentials = map[string]string{"flint": "s3cret"} }

// launcher takes what a task needs from the first offer and launches it there.
type launcher struct {
	t    *testing.T
	conn func() *Conn
	once sync.Once
	task chan mesos.TaskInfo
}

func (l *launcher) offers(offers []mesos.Offer) {
	var ids []mesos.OfferID
	for _, o := range offers {
		ids = append(ids, o.ID)
	}
	launched := false
	l.once.Do(func() {
		o := offers[0]
		taken, _, ok := Take(o.Resources, Want{CPUs: 0.5, MemMB: 64, Ports: 1})
		if !ok {
			l.t.Errorf("offer %v too small", o.Resources)
			return
		}
		ti := mesos.TaskInfo{Name: "sleep", TaskID: mesos.TaskID{Value: "task-1"}, AgentID: o.AgentID,
			Resources: taken, Command: &mesos.CommandInfo{Value: ptr("sleep 60")}}
		if err := l.conn().Launch([]mesos.OfferID{o.ID}, []mesos.TaskInfo{ti}); err != nil {
			l.t.Errorf("Launch: %v", err)
			return
		}
		launched = true
		l.task <- ti
		_ = l.conn().Decline(ids[1:], DeclineNoDemand)
	})
	if !launched {
		_ = l.conn().Decline(ids, DeclineNoDemand)
	}
}

func TestMinimesosLaunchUpdateAck(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithConfig(withCredentials), minimesostest.WithFakeAgents(1, nil))
	agent := s.Fakes[0]
	var conn *Conn
	var connMu sync.Mutex
	l := &launcher{t: t, task: make(chan mesos.TaskInfo, 1), conn: func() *Conn { connMu.Lock(); defer connMu.Unlock(); return conn }}
	rec := &recorder{}
	rec.mu.Lock()
	rec.onOffers = l.offers
	rec.mu.Unlock()
	connMu.Lock()
	c, err := Start(context.Background(), minimesosConfig(s), rec)
	conn = c
	connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(context.Background(), true); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()
	var ti mesos.TaskInfo
	select {
	case ti = <-l.task:
	case <-time.After(10 * time.Second):
		t.Fatal("no offer within 10s")
	}
	if _, err := agent.WaitFor(10*time.Second, func(m link.MasterMessage) bool {
		return m.RunTask != nil && m.RunTask.Task != nil && m.RunTask.Task.TaskID == ti.TaskID
	}); err != nil {
		t.Fatalf("agent got no RunTask: %v", err)
	}
	uuid, err := agent.SendStatus(c.FrameworkID(), "task-1", mesos.TASK_RUNNING)
	if err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "update task-1 TASK_RUNNING")
	// The Conn's ACKNOWLEDGE reaches the agent.
	if _, err := agent.WaitFor(10*time.Second, func(m link.MasterMessage) bool {
		return m.Acknowledge != nil && bytes.Equal(m.Acknowledge.UUID, uuid)
	}); err != nil {
		t.Fatalf("agent got no acknowledgement: %v", err)
	}
	// Killing goes through the master to the agent.
	if err := c.Kill(ti.TaskID, &ti.AgentID); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.WaitFor(10*time.Second, func(m link.MasterMessage) bool {
		return m.KillTask != nil && m.KillTask.TaskID == ti.TaskID
	}); err != nil {
		t.Fatalf("agent got no KillTask: %v", err)
	}
	// Demand off: SUPPRESS is accepted by the master.
	c.SetDemand(false)
}

func TestMinimesosAuthenticationRefused(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithConfig(withCredentials))
	cfg := minimesosConfig(s)
	cfg.Secret = "wrong"
	_, err := Start(context.Background(), cfg, &recorder{})
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("Start with a wrong secret = %v, want ErrAuth", err)
	}
}

func TestMinimesosStreamDropResubscribesThenTeardown(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithConfig(withCredentials))
	rec := &recorder{}
	cfg := minimesosConfig(s)
	c, err := Start(context.Background(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	id := c.FrameworkID()
	if err := s.Faults().DropFrameworkStream(id); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "disconnected")
	rec.wait(t, "subscribed "+id+" re=true")
	if err := c.Reconcile(); err != nil {
		t.Fatalf("implicit reconciliation after re-subscription: %v", err)
	}
	if err := c.Stop(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	// Torn down: the master refuses the framework id now.
	cfg.FrameworkID = id
	_, err = Start(context.Background(), cfg, &recorder{})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("re-subscribing a torn-down framework = %v, want ErrRefused", err)
	}
}
