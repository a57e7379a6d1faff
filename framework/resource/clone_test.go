package resource

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// benchOffer is an agent's offer as the fine backend sizes it: reserved
// and unreserved cpus and mem, ports, a disk.
func benchOffer() mesos.Resources {
	role := "flint"
	return mesos.Resources{
		{Name: CPUs, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}, Role: &role,
			Reservation: &mesos.Resource_ReservationInfo{Principal: &role}},
		{Name: CPUs, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 6}},
		{Name: Mem, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 16384}},
		{Name: Ports, Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 32000}}}},
		{Name: "disk", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
	}
}

// clone is a deep copy equal to mesos-go's Clone: equal resources, no
// pointer shared (changing the copy leaves the original).
func TestCloneIsADeepCopy(t *testing.T) {
	offer := benchOffer()
	got := clone(offer)
	if len(got) != len(offer) {
		t.Fatalf("clone %v, want %v", got, offer)
	}
	for i := range got {
		if !got[i].Equal(offer[i]) {
			t.Errorf("resource %d: %v, want %v", i, got[i], offer[i])
		}
	}
	got[0].Scalar.Value, got[0].Reservation.Principal = 99, nil
	got[3].Ranges.Range[0].End = 31001
	if offer[0].Scalar.Value != 2 || offer[0].Reservation.Principal == nil || offer[3].Ranges.Range[0].End != 32000 {
		t.Fatalf("changing the clone changed the original: %v", offer)
	}
	if clone(nil) != nil {
		t.Error("clone(nil) is not nil")
	}
}

// BenchmarkTakeSlots is a fine driver sizing one agent's slots: 8 one-cpu
// Takes, each from what the last left; beside it the same copies through
// mesos-go's Clone (gogo's reflective proto.Clone), the way Take copied
// before.
func BenchmarkTakeSlots(b *testing.B) {
	offer := benchOffer()
	b.Run("take", func(b *testing.B) {
		for range b.N {
			rest := offer
			for range 8 {
				_, left, ok := Take(rest, Ask{ScalarNeed(CPUs, 1)})
				if !ok {
					b.Fatal("short")
				}
				rest = left
			}
		}
	})
	b.Run("copies/clone", func(b *testing.B) {
		for range b.N {
			for range 8 {
				_ = clone(offer)
			}
		}
	})
	b.Run("copies/mesos-go", func(b *testing.B) {
		for range b.N {
			for range 8 {
				_ = offer.Clone()
			}
		}
	})
}
