package fine

import (
	"math"
	"strconv"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// executorID and mesosTaskID are the ids of a driver of a new framework
// (no id tag), which the unit tests' backends are.
func executorID(agentID string) string { return ExecutorIDPrefix + agentID }
func mesosTaskID(id uint64) string     { return strconv.FormatUint(id, 10) }

// A driver taking over a framework tags its Mesos task and executor ids
// (mesosbackend.TaskIDPrefix), and its launches still find the agent in the
// executor id the driver loop chose: its executor on agent S0 is
// flint-fine-<tag>S0 and Flint task 7 is Mesos task <tag>7, never ids a
// predecessor's executor or task has.
func TestTaggedIDsLaunchOnTheirAgent(t *testing.T) {
	b := newTestBackend(&recorder{})
	b.idPrefix = "0a1b2c3d-"
	b.set = settings{Settings: mesosbackend.Settings{Executor: mesosbackend.Executor{MemMB: 64}}, taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	now := time.Unix(1000, 0)
	b.clock = nowFunc(func() time.Time { return now })
	b.held["o1"] = &heldOffer{offer: mesos.Offer{ID: mesos.OfferID{Value: "o1"}, AgentID: mesos.AgentID{Value: "S0"}, Hostname: "h0",
		Resources: mesos.Resources{
			{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}},
			{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
		}}, since: now}
	b.resize(now, map[mesosconn.DeclineReason][]mesos.OfferID{})

	exec := b.executorID("S0")
	if exec != "flint-fine-0a1b2c3d-S0" || b.agentOf(exec) != "S0" {
		t.Fatalf("executor id %q (agent %q), want flint-fine-0a1b2c3d-S0 on S0", exec, b.agentOf(exec))
	}
	b.launchTasks([]*flintpb.TaskDescription{{TaskId: 7, Attempt: 1, ExecutorId: exec}})
	tk := b.tasks["0a1b2c3d-7"]
	if tk == nil || tk.agentID != "S0" || tk.execID != exec || len(b.tasks) != 1 {
		t.Fatalf("live tasks %v, want Mesos task 0a1b2c3d-7 on S0's executor %s", b.tasks, exec)
	}
	if info := b.agents["S0"].info; info == nil || info.ExecutorID.Value != exec {
		t.Fatalf("S0's ExecutorInfo %+v, want id %s", info, exec)
	}
	if b.mesosTaskID(7) == mesosTaskID(7) || b.executorID("S0") == executorID("S0") {
		t.Fatal("the tagged ids equal a new framework's")
	}
}

// WithIDTag gives a successor (flint.mesos.driver.frameworkId) the tag it
// names instead of a random one; a new framework's ids stay plain with it.
func TestWithIDTag(t *testing.T) {
	m, _ := backend.ParseMaster("mesos://127.0.0.1:5050")
	for _, c := range []struct {
		conf []string
		exec string
	}{
		{[]string{"flint.mesos.driver.frameworkId=fw-1"}, "flint-fine-d7-S0"},
		{nil, "flint-fine-S0"},
	} {
		cfg, err := config.Load(config.LoadOptions{Conf: append([]string{"flint.master=mesos://127.0.0.1:5050"}, c.conf...)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewBackend(backend.Params{Master: m, Config: cfg}, WithIDTag("d7"))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.executorID("S0"); got != c.exec {
			t.Errorf("with %v: executor id %q, want %q", c.conf, got, c.exec)
		}
	}
}
