package mesosconn

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// Tests on minimesos in ZooKeeper mode (a real ZooKeeper): the master
// fails over to a new master under a new id, which leads once the dead
// master's ZooKeeper session expires and then recovers its registry for a
// while, answering 503 "Master has not finished recovery", as Apache Mesos
// 1.12 does.

const recoveryTime = 2 * time.Second

func electionCluster(t *testing.T, sessionTimeout time.Duration) (*cluster.Cluster, string) {
	t.Helper()
	zkAddr := zktest.Start(t)
	c := mesostest.StartCluster(t, mesostest.Cluster{
		Agents: 1, Resources: "cpus:2;mem:512;disk:64;ports:[31000-31010]",
		ZooKeeper: &cluster.ZooKeeper{Servers: []string{zkAddr}, Path: "/mesos", SessionTimeout: sessionTimeout},
		Master: func(mc *master.Config) {
			mc.RecoveryTime = recoveryTime
			mc.AgentReregisterTimeout = time.Minute
		},
	})
	return c, "mesos://zk://" + zkAddr + "/mesos"
}

// electionConfig is a Conn's Config with Flint's default timings.
func electionConfig(masterURL string, log logrus.FieldLogger) Config {
	return Config{Master: masterURL, Name: "election", User: DefaultUser(), FailoverTimeout: time.Minute, Logger: log, StartTimeout: 20 * time.Second}
}

// subscribeTimes is a Handler recording when each subscription began.
type subscribeTimes struct {
	recorder
	mu    sync.Mutex
	times []time.Time
}

func (s *subscribeTimes) Subscribed(id string, m mesos.MasterInfo, re bool) {
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	s.recorder.Subscribed(id, m, re)
}

func (s *subscribeTimes) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.times[len(s.times)-1]
}

type clusterState struct {
	Frameworks []struct {
		ID     string `json:"id"`
		Active bool   `json:"active"`
	} `json:"frameworks"`
	CompletedFrameworks []struct {
		ID string `json:"id"`
	} `json:"completed_frameworks"`
	Slaves []struct{} `json:"slaves"`
}

// leaderState reads /state from the master once it leads (nil before).
func leaderState(t *testing.T, c *cluster.Cluster) *clusterState {
	t.Helper()
	res, err := http.Get(c.URL() + "/state")
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil
	}
	var s clusterState
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// After a failover the driver subscribes to the new leader within about
// a second of its recovery's end, however many attempts the election cost:
// the leader change resets the backoff and "not finished recovery" is
// retried every 500 ms less jitter. (Before, the backoff grown during the
// election's 6 s — 1, 2, 4 s — made the first retry after the leader's
// 503 wait 4-8 s.)
func TestResubscriptionFollowsTheNewLeadersRecovery(t *testing.T) {
	c, masterURL := electionCluster(t, 6*time.Second)
	h := &subscribeTimes{}
	conn, err := Start(context.Background(), electionConfig(masterURL, quietLogger()), h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Stop(context.Background(), true) })
	id := conn.FrameworkID()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.wait(t, "subscribed "+id+" re=true") // waits 10 s
	if got := conn.Master().ID; got != c.Master.ID() {
		t.Fatalf("subscribed to master %s, want the new leader %s", got, c.Master.ID())
	}
	gap := h.last().Sub(c.Master.RecoveredAt())
	t.Logf("re-subscribed %s after the new leader's recovery ended", gap)
	if gap < 0 || gap > time.Second {
		t.Errorf("re-subscribed %s after the recovery ended, want within 1 s", gap)
	}
}

// Stop during the election: the Conn waits for the new leader, subscribes
// through its recovery, and tears the framework down there, so the new
// leader keeps no framework (Mesos would keep it with no failover timer,
// MESOS-4659: the agent reports it when it re-registers).
func TestStopDuringTheElectionLeavesNoFramework(t *testing.T) {
	c, masterURL := electionCluster(t, 3*time.Second)
	conn := startWithSleeper(t, electionConfig(masterURL, quietLogger()))
	id := conn.FrameworkID()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := conn.Stop(context.Background(), true); err != nil {
		t.Fatalf("Stop during the election: %v", err)
	}
	s := leaderState(t, c)
	if s == nil {
		t.Fatal("Stop returned before the new master led")
	}
	if len(s.Frameworks) != 0 || len(s.CompletedFrameworks) != 1 || s.CompletedFrameworks[0].ID != id {
		t.Fatalf("new leader's frameworks %+v, completed %+v: want %s torn down", s.Frameworks, s.CompletedFrameworks, id)
	}
}

// When no master takes the TEARDOWN within flint.mesos.teardownTimeout,
// Stop says once that the framework may linger and how to remove it; the
// new leader indeed keeps it (minimesos as Mesos: no failover timer across
// a failover), and the command given removes it.
func TestStopPastTheBoundWarnsAndTheAdviceWorks(t *testing.T) {
	c, masterURL := electionCluster(t, 3*time.Second)
	log, hook := logCapture()
	cfg := electionConfig(masterURL, log)
	cfg.FailoverTimeout = time.Second
	cfg.TeardownTimeout = 500 * time.Millisecond
	conn := startWithSleeper(t, cfg)
	id := conn.FrameworkID()
	if err := c.RestartMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := conn.Stop(context.Background(), true)
	if !StopReported(err) || err == nil {
		t.Fatalf("Stop = %v, want a TeardownError", err)
	}
	w := lingerWarnings(hook)
	if len(w) != 1 {
		t.Fatalf("warnings %q, want one", w)
	}
	m := regexp.MustCompile(`curl -X POST (\S+) -d frameworkId=(\S+)$`).FindStringSubmatch(w[0])
	if m == nil || m[2] != id {
		t.Fatalf("warning %q names no command for framework %s", w[0], id)
	}
	// The new leader leads, its agent re-registered, and — 5× past the
	// framework's 1 s failover timeout — it still has the framework.
	waitfor.True(t, 20*time.Second, "the new leader with its agent and the framework", func() bool {
		s := leaderState(t, c)
		return s != nil && len(s.Slaves) == 1 && len(s.Frameworks) == 1
	})
	<-time.After(3 * time.Second) // thrice the failover timeout: not a wait for an event, the time it must outlast
	if s := leaderState(t, c); len(s.Frameworks) != 1 || s.Frameworks[0].ID != id || s.Frameworks[0].Active {
		t.Fatalf("the new leader's frameworks %+v, want %s kept, inactive", s.Frameworks, id)
	}
	res, err := http.Post(m[1], "application/x-www-form-urlencoded", strings.NewReader(url.Values{"frameworkId": {id}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", m[1], res.Status)
	}
	if s := leaderState(t, c); len(s.Frameworks) != 0 {
		t.Errorf("frameworks after the operator's teardown: %+v", s.Frameworks)
	}
}

// startWithSleeper starts a Conn that launches one long command task on
// the first offer, and returns once the task runs: the agent then reports
// the framework to whichever master it registers with.
func startWithSleeper(t *testing.T, cfg Config) *Conn {
	t.Helper()
	var conn *Conn
	var connMu sync.Mutex
	l := &launcher{t: t, task: make(chan mesos.TaskInfo, 1), conn: func() *Conn { connMu.Lock(); defer connMu.Unlock(); return conn }}
	rec := &recorder{onOffers: l.offers}
	connMu.Lock()
	c, err := Start(context.Background(), cfg, rec)
	conn = c
	connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background(), false) })
	rec.wait(t, "update task-1 TASK_RUNNING")
	return c
}
