package fine

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/resource"
)

// A new executor that takes ports (mesosbackend.Executor.Ports: its
// servers' port mappings) is launched with exactly the port numbers
// placement's plan names; an agent whose offers hold too few ports gets no
// slot, its offer is declined as unfit and the reason shows in "why not
// placed". Each task takes the slot the plan made for it, the last the
// cpus beside the executor's share.
func TestExecutorPortsComeFromThePlan(t *testing.T) {
	r := newRig(t)
	r.b.set.Ports = 2 // after newRig's Flush: the owner reads it only on the next input
	e := executorID("S0")
	withPorts := offer("o1", "S0", 3, 1024)
	withPorts.Resources = append(withPorts.Resources, resource.RangeResource(resource.Ports, 31005, 31009))
	r.h.Handler().Offers([]mesos.Offer{withPorts, offer("o2", "S1", 3, 1024)})
	r.expect([]string{"decline o2 (unfit)", "demand off"}, []string{"up " + e + " h-S0 3"})
	var filtered []placement.Filtered
	for _, f := range r.b.OfferFilters() {
		if f.AgentID == "S1" {
			filtered = append(filtered, f)
		}
	}
	if len(filtered) != 1 || filtered[0].Reason != placement.OtherShort || !strings.Contains(filtered[0].Detail, "ports: 0 free < 2 needed") {
		t.Fatalf("S1's placement reasons %+v, want ports short", filtered)
	}

	r.b.Apply(launches(e, 1, 2, 3))
	r.settle()
	calls := r.h.Conn.Calls()
	if len(calls) != 1 || calls[0].String() != "launch o1 [1 2 3]" {
		t.Fatalf("connection calls %v, want one launch of tasks 1-3 on o1", calls)
	}
	for i, ti := range calls[0].Tasks {
		if got := resource.Values(ti.Executor.Resources, resource.Ports); !slices.Equal(got, []uint64{31005, 31006}) {
			t.Fatalf("the executor takes ports %v, want the plan's 31005 and 31006", got)
		}
		want := []float64{1, 1, 0.5}[i]
		if got := resource.Amount(ti.Resources, resource.CPUs); got != want {
			t.Errorf("task %s takes %g cpus, want %g", ti.TaskID.Value, got, want)
		}
		if got := resource.Values(ti.Resources, resource.Ports); len(got) != 0 {
			t.Errorf("task %s takes ports %v, want none", ti.TaskID.Value, got)
		}
	}
}

// With an executor image under the Mesos containerizer on a CNI network,
// the per-agent ExecutorInfo maps the two ports the plan took (the result
// server's, then the shuffle server's) in its NetworkInfo and tells the
// executor its agent's host and those ports.
func TestContainerPortMappingsAreThePlansPorts(t *testing.T) {
	r := newRig(t, "flint.mesos.executor.docker.image=flint/exec:test", "flint.mesos.containerizer=mesos", "flint.mesos.network.name=cni1")
	if r.b.set.Ports != 2 {
		t.Fatalf("settings take %d ports per executor, want 2", r.b.set.Ports)
	}
	e := executorID("S0")
	o := offer("o1", "S0", 3, 1024)
	o.Resources = append(o.Resources, resource.RangeResource(resource.Ports, 31005, 31009))
	r.h.Handler().Offers([]mesos.Offer{o})
	r.expect([]string{"demand off"}, []string{"up " + e + " h-S0 3"})
	r.b.Apply(launches(e, 1))
	r.settle()
	calls := r.h.Conn.Calls()
	if len(calls) != 1 || len(calls[0].Tasks) != 1 {
		t.Fatalf("connection calls %v, want one launch", calls)
	}
	ex := calls[0].Tasks[0].Executor
	ports := resource.Values(ex.Resources, resource.Ports)
	ci := ex.GetContainer()
	if ci.GetType() != mesos.ContainerInfo_MESOS || ci.GetMesos().GetImage().GetDocker().GetName() != "flint/exec:test" || len(ci.NetworkInfos) != 1 || ci.NetworkInfos[0].GetName() != "cni1" {
		t.Fatalf("container %v", ci)
	}
	var mapped []uint64
	for _, m := range ci.NetworkInfos[0].PortMappings {
		if m.HostPort != m.ContainerPort {
			t.Fatalf("mapping %v: the executor listens on the host port's number", m)
		}
		mapped = append(mapped, uint64(m.HostPort))
	}
	if len(ports) != 2 || !slices.Equal(mapped, ports) {
		t.Fatalf("the executor takes ports %v and maps %v", ports, mapped)
	}
	env := map[string]string{}
	for _, v := range ex.GetCommand().GetEnvironment().Variables {
		env[v.Name] = v.GetValue()
	}
	if env[contract.EnvResultPort] != strconv.FormatUint(ports[0], 10) || env[contract.EnvShufflePort] != strconv.FormatUint(ports[1], 10) ||
		env[contract.EnvHost] != "h-S0" || env[contract.EnvBindAddress] != "0.0.0.0" {
		t.Fatalf("environment %v, want the result server on %d and the shuffle server on %d at h-S0", env, ports[0], ports[1])
	}
}
