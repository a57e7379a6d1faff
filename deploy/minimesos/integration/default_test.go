package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

func ptr[T any](v T) *T { return &v }

// defaultExecutor is Mesos' default executor: type DEFAULT, no command.
func defaultExecutor(id string) mesos.ExecutorInfo {
	return mesos.ExecutorInfo{Type: mesos.ExecutorInfo_DEFAULT, ExecutorID: mesos.ExecutorID{Value: id}, Resources: smallResources()}
}

func groupTask(id, cmd string) mesos.TaskInfo { return commandTask(id, cmd) }

// agentOffers waits for an offer of agentID and returns it with every
// other outstanding offer of that agent (the freed resources of finished
// tasks come as separate offers; an ACCEPT may combine them).
func (s *sched) agentOffers(agentID string) []mesos.Offer {
	s.t.Helper()
	out := []mesos.Offer{s.offer(agentID)}
	for {
		o, ok := s.outstanding(agentID)
		if !ok {
			return out
		}
		s.mu.Lock()
		s.usedOffr[o.ID.Value] = true
		s.mu.Unlock()
		out = append(out, o)
	}
}

// launchGroup accepts offers (of one agent) with one LAUNCH_GROUP of
// tasks on ex.
func (s *sched) launchGroup(offers []mesos.Offer, ex mesos.ExecutorInfo, tasks ...mesos.TaskInfo) {
	s.t.Helper()
	var ids []mesos.OfferID
	for _, o := range offers {
		ids = append(ids, o.ID)
	}
	for i := range tasks {
		tasks[i].AgentID = offers[0].AgentID
	}
	s.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, tasks...)}.WithOffers(ids...)).
		With(calls.RefuseSeconds(10 * time.Millisecond)))
}

// taskFile reads a file of a default-executor task's sandbox.
func (e *env) taskFile(fwID, exID, taskID, name string) string {
	e.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(e.workDir, "*", "slaves", "*", "frameworks", fwID, "executors", exID, "runs", "latest", "tasks", taskID, name))
	if len(paths) != 1 {
		e.t.Fatalf("sandbox file %s of task %s: found %v", name, taskID, paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// Mesos' default-executor group semantics on one in-process executor:
// groups launched later on the same executor id run beside the first; a
// task of a group that fails gets the rest of its group KILLED (other
// groups untouched); KILL of one task kills its whole group; the
// executor ends (FAILURE naming it) once all its tasks are terminal.
// SHUTDOWN of a second executor kills all its tasks. No process outlives
// the test (startCluster's cleanup checks /proc).
func TestDefaultExecutorGroups(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		e := startCluster(t, 1)
		agentID := e.c.Agents[0].ID()
		s := e.subscribe(codec, fwInfo("groups", false))
		ex := defaultExecutor("dx")

		s.launchGroup(s.agentOffers(agentID), ex, groupTask("l1", "sleep 60"), groupTask("l2", "sleep 60"))
		s.waitState("l1", mesos.TASK_RUNNING)
		s.waitState("l2", mesos.TASK_RUNNING)

		// A second group on the same executor: both finish.
		offers := s.agentOffers(agentID)
		if o := offers[0]; len(o.ExecutorIDs) != 1 || o.ExecutorIDs[0].Value != "dx" {
			t.Fatalf("offer executor_ids %v, want [dx]", o.ExecutorIDs)
		}
		s.launchGroup(offers, ex, groupTask("o1", "true"), groupTask("o2", "sleep 0.1"))
		for _, id := range []string{"o1", "o2"} {
			s.waitState(id, mesos.TASK_FINISHED)
			s.expectUpdates(id, agentID, "STARTING,RUNNING,FINISHED")
		}

		// A failing task kills the rest of its group only.
		// x2 fails once the test tells it to, after both run (a fixed delay
		// could end before x1's RUNNING under load: STARTING, KILLED).
		fail := filepath.Join(t.TempDir(), "fail")
		s.launchGroup(s.agentOffers(agentID), ex, groupTask("x1", "sleep 60"),
			groupTask("x2", "while [ ! -e "+fail+" ]; do sleep 0.02; done; exit 3"))
		s.waitState("x1", mesos.TASK_RUNNING)
		s.waitState("x2", mesos.TASK_RUNNING)
		if err := os.WriteFile(fail, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		failed := s.waitState("x2", mesos.TASK_FAILED)
		if failed.GetMessage() != "Command exited with status 3" || failed.GetSource() != mesos.SOURCE_EXECUTOR {
			t.Fatalf("x2: %v %q", failed.GetSource(), failed.GetMessage())
		}
		s.expectUpdates("x2", agentID, "STARTING,RUNNING,FAILED")
		killed := s.waitState("x1", mesos.TASK_KILLED)
		s.expectUpdates("x1", agentID, "STARTING,RUNNING,KILLED")
		if killed.GetSource() != mesos.SOURCE_EXECUTOR || killed.GetExecutorID().GetValue() != "dx" {
			t.Fatalf("x1: %v %v %q", killed.GetSource(), killed.GetExecutorID(), killed.GetMessage())
		}
		for _, id := range []string{"l1", "l2"} {
			if got := stateNames(s.updates(id)); got != "STARTING,RUNNING" {
				t.Fatalf("%s of another group: updates %s after x2 failed", id, got)
			}
		}

		// KILL of one task kills its group; then the executor ends.
		s.mustCall(calls.Kill("l1", agentID))
		for _, id := range []string{"l1", "l2"} {
			s.waitState(id, mesos.TASK_KILLED)
			s.expectUpdates(id, agentID, "STARTING,RUNNING,KILLED")
		}
		s.waitEvent("FAILURE of executor dx", func(ev *scheduler.Event) bool {
			return ev.GetType() == scheduler.Event_FAILURE && ev.Failure.GetExecutorID().GetValue() == "dx"
		})

		// SHUTDOWN kills every task of the executor.
		s.launchGroup(s.agentOffers(agentID), defaultExecutor("dy"), groupTask("s1", "sleep 60"), groupTask("s2", "sleep 60"))
		s.waitState("s1", mesos.TASK_RUNNING)
		s.waitState("s2", mesos.TASK_RUNNING)
		s.mustCall(calls.Shutdown("dy", agentID))
		for _, id := range []string{"s1", "s2"} {
			s.waitState(id, mesos.TASK_KILLED)
			s.expectUpdates(id, agentID, "STARTING,RUNNING,KILLED")
		}
		eventually(t, func() string {
			got := stateTasks(t, e.c.URL())[s.id]
			want := map[string]string{"o1": "TASK_FINISHED", "x2": "TASK_FAILED", "x1": "TASK_KILLED", "l2": "TASK_KILLED", "s1": "TASK_KILLED"}
			for id, st := range want {
				if got[id] != st+"@"+agentID {
					return "/state tasks " + formatMap(got) + ", want " + formatMap(want)
				}
			}
			return ""
		})
	})
}
