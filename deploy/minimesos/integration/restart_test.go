package integration

import (
	"context"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// offeredCPUs sums the cpus of every offer in evs.
func offeredCPUs(evs []*scheduler.Event) float64 {
	var cpus float64
	for _, ev := range evs {
		if ev.GetType() != scheduler.Event_OFFERS {
			continue
		}
		for _, o := range ev.Offers.Offers {
			for _, r := range o.Resources {
				if r.Name == "cpus" {
					cpus += r.GetScalar().GetValue()
				}
			}
		}
	}
	return cpus
}

// After a master restart, an agent re-registering with command tasks that
// fill its cpus gets none of them offered: its tasks are accounted before
// any offer, as Mesos' master does (the agent reports the tasks, not the
// command executors it generated for them, whose allowance the master
// never books). The positive event proving that no offer of the busy cpus
// was merely late: once one task is killed, exactly its cpus are offered.
func TestRestartedMasterAccountsReregisteringAgentsTasks(t *testing.T) {
	e := startCluster(t, 1)
	a := e.c.Agents[0]
	fi := fwInfo("restart", true)
	failover := 60.0
	fi.FailoverTimeout = &failover
	s := e.subscribe(protobuf, fi)
	o := s.offer(a.ID())
	big := func(id string) mesos.TaskInfo {
		tk := commandTask(id, "sleep 60")
		tk.Resources = mesos.Resources{scalar("cpus", 2), scalar("mem", 64)}
		return tk
	}
	s.launch(o, big("a"), big("b"))
	s.waitState("a", mesos.TASK_RUNNING)
	s.waitState("b", mesos.TASK_RUNNING)
	s.waitAcked("a", mesos.TASK_RUNNING) // not cut off by the restart
	s.waitAcked("b", mesos.TASK_RUNNING)

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := e.c.RestartMaster(ctx); err != nil {
		t.Fatal(err)
	}
	s.close()
	s2 := subscribeTo(t, e.schedulerURL(), protobuf, fi)
	if s2.id != s.id {
		t.Fatalf("re-subscribed as %s, want %s", s2.id, s.id)
	}
	eventually(t, func() string {
		if tasks := stateTasks(t, e.c.URL())[s.id]; len(tasks) != 2 {
			return "the restarted master does not know both tasks yet"
		}
		return ""
	})
	s2.mustCall(calls.Kill("a", a.ID()))
	s2.waitState("a", mesos.TASK_KILLED)
	s2.waitEvent("an offer of the killed task's cpus", func(ev *scheduler.Event) bool {
		return offeredCPUs([]*scheduler.Event{ev}) > 0
	})
	evs := s2.snapshot()
	killed := -1
	for i, ev := range evs {
		if ev.GetType() == scheduler.Event_UPDATE && ev.Update.Status.TaskID.Value == "a" && ev.Update.Status.GetState() == mesos.TASK_KILLED {
			killed = i
			break
		}
	}
	if cpus := offeredCPUs(evs[:killed]); cpus != 0 {
		t.Fatalf("%v cpus offered while both tasks held all 4: %s", cpus, s2.describe())
	}
	if cpus := offeredCPUs(evs[killed:]); cpus != 2 {
		t.Fatalf("%v cpus offered after the kill, want the killed task's 2: %s", cpus, s2.describe())
	}
}
