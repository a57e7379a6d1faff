package coarse

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/resource"
)

// An executor that takes ports (mesosbackend.Executor.Ports: its servers'
// port mappings) is launched with exactly the port numbers placement's
// plan names, out of the offer's ports ranges; an offer whose ports run
// out is declined as unfit, and the reason shows in "why not placed" and
// in the no-executor explanation.
func TestExecutorPortsComeFromThePlan(t *testing.T) {
	b := testBackend(t, "flint.executor.cores=1", "flint.executor.memory=256m")
	b.set.Ports = 2
	withPorts := offer("o1", "a1", 2, 4096, 0)
	withPorts.Resources = append(withPorts.Resources, resource.RangeResource(resource.Ports, 31000, 31002, 31100, 31100))
	without := offer("o2", "a2", 2, 4096, 0)
	p := b.planOffers([]mesos.Offer{withPorts, without}, nil, time.Unix(1000, 0))
	if got := summary(b, p); got != "o1:1,1 unfit:o2" {
		t.Fatalf("plan %q, want two executors on o1 and o2 declined", got)
	}
	tis := p.launches[mesos.OfferID{Value: "o1"}]
	for i, want := range [][]uint64{{31000, 31001}, {31002, 31100}} {
		if got := resource.Values(tis[i].Resources, resource.Ports); !slices.Equal(got, want) {
			t.Errorf("executor %d's task takes ports %v, want %v", i, got, want)
		}
		if got := p.execs[i].ports; !slices.Equal(got, want) {
			t.Errorf("executor %d records ports %v, want %v", i, got, want)
		}
	}
	var filtered []placement.Filtered
	for _, f := range b.diag.filtered { // what OfferFilters publishes (the owner's view)
		if f.OfferID == "o2" {
			filtered = append(filtered, f)
		}
	}
	if len(filtered) != 1 || filtered[0].Reason != placement.OtherShort || !strings.Contains(filtered[0].Detail, "ports: 0 free < 2 needed") {
		t.Fatalf("o2's placement reasons %+v, want ports short", filtered)
	}
	if why := b.explain(); !strings.Contains(why, "offer from a2.host: ports: 0 free < 2 needed (executor port mappings)") {
		t.Fatalf("explanation %q does not name the ports", why)
	}
}

// With an executor image, each executor's task carries the Docker
// ContainerInfo whose port mapping is the port its plan took from the
// offer, its environment tells the executor to listen on it, and the task
// has flint.mesos.task.labels.
func TestContainerPortMappingIsThePlansPort(t *testing.T) {
	b := testBackend(t, "flint.executor.cores=1", "flint.executor.memory=256m",
		"flint.mesos.executor.docker.image=flint/exec:test", "flint.mesos.task.labels=team:data")
	if b.set.Ports != 1 {
		t.Fatalf("settings take %d ports per executor, want 1 (the shuffle server)", b.set.Ports)
	}
	o := offer("o1", "a1", 2, 4096, 0)
	o.Resources = append(o.Resources, resource.RangeResource(resource.Ports, 31007, 31008))
	p := b.planOffers([]mesos.Offer{o}, nil, time.Unix(1000, 0))
	tis := p.launches[mesos.OfferID{Value: "o1"}]
	if len(tis) != 2 {
		t.Fatalf("%d launches, want 2", len(tis))
	}
	for _, ti := range tis {
		port := resource.Values(ti.Resources, resource.Ports)
		d := ti.GetContainer().GetDocker()
		if ti.GetContainer().GetType() != mesos.ContainerInfo_DOCKER || d.GetImage() != "flint/exec:test" || d.GetNetwork() != mesos.ContainerInfo_DockerInfo_BRIDGE {
			t.Fatalf("task %s container %v, want the image under Docker on its bridge", ti.TaskID.Value, ti.GetContainer())
		}
		if len(port) != 1 || len(d.PortMappings) != 1 || uint64(d.PortMappings[0].HostPort) != port[0] || uint64(d.PortMappings[0].ContainerPort) != port[0] {
			t.Fatalf("task %s takes ports %v but maps %v", ti.TaskID.Value, port, d.PortMappings)
		}
		env := map[string]string{}
		for _, v := range ti.GetCommand().GetEnvironment().Variables {
			env[v.Name] = v.GetValue()
		}
		want := strconv.FormatUint(port[0], 10)
		if env[contract.EnvShufflePort] != want || env[contract.EnvShuffleHostPort] != want || env[contract.EnvBindAddress] != "0.0.0.0" {
			t.Fatalf("task %s environment %v, want the shuffle server on %s", ti.TaskID.Value, env, want)
		}
		if l := ti.GetLabels().GetLabels(); len(l) != 1 || l[0].Key != "team" || l[0].GetValue() != "data" {
			t.Fatalf("task %s labels %v", ti.TaskID.Value, l)
		}
	}
}

// With an executor image, an agent whose offer has no port left for the
// shuffle server's mapping gets no executor — on every agent here — and
// "why not placed" and the no-executor explanation say ports are short.
func TestContainerPortsExhaustedOnEveryAgent(t *testing.T) {
	b := testBackend(t, "flint.executor.cores=1", "flint.executor.memory=256m", "flint.mesos.executor.docker.image=flint/exec:test")
	p := b.planOffers([]mesos.Offer{offer("o1", "a1", 2, 4096, 0), offer("o2", "a2", 2, 4096, 0)}, nil, time.Unix(1000, 0))
	if got := summary(b, p); got != "unfit:o1 unfit:o2" {
		t.Fatalf("plan %q, want both offers declined as unfit", got)
	}
	for _, f := range b.diag.filtered {
		if f.Reason != placement.OtherShort || !strings.Contains(f.Detail, "ports: 0 free < 1 needed") {
			t.Fatalf("placement reason %+v, want ports short", f)
		}
	}
	why := b.explain()
	for _, h := range []string{"a1.host", "a2.host"} {
		if !strings.Contains(why, "offer from "+h+": ports: 0 free < 1 needed (executor port mappings)") {
			t.Fatalf("explanation %q does not name %s's ports", why, h)
		}
	}
}
