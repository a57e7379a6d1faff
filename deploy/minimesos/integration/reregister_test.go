package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// gatedMaster forwards an agent's calls to a master, but can hold the
// agent's next registration (already built by the agent) until the test
// releases it, and can drop the RunTasks of chosen tasks on their way to
// the agent (a lost message).
type gatedMaster struct {
	link.Master
	mu      sync.Mutex
	held    chan struct{} // closed once the next registration is held
	release chan struct{} // closed by the test: it goes on
	drop    map[string]bool
}

func (g *gatedMaster) holdNext() (held, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.release = make(chan struct{}), make(chan struct{})
	return g.held, g.release
}

func (g *gatedMaster) dropRunTask(task string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.drop == nil {
		g.drop = map[string]bool{}
	}
	g.drop[task] = true
}

func (g *gatedMaster) RegisterAgent(ctx context.Context, r link.Registration, to link.Agent) (link.Registered, error) {
	g.mu.Lock()
	held, release := g.held, g.release
	g.held, g.release = nil, nil
	g.mu.Unlock()
	if held != nil {
		close(held)
		select {
		case <-release:
		case <-ctx.Done():
			return link.Registered{}, ctx.Err()
		}
	}
	return g.Master.RegisterAgent(ctx, r, &droppingAgent{g: g, to: to})
}

type droppingAgent struct {
	g  *gatedMaster
	to link.Agent
}

func (d *droppingAgent) Deliver(m link.MasterMessage) error {
	if rt := m.RunTask; rt != nil && rt.Task != nil {
		d.g.mu.Lock()
		dropped := d.g.drop[rt.Task.TaskID.Value]
		d.g.mu.Unlock()
		if dropped {
			return nil
		}
	}
	return d.to.Deliver(m)
}

func waitClosed(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(waitTimeout):
		t.Fatalf("no %s within %v", what, waitTimeout)
	}
}

// An agent re-registers with a registration it built before the master
// sent it a RunTask: the master must not take the task for unknown (it
// used to report TASK_LOST, REASON_RECONCILIATION, and then the agent's
// TASK_RUNNING followed). It asks the agent, which has the task by the
// time it reads the question: the task's only updates are the agent's
// STARTING, RUNNING, FINISHED.
func TestReregistrationRacingALaunchKeepsTheTask(t *testing.T) {
	e := startCluster(t, 0)
	g := &gatedMaster{Master: e.c.Master}
	a := startAgent(t, g, agentConfig(filepath.Join(e.workDir, "racing")))
	agentID := a.ID()
	s := e.subscribe(protobuf, fwInfo("racing", false))
	o := s.offer(agentID)

	held, release := g.holdNext()
	a.MasterDetected() // re-register now
	waitClosed(t, held, "re-registration")
	s.launch(o, commandTask("t", "exit 0")) // the master sends RunTask, then gets the stale registration
	close(release)

	s.waitState("t", mesos.TASK_FINISHED)
	s.expectUpdates("t", agentID, "STARTING,RUNNING,FINISHED")
	eventually(t, func() string {
		if got := stateTasks(t, e.c.URL())[s.id]["t"]; got != "TASK_FINISHED@"+agentID {
			return "/state task t: " + got
		}
		return ""
	})
}

// A RunTask that never reached the agent (its task and new executor are
// unknown to the agent when it re-registers): the agent answers the
// master's question with TASK_LOST, REASON_RECONCILIATION, from the agent
// (a uuid to acknowledge), and reports the executor ended, so the master
// frees the task's and the executor's resources.
func TestReregistrationLosesARunTaskTheAgentNeverGot(t *testing.T) {
	e := startCluster(t, 0)
	g := &gatedMaster{Master: e.c.Master}
	a := startAgent(t, g, agentConfig(filepath.Join(e.workDir, "dropping")))
	agentID := a.ID()
	s := e.subscribe(protobuf, fwInfo("dropping", false))
	g.dropRunTask("gone")
	s.launch(s.offer(agentID), executorTask("gone", "run", executorInfo("gex", protobuf)))
	eventually(t, func() string {
		if used := masterMetric(t, e.c.URL(), "master/cpus_used"); used < 0.19 {
			return "the launch is not accounted yet"
		}
		return ""
	})

	a.MasterDetected()
	lost := s.waitState("gone", mesos.TASK_LOST)
	if lost.GetReason() != mesos.REASON_RECONCILIATION || lost.GetSource() != mesos.SOURCE_AGENT || len(lost.UUID) != 16 ||
		lost.GetMessage() != "Reconciliation: task unknown to the agent" || lost.GetAgentID().GetValue() != agentID {
		t.Fatalf("lost: %v", lost)
	}
	s.waitEvent("FAILURE of executor gex", func(ev *scheduler.Event) bool {
		return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetExecutorID().GetValue() == "gex"
	})
	s.waitAcked("gone", mesos.TASK_LOST)
	eventually(t, func() string {
		if used := masterMetric(t, e.c.URL(), "master/cpus_used"); used != 0 {
			return "cpus still used after the agent's answer"
		}
		if got := stateTasks(t, e.c.URL())[s.id]["gone"]; got != "TASK_LOST@"+agentID {
			return "/state task gone: " + got
		}
		return ""
	})
	if n := len(s.updates("gone")); n != 1 {
		t.Fatalf("updates of gone: %s", stateNames(s.updates("gone")))
	}
}

func masterMetric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]float64
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}
