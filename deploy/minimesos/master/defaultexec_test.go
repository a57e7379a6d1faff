package master_test

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// Mesos' executor type validation, in one ACCEPT: a task group on a
// DEFAULT executor that sets a command is TASK_ERROR
// REASON_TASK_GROUP_INVALID; a LAUNCH naming a DEFAULT executor is
// TASK_ERROR REASON_TASK_INVALID; a task group on a DEFAULT executor
// without a command and a LAUNCH on a CUSTOM executor reach the agent.
func TestDefaultExecutorValidation(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.Name, func(t *testing.T) {
			s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
			c := subscribe(t, s, codec, frameworkInfo("dflt"))
			o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
			small := mesos.Resources{scalar("cpus", 0.1), scalar("mem", 32)}
			cmd := "true"
			withCmd := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_DEFAULT, ExecutorID: mesos.ExecutorID{Value: "bad-ex"},
				Resources: small, Command: &mesos.CommandInfo{Value: &cmd}}
			good := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_DEFAULT, ExecutorID: mesos.ExecutorID{Value: "good-ex"}, Resources: small}
			custom := mesos.ExecutorInfo{Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: "custom-ex"},
				Resources: small, Command: &mesos.CommandInfo{Value: &cmd}}
			dfltLaunch := commandTask("dflt-launch", o, 0.1, 8)
			dfltLaunch.Command, dfltLaunch.Executor = nil, &mesos.ExecutorInfo{Type: mesos.ExecutorInfo_DEFAULT, ExecutorID: mesos.ExecutorID{Value: "x"}, Resources: small}
			customTask := commandTask("custom", o, 0.1, 8)
			customTask.Command, customTask.Executor = nil, &custom
			c.mustCall(calls.Accept(calls.OfferOperations{
				calls.OpLaunchGroup(withCmd, commandTask("b1", o, 0.1, 8), commandTask("b2", o, 0.1, 8)),
				calls.OpLaunch(dfltLaunch),
				calls.OpLaunchGroup(good, commandTask("g1", o, 0.1, 8), commandTask("g2", o, 0.1, 8)),
				calls.OpLaunch(customTask),
			}.WithOffers(o.ID)))

			got := map[string]mesos.TaskStatus{}
			deadline := time.Now().Add(5 * time.Second)
			for len(got) < 3 && time.Now().Before(deadline) {
				st := c.next(scheduler.Event_UPDATE).Update.Status
				got[st.TaskID.Value] = st
			}
			for _, id := range []string{"b1", "b2"} {
				st := got[id]
				if st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_GROUP_INVALID ||
					!strings.Contains(st.GetMessage(), "'ExecutorInfo.command' must not be set for 'DEFAULT' executor") {
					t.Fatalf("%s: %v %v %q", id, st.GetState(), st.GetReason(), st.GetMessage())
				}
			}
			if st := got["dflt-launch"]; st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_INVALID ||
				st.GetMessage() != "'ExecutorInfo.type' must be 'CUSTOM'" {
				t.Fatalf("LAUNCH on a DEFAULT executor: %v %v %q", st.GetState(), st.GetReason(), st.GetMessage())
			}
			m, err := s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil && m.RunTask.Group != nil })
			if err != nil {
				t.Fatal(err)
			}
			if ex := m.RunTask.Executor; ex.ExecutorID.Value != "good-ex" || ex.Command != nil || len(m.RunTask.Group.Tasks) != 2 {
				t.Fatalf("group RunTask %+v", m.RunTask)
			}
			if _, err := s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool {
				return m.RunTask != nil && m.RunTask.Task != nil && m.RunTask.Task.TaskID.Value == "custom"
			}); err != nil {
				t.Fatal(err)
			}
			for _, m := range s.Fakes[0].Messages() {
				if rt := m.RunTask; rt != nil && (rt.Executor != nil && rt.Executor.ExecutorID.Value == "bad-ex" ||
					rt.Task != nil && rt.Task.TaskID.Value == "dflt-launch") {
					t.Fatalf("invalid launch delivered: %+v", rt)
				}
			}
		})
	}
}
