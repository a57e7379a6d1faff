package mesosconn

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

func scalarRes(name string, v float64, role string, reserved bool) mesos.Resource {
	r := mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}, Role: &role,
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: ptr("batch")}}
	if reserved {
		r.Reservation = &mesos.Resource_ReservationInfo{Principal: ptr("ops")}
	}
	return r
}

func portsRes(role string, rs ...mesos.Value_Range) mesos.Resource {
	return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: rs}, Role: &role,
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: ptr("batch")}}
}

func offerResources() mesos.Resources {
	return mesos.Resources{
		scalarRes("cpus", 4, "*", false),
		scalarRes("cpus", 2, "batch", true),
		scalarRes("mem", 8192, "*", false),
		scalarRes("gpus", 1, "*", false),
		portsRes("*", mesos.Value_Range{Begin: 31000, End: 31001}, mesos.Value_Range{Begin: 31010, End: 31020}),
		{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 8}, Role: ptr("*"), Revocable: &mesos.Resource_RevocableInfo{}},
	}
}

func TestTakePrefersReservedAndKeepsMetadata(t *testing.T) {
	offer := offerResources()
	taken, rest, ok := Take(offer, Want{CPUs: 3.5, MemMB: 1024.5, GPUs: 1, Ports: 3})
	if !ok {
		t.Fatal("Take failed")
	}
	// Every reserved cpu first, then 1.5 unreserved.
	var reservedCPU, unreservedCPU float64
	for _, r := range taken {
		if r.Revocable != nil {
			t.Errorf("took revocable %v", r)
		}
		if r.GetAllocationInfo().GetRole() != "batch" {
			t.Errorf("%s lost its allocation_info: %v", r.Name, r)
		}
		if r.Name == "cpus" {
			if r.IsReserved("batch") && r.Reservation.GetPrincipal() == "ops" {
				reservedCPU += r.GetScalar().GetValue()
			} else if r.IsUnreserved() {
				unreservedCPU += r.GetScalar().GetValue()
			}
		}
	}
	if reservedCPU != 2 || unreservedCPU != 1.5 {
		t.Errorf("took %v reserved + %v unreserved cpus, want 2 + 1.5", reservedCPU, unreservedCPU)
	}
	if m, _ := resources.Memory(taken...); m != 1024 { // mesos-go rounds MB down to an integer
		t.Errorf("mem taken %v", m)
	}
	if p, _ := resources.Ports(taken...); p.Size() != 3 || p[0].Begin != 31000 || p[1].Begin != 31010 || p[1].End != 31010 {
		t.Errorf("ports taken %v", p)
	}
	// taken + rest is the offer again.
	if !resources.Equivalent(taken.Plus(rest...), offer) {
		t.Errorf("taken %v + rest %v != offer %v", taken, rest, offer)
	}
	if c, _ := resources.CPUs(rest...); c != 2.5+8 {
		t.Errorf("cpus left %v, want 2.5 unreserved + 8 revocable", c)
	}
}

func TestTakeNotEnough(t *testing.T) {
	offer := offerResources()
	for _, w := range []Want{{CPUs: 6.001}, {MemMB: 9000}, {GPUs: 2}, {Ports: 14}, {DiskMB: 1}} {
		taken, rest, ok := Take(offer, w)
		if ok || taken != nil || !resources.Equivalent(rest, offer) {
			t.Errorf("Take(%+v) = %v, %v, %v; want not ok with the offer untouched", w, taken, rest, ok)
		}
	}
	if taken, _, ok := Take(offer, Want{}); !ok || len(taken) != 0 {
		t.Errorf("Take(nothing) = %v, %v", taken, ok)
	}
}

// Scalar counts what Take can take: reserved and unreserved, never
// revocable, shared or persistent-volume resources.
func TestScalarIsWhatTakeCanTake(t *testing.T) {
	offer := append(offerResources(),
		mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 16}, Role: ptr("*"), Shared: &mesos.Resource_SharedInfo{}},
		mesos.Resource{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 100}, Role: ptr("*")},
		mesos.Resource{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 500}, Role: ptr("batch"),
			Reservation: &mesos.Resource_ReservationInfo{Principal: ptr("ops")},
			Disk:        &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: "vol"}, Volume: &mesos.Volume{ContainerPath: "data"}}},
	)
	for name, want := range map[string]float64{"cpus": 6, "mem": 8192, "gpus": 1, "disk": 100, "ports": 0, "nothing": 0} {
		got := Scalar(offer, name)
		if got != want {
			t.Errorf("Scalar(%s) = %g, want %g", name, got, want)
		}
		w := map[string]Want{"cpus": {CPUs: got}, "mem": {MemMB: got}, "gpus": {GPUs: got}, "disk": {DiskMB: got}}
		if wt, ok := w[name]; ok {
			if _, _, ok := Take(offer, wt); !ok {
				t.Errorf("Take cannot take the %g %s Scalar reports", got, name)
			}
			more := map[string]Want{"cpus": {CPUs: got + 0.001}, "mem": {MemMB: got + 0.001}, "gpus": {GPUs: got + 0.001}, "disk": {DiskMB: got + 0.001}}[name]
			if _, _, ok := Take(offer, more); ok {
				t.Errorf("Take took more %s than the %g Scalar reports", name, got)
			}
		}
	}
	if got := Scalar(nil, "cpus"); got != 0 {
		t.Errorf("Scalar(nil) = %g", got)
	}
}
