package mesosconn

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/resource"
)

// Want is what a caller needs from one offer, in the fields Take has
// always had; framework/resource's Ask is the general form.
type Want struct {
	CPUs   float64
	MemMB  float64
	DiskMB float64
	GPUs   float64
	Ports  int // how many ports (any)
}

// Ask is want in the resource model's terms.
func (w Want) Ask() resource.Ask {
	return resource.Ask{resource.ScalarNeed(resource.CPUs, w.CPUs), resource.ScalarNeed(resource.Mem, w.MemMB),
		resource.ScalarNeed(resource.Disk, w.DiskMB), resource.ScalarNeed(resource.GPUs, w.GPUs), resource.RangeNeed(resource.Ports, w.Ports)}
}

// Take is resource.Take of want, for callers outside the Mesos backends
// (the dispatcher places driver tasks itself). The Mesos backends take
// nothing themselves: framework/placement's plans carry each launch's
// resources.
func Take(offer mesos.Resources, want Want) (taken, rest mesos.Resources, ok bool) {
	return resource.Take(offer, want.Ask())
}

// Scalar is resource.Amount: the amount of scalar resource name (cpus,
// mem, disk, gpus) in rs that Take can take.
func Scalar(rs mesos.Resources, name string) float64 { return resource.Amount(rs, name) }
