package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

func res(spec string) []mesos.Resource {
	rs, err := ParseResources(spec)
	if err != nil {
		panic(err)
	}
	return rs
}

func getState(t *testing.T, ta *testAgent) agentState {
	t.Helper()
	resp, err := http.Get("http://" + ta.cfg.Endpoint + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st agentState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// assertRefused checks that task was dropped by the agent with state want
// and a message naming what does not fit, and never started.
func assertRefused(t *testing.T, m *fakeMaster, task string, want mesos.TaskState, cause string) {
	t.Helper()
	st := m.waitState(t, task, want)
	if st.GetReason() != mesos.REASON_INVALID_OFFERS || st.GetSource() != mesos.SOURCE_AGENT ||
		!strings.HasPrefix(st.GetMessage(), "Task assumes outdated resource state: ") || !strings.Contains(st.GetMessage(), cause) {
		t.Fatalf("%s: %v %v %q, want %v REASON_INVALID_OFFERS naming %q", task, st.GetSource(), st.GetReason(), st.GetMessage(), want, cause)
	}
	if got := stateNames(m.states(task)); got != want.String() {
		t.Fatalf("%s: updates %s", task, got)
	}
}

// The agent counts what its executors and live tasks hold, refuses a
// RunTask that does not fit in the rest as a Mesos agent drops tasks with
// an outdated resource view, reports usage in /state, and frees resources
// when tasks end.
func TestResourceAccounting(t *testing.T) {
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.Resources = "cpus:1;mem:256;disk:100;ports:[31000-31001]"
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)

	ex := executorInfo("ex")
	ex.Resources = res("cpus:0.5;mem:64")
	withPort := executorTask("p", "run", ex)
	withPort.Resources = res("cpus:0.2;mem:32;ports:[31000-31000]")
	runTask(t, ta, fw, withPort)
	sleeper := cmdTask("sleeper", "sleep 100")
	sleeper.Resources = res("cpus:0.3;mem:64")
	runTask(t, ta, fw, sleeper)
	m.waitState(t, "p", mesos.TASK_RUNNING)
	m.waitState(t, "sleeper", mesos.TASK_RUNNING)

	// The master's share is exactly full (0.5+0.2+0.3 cpus); the command
	// executor's 0.1 cpus / 32 MB are on top, as in Mesos.
	st := getState(t, ta)
	if st.Resources["cpus"] != 1.0 || st.Resources["mem"] != 256.0 || st.Resources["ports"] != "[31000-31001]" {
		t.Fatalf("state resources %v", st.Resources)
	}
	if u := st.UsedResources; u["cpus"] != 1.1 || u["mem"] != 192.0 || u["disk"] != 0.0 || u["ports"] != "[31000-31000]" {
		t.Fatalf("state used_resources %v", u)
	}

	runTask(t, ta, fw, cmdTask("nocpu", "true")) // 0.1 cpus
	assertRefused(t, m, "nocpu", mesos.TASK_LOST, "cpus: needs 0.1 but 0 of 1 are free")

	port := executorTask("port", "run", ex)
	port.Resources = res("ports:[31000-31000]")
	runTask(t, ta, fw, port)
	assertRefused(t, m, "port", mesos.TASK_LOST, "ports: [31000-31000] overlaps [31000-31000] in use")

	pa := fwInfo("pa", false)
	pa.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}
	big := executorInfo("big")
	big.Resources = res("mem:1000")
	runTask(t, ta, pa, executorTask("bigtask", "run", big))
	assertRefused(t, m, "bigtask", mesos.TASK_DROPPED, "mem: needs 1000 but 96 of 256 are free")
	if e := m.waitExited(t, "big"); e.FrameworkID.Value != "pa" {
		t.Fatalf("exited %+v", e)
	}
	unknown := cmdTask("gpu", "true")
	unknown.Resources = res("gpus:1")
	runTask(t, ta, fw, unknown)
	assertRefused(t, m, "gpu", mesos.TASK_LOST, "gpus: needs 1 but 0 of 0 are free")
	outside := cmdTask("outside", "true")
	outside.Resources = res("ports:[40000-40000]")
	runTask(t, ta, fw, outside)
	assertRefused(t, m, "outside", mesos.TASK_LOST, "ports: [40000-40000] not among the agent's [31000-31001]")

	// Nothing was taken by the refused tasks; killing the command task
	// frees its 0.3 cpus and the executor's allowance.
	if u := getState(t, ta).UsedResources; u["cpus"] != 1.1 || u["mem"] != 192.0 {
		t.Fatalf("used after refusals %v", u)
	}
	m.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *fw.ID, TaskID: sleeper.TaskID}})
	m.waitState(t, "sleeper", mesos.TASK_KILLED)
	m.waitExited(t, "sleeper")
	if u := getState(t, ta).UsedResources; u["cpus"] != 0.7 || u["mem"] != 96.0 {
		t.Fatalf("used after the kill %v", u)
	}
	fits := cmdTask("fits", "true")
	fits.Resources = res("cpus:0.3;mem:64;ports:[31001-31001]")
	runTask(t, ta, fw, fits)
	m.waitState(t, "fits", mesos.TASK_FINISHED)
}

func TestShortfall(t *testing.T) {
	total := newTally(res("cpus:2;mem:100;ports:[1-10,20-30];disks:{a,b}"))
	used := newTally(res("cpus:1.9;ports:[5-5];disks:{a}"))
	for _, c := range []struct{ need, want string }{
		{"cpus:0.1;mem:100;ports:[1-4,6-10,20-30];disks:{b}", ""},
		{"cpus:0.1001", ""}, // Mesos' precision: thousandths
		{"cpus:0.2", "cpus: needs 0.2 but 0.1 of 2 are free"},
		{"ports:[9-21]", "ports: [9-21] not among the agent's [1-10, 20-30]"},
		{"ports:[4-6]", "ports: [4-6] overlaps [5-5] in use"},
		{"disks:{a}", `disks: "a" is in use`},
		{"disks:{c}", `disks: "c" is not one of the agent's`},
		{"cpus:0", ""},
	} {
		if got := shortfall(total, used, newTally(res(c.need))); got != c.want {
			t.Errorf("need %s: %q, want %q", c.need, got, c.want)
		}
	}
	if got := newTally(res("ports:[3-4,1-2,8-9]")).ranges["ports"]; len(got) != 2 || got[0].End != 4 || got[1].Begin != 8 {
		t.Errorf("merged ranges %v", got)
	}
}
