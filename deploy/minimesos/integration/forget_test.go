package integration

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// waitAgentFrameworks waits until every agent keeps exactly want.
func waitAgentFrameworks(t *testing.T, agents []*agent.Agent, want ...string) {
	t.Helper()
	eventually(t, func() string {
		var bad []string
		for _, a := range agents {
			if got := a.Frameworks(); !slices.Equal(got, want) {
				bad = append(bad, a.ID()+" keeps ["+strings.Join(got, ",")+"]")
			}
		}
		if len(bad) > 0 {
			return "agents' frameworks, want [" + strings.Join(want, ",") + "]: " + strings.Join(bad, "; ")
		}
		return ""
	})
}

func holdFinished(st mesos.TaskStatus) bool { return st.GetState() == mesos.TASK_FINISHED }

// After the TEARDOWN of a framework whose executors had all ended (a
// finished coarse-mode job) no agent, in-process or remote over the HTTP
// link, keeps it: neither when its updates were all acknowledged (the
// usual case) nor when its terminal updates still wait for an
// acknowledgement (the agents hold the framework for them until the
// TEARDOWN drops them).
func TestTeardownAfterExecutorsEndedLeavesNoFrameworkOnAgents(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(mesos.TaskStatus) bool
	}{{"acknowledged", nil}, {"unacknowledged", holdFinished}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startCluster(t, 1, func(c *cluster.Config) { c.AgentSecret = "s3cret" })
			client := link.Dial(e.c.URL(), link.ClientConfig{Secret: "s3cret", Logger: testLogger(t)})
			t.Cleanup(func() { client.Close() })
			cfg := agentConfig(filepath.Join(e.workDir, "remote"))
			cfg.Hostname = "remote-host"
			remote := startAgent(t, client, cfg)
			local := e.c.Agents[0]
			agents := []*agent.Agent{local, remote.Agent}

			fi := fwInfo("coarse-like", true)
			s := subscribeHolding(t, e.schedulerURL(), jsonCodec, fi, tc.hold)
			e.fwIDs = append(e.fwIDs, s.id)
			s.launch(s.offer(local.ID()), executorTask("e", "finish", executorInfo("ex", jsonCodec)))
			s.launch(s.offer(remote.ID()), commandTask("c", "exit 0"))
			s.waitState("e", mesos.TASK_FINISHED)
			s.waitState("c", mesos.TASK_FINISHED)
			// The executors end: the command executor by itself, the
			// custom one when the framework shuts it down (as Flint's
			// coarse-mode driver ends its executors).
			s.mustCall(calls.Shutdown("ex", local.ID()))
			for _, ex := range []string{"ex", "c"} {
				s.waitEvent("FAILURE of "+ex, func(ev *scheduler.Event) bool {
					return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetExecutorID().GetValue() == ex
				})
			}
			if tc.hold != nil {
				waitAgentFrameworks(t, agents, s.id) // held by the unacknowledged updates
			}
			s.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
			waitAgentFrameworks(t, agents)
		})
	}
}

// An agent holding a framework the master knows nothing of on it (the
// master restarted, and the agent only resends a terminal update of an
// ended task) still learns of the framework's TEARDOWN: the master tells
// every agent, not only those where it knows tasks or executors of it (and
// answers the next resend of the update with a ShutdownFramework too).
func TestTeardownReachesAgentsTheMasterKnowsNothingOf(t *testing.T) {
	e := startCluster(t, 1)
	a := e.c.Agents[0]
	fi := fwInfo("lost-track", true)
	failover := 60.0
	fi.FailoverTimeout = &failover
	s := subscribeHolding(t, e.schedulerURL(), protobuf, fi, holdFinished)
	e.fwIDs = append(e.fwIDs, s.id)
	s.launch(s.offer(a.ID()), commandTask("c", "exit 0"))
	s.waitState("c", mesos.TASK_FINISHED)
	s.waitEvent("FAILURE of c", func(ev *scheduler.Event) bool { return ev.GetType() == scheduler.Event_FAILURE })

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := e.c.RestartMaster(ctx); err != nil {
		t.Fatal(err)
	}
	s.close()
	// The framework comes back; the agent resends the unacknowledged
	// FINISHED, which the new master forwards without knowing the task.
	s2 := subscribeHolding(t, e.schedulerURL(), protobuf, fi, holdFinished)
	if s2.id != s.id {
		t.Fatalf("re-subscribed as %s, want %s", s2.id, s.id)
	}
	s2.waitState("c", mesos.TASK_FINISHED)
	if tasks := stateTasks(t, e.c.URL())[s.id]; len(tasks) != 0 {
		t.Fatalf("the restarted master knows tasks %v", tasks)
	}
	if got := a.Frameworks(); !slices.Equal(got, []string{s.id}) {
		t.Fatalf("agent keeps %v", got)
	}
	s2.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	waitAgentFrameworks(t, []*agent.Agent{a})
}

// A framework between tasks (its executors ended, no TEARDOWN) is
// forgotten by the agent, and launching on that agent again works, also
// with the executor id of the ended run.
func TestFrameworkBetweenTasksIsForgottenAndLaunchesAgain(t *testing.T) {
	e := startCluster(t, 1)
	a := e.c.Agents[0]
	s := e.subscribe(protobuf, fwInfo("between", false))
	s.launch(s.offer(a.ID()), executorTask("e1", "finish", executorInfo("ex", protobuf)), commandTask("c1", "exit 0"))
	s.waitState("e1", mesos.TASK_FINISHED)
	s.waitState("c1", mesos.TASK_FINISHED)
	s.mustCall(calls.Shutdown("ex", a.ID()))
	waitAgentFrameworks(t, []*agent.Agent{a})

	s.launch(s.offer(a.ID()), executorTask("e2", "finish", executorInfo("ex", protobuf)), commandTask("c2", "exit 0"))
	s.waitState("e2", mesos.TASK_FINISHED)
	s.waitState("c2", mesos.TASK_FINISHED)
	s.expectUpdates("e2", a.ID(), "RUNNING,FINISHED")
	s.expectUpdates("c2", a.ID(), "STARTING,RUNNING,FINISHED")
	if got := a.Frameworks(); !slices.Equal(got, []string{s.id}) {
		t.Fatalf("agent keeps %v while ex runs again", got)
	}
	s.mustCall(calls.Shutdown("ex", a.ID()))
	waitAgentFrameworks(t, []*agent.Agent{a})
}
