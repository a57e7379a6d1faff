package resource

import (
	"slices"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
)

func offer() mesos.Resources {
	reserved := RangeResource(Ports, 40000, 40000)
	role := "batch"
	reserved.Role, reserved.Reservation = &role, &mesos.Resource_ReservationInfo{Principal: &role}
	return mesos.Resources{
		ScalarResource(CPUs, 4), ScalarResource(Mem, 1024),
		RangeResource(Ports, 31000, 31001, 31010, 31020), reserved,
		SetResource("disks", "sda", "sdb", "sdc"),
	}
}

// Ports are a range resource: Take names the values it took, reserved
// first, then the lowest of each unreserved range in order.
func TestTakeRangesAndSets(t *testing.T) {
	o := offer()
	taken, rest, ok := Take(o, Ask{ScalarNeed(CPUs, 1.5), RangeNeed(Ports, 4), SetNeed("disks", 2)})
	if !ok {
		t.Fatal("Take failed")
	}
	if got := Values(taken, Ports); !slices.Equal(got, []uint64{40000, 31000, 31001, 31010}) {
		t.Errorf("ports taken %v, want the reserved one, then the lowest", got)
	}
	if got := Items(taken, "disks"); !slices.Equal(got, []string{"sda", "sdb"}) {
		t.Errorf("disks taken %v", got)
	}
	if Free(rest, Ports, Ranges) != 10 || Free(rest, "disks", Set) != 1 || Amount(rest, CPUs) != 2.5 {
		t.Errorf("rest %v: want 10 ports, 1 disk, 2.5 cpus", rest)
	}
	if !resources.Equivalent(taken.Plus(rest...), o) {
		t.Errorf("taken %v + rest %v != offer %v", taken, rest, o)
	}
	if got := Values(rest, Ports); got[0] != 31011 || len(got) != 10 {
		t.Errorf("ports left %v", got)
	}
}

// Short names each need the offer cannot cover, and is empty exactly when
// Take takes the ask.
func TestShortAgreesWithTake(t *testing.T) {
	o := offer()
	for _, c := range []struct {
		ask   Ask
		short []string
	}{
		{Ask{ScalarNeed(CPUs, 4), RangeNeed(Ports, 14), SetNeed("disks", 3)}, nil},
		{Ask{ScalarNeed(CPUs, 4.001)}, []string{"cpus 4 < 4.001 needed"}},
		{Ask{ScalarNeed(Mem, 2048), RangeNeed(Ports, 15)}, []string{"mem 1024 < 2048 needed", "ports: 14 free < 15 needed"}},
		{Ask{SetNeed("disks", 4), RangeNeed("other", 1)}, []string{"disks: 3 free < 4 needed", "other: 0 free < 1 needed"}},
		{Ask{ScalarNeed(GPUs, 0), RangeNeed(Ports, 0)}, nil},
	} {
		var got []string
		for _, s := range Short(o, c.ask) {
			got = append(got, s.String())
		}
		if !slices.Equal(got, c.short) {
			t.Errorf("Short(%v) = %q, want %q", c.ask, got, c.short)
		}
		taken, rest, ok := Take(o, c.ask)
		if ok != (len(c.short) == 0) {
			t.Errorf("Take(%v) ok = %v, Short says %q", c.ask, ok, got)
		}
		if !ok && (taken != nil || !resources.Equivalent(rest, o)) {
			t.Errorf("Take(%v) failed but changed the offer: %v, %v", c.ask, taken, rest)
		}
	}
}

func TestAskOf(t *testing.T) {
	a := Ask{ScalarNeed(CPUs, 2), RangeNeed(Ports, 3)}
	if a.Of(Ports).Count != 3 || a.Of(Mem) != (Need{}) {
		t.Errorf("Of: %v %v", a.Of(Ports), a.Of(Mem))
	}
}
