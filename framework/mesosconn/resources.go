package mesosconn

import (
	"math"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Want is what a backend needs from one offer.
type Want struct {
	CPUs   float64
	MemMB  float64
	DiskMB float64
	GPUs   float64
	Ports  int // how many ports (any)
}

// Take takes want out of an offer's resources. For each kind it takes reserved resources
// before unreserved ones, in offer order, splitting a resource where only part is needed; each
// piece keeps its role, reservation(s), allocation_info and other metadata, so the pieces can be
// used in a LAUNCH as they are (Mesos requires task resources to match what was offered, incl.
// allocation_info for MULTI_ROLE frameworks). Revocable, shared and persistent-volume
// resources are never taken. When the offer cannot cover want, ok is false, taken nil and rest
// the offer unchanged.
//
// The arithmetic is mesos-go's (Resources.Add1, Subtract1) at Mesos' three-decimal precision.
// Flint does not declare RESERVATION_REFINEMENT and does not set mesos-go's link-time flag
// lib.CapabilityReservationRefinement, so resources are in the pre-refinement format (`role`
// plus `reservation`) and only resources of the same role add up or subtract; Take never mixes
// roles because every piece is cut from one offered resource.
func Take(offer mesos.Resources, want Want) (taken, rest mesos.Resources, ok bool) {
	rest = offer.Clone()
	for _, s := range []struct {
		name   string
		amount float64
	}{{"cpus", want.CPUs}, {"mem", want.MemMB}, {"disk", want.DiskMB}, {"gpus", want.GPUs}} {
		if !takeScalar(offer, &taken, &rest, s.name, s.amount) {
			return nil, offer, false
		}
	}
	if !takePorts(offer, &taken, &rest, want.Ports) {
		return nil, offer, false
	}
	return taken, rest, true
}

// Scalar is the amount of scalar resource name (cpus, mem, disk, gpus) in rs
// that Take can take: reserved and unreserved alike, without revocable,
// shared or persistent-volume resources.
func Scalar(rs mesos.Resources, name string) float64 {
	v := 0.0
	for i := range rs {
		r := &rs[i]
		if r.Name == name && r.GetType() == mesos.SCALAR && r.Revocable == nil && r.Shared == nil && r.GetDisk().GetPersistence() == nil {
			v += r.GetScalar().GetValue()
		}
	}
	return v
}

func takeable(r *mesos.Resource, name string, t mesos.Value_Type, reserved bool) bool {
	return r.Name == name && r.GetType() == t && r.Revocable == nil && r.Shared == nil &&
		r.GetDisk().GetPersistence() == nil && !r.IsUnreserved() == reserved
}

func milli(f float64) int64 { return int64(math.Round(f * 1000)) }

func takeScalar(offer mesos.Resources, taken, rest *mesos.Resources, name string, amount float64) bool {
	need := milli(amount)
	for _, reserved := range []bool{true, false} {
		for i := range offer {
			if need <= 0 {
				return true
			}
			r := &offer[i]
			if !takeable(r, name, mesos.SCALAR, reserved) {
				continue
			}
			n := min(milli(r.GetScalar().GetValue()), need)
			if n <= 0 {
				continue
			}
			piece := mesos.Resources{*r}.Clone()[0]
			piece.Scalar = &mesos.Value_Scalar{Value: float64(n) / 1000}
			taken.Add1(piece)
			rest.Subtract1(piece)
			need -= n
		}
	}
	return need <= 0
}

func takePorts(offer mesos.Resources, taken, rest *mesos.Resources, count int) bool {
	need := uint64(max(count, 0))
	for _, reserved := range []bool{true, false} {
		for i := range offer {
			if need == 0 {
				return true
			}
			r := &offer[i]
			if !takeable(r, "ports", mesos.RANGES, reserved) {
				continue
			}
			var got []mesos.Value_Range
			for _, rg := range r.GetRanges().GetRange() {
				if need == 0 {
					break
				}
				n := min(rg.End-rg.Begin+1, need)
				got = append(got, mesos.Value_Range{Begin: rg.Begin, End: rg.Begin + n - 1})
				need -= n
			}
			if len(got) == 0 {
				continue
			}
			piece := mesos.Resources{*r}.Clone()[0]
			piece.Ranges = &mesos.Value_Ranges{Range: got}
			taken.Add1(piece)
			rest.Subtract1(piece)
		}
	}
	return need == 0
}
