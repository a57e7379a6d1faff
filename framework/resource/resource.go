package resource

import (
	"fmt"
	"math"
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Kind is how a resource is measured.
type Kind int

// Kinds, as Mesos' Value types.
const (
	Scalar Kind = iota // an amount (mesos.SCALAR)
	Ranges             // values out of ranges, such as ports (mesos.RANGES)
	Set                // named items (mesos.SET)
)

func (k Kind) String() string {
	switch k {
	case Scalar:
		return "scalar"
	case Ranges:
		return "ranges"
	case Set:
		return "set"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func (k Kind) mesos() mesos.Value_Type {
	switch k {
	case Ranges:
		return mesos.RANGES
	case Set:
		return mesos.SET
	}
	return mesos.SCALAR
}

// Names of the resources Flint asks for.
const (
	CPUs  = "cpus"
	Mem   = "mem"
	Disk  = "disk"
	GPUs  = "gpus"
	Ports = "ports"
)

// Need is one resource a launch takes: Amount of a scalar, or Count values
// of a range resource or items of a set.
type Need struct {
	Name   string
	Kind   Kind
	Amount float64 // Scalar
	Count  int     // Ranges, Set
}

// ScalarNeed asks for amount of scalar resource name.
func ScalarNeed(name string, amount float64) Need {
	return Need{Name: name, Kind: Scalar, Amount: amount}
}

// RangeNeed asks for n values of range resource name (n ports: RangeNeed(Ports, n)).
func RangeNeed(name string, n int) Need { return Need{Name: name, Kind: Ranges, Count: n} }

// SetNeed asks for n items of set resource name.
func SetNeed(name string, n int) Need { return Need{Name: name, Kind: Set, Count: n} }

// size is what the need asks for, in the unit Free counts.
func (n Need) size() float64 {
	if n.Kind == Scalar {
		return n.Amount
	}
	return float64(max(n.Count, 0))
}

func (n Need) String() string {
	if n.Kind == Scalar {
		return fmt.Sprintf("%s:%g", n.Name, n.Amount)
	}
	return fmt.Sprintf("%s:%d", n.Name, max(n.Count, 0))
}

// Ask is what one launch takes from an offer, taken in order.
type Ask []Need

// Of returns the ask's need of name (the zero Need when it has none).
func (a Ask) Of(name string) Need {
	for _, n := range a {
		if n.Name == name {
			return n
		}
	}
	return Need{}
}

// Take takes ask out of an offer's resources. For each need it takes
// reserved resources before unreserved ones, in offer order, splitting a
// resource where only part is needed (a scalar's amount, the lowest values
// of a range, the first items of a set); each piece keeps its role,
// reservation(s), allocation_info and other metadata, so the pieces can be
// used in a LAUNCH as they are (Mesos requires task resources to match what
// was offered, incl. allocation_info for MULTI_ROLE frameworks). Revocable,
// shared and persistent-volume resources are never taken. When the offer
// cannot cover ask, ok is false, taken nil and rest the offer unchanged.
//
// The arithmetic is mesos-go's (Resources.Add1, Subtract1) at Mesos'
// three-decimal precision. Flint does not declare RESERVATION_REFINEMENT
// and does not set mesos-go's link-time flag
// lib.CapabilityReservationRefinement, so resources are in the
// pre-refinement format (`role` plus `reservation`) and only resources of
// the same role add up or subtract; Take never mixes roles because every
// piece is cut from one offered resource.
func Take(offer mesos.Resources, ask Ask) (taken, rest mesos.Resources, ok bool) {
	rest = clone(offer)
	for _, n := range ask {
		var enough bool
		switch n.Kind {
		case Scalar:
			enough = takeScalar(offer, &taken, &rest, n.Name, n.Amount)
		case Ranges:
			enough = takeRanges(offer, &taken, &rest, n.Name, n.Count)
		case Set:
			enough = takeSet(offer, &taken, &rest, n.Name, n.Count)
		}
		if !enough {
			return nil, offer, false
		}
	}
	return taken, rest, true
}

// Free is how much of resource name of kind k Take can take from rs:
// the amount of a scalar, the count of a range resource's values or of a
// set's items; reserved and unreserved alike, without revocable, shared or
// persistent-volume resources.
func Free(rs mesos.Resources, name string, k Kind) float64 {
	v := 0.0
	for i := range rs {
		r := &rs[i]
		if !usable(r, name, k.mesos()) {
			continue
		}
		switch k {
		case Scalar:
			v += r.GetScalar().GetValue()
		case Ranges:
			for _, rg := range r.GetRanges().GetRange() {
				v += float64(rg.End - rg.Begin + 1)
			}
		case Set:
			v += float64(len(r.GetSet().GetItem()))
		}
	}
	return v
}

// Amount is the amount of scalar resource name Take can take from rs.
func Amount(rs mesos.Resources, name string) float64 { return Free(rs, name, Scalar) }

// Values lists the values of range resource name in rs, lowest first
// within each piece, in piece order: the port numbers a launch took.
func Values(rs mesos.Resources, name string) []uint64 {
	var out []uint64
	for i := range rs {
		r := &rs[i]
		if r.Name != name || r.GetType() != mesos.RANGES {
			continue
		}
		for _, rg := range r.GetRanges().GetRange() {
			for v := rg.Begin; v <= rg.End; v++ {
				out = append(out, v)
			}
		}
	}
	return out
}

// Items lists the items of set resource name in rs, in piece order.
func Items(rs mesos.Resources, name string) []string {
	var out []string
	for i := range rs {
		if r := &rs[i]; r.Name == name && r.GetType() == mesos.SET {
			out = append(out, r.GetSet().GetItem()...)
		}
	}
	return out
}

// Shortfall is one need an offer cannot cover: Have is what Free counts.
type Shortfall struct {
	Need
	Have float64
}

func (s Shortfall) String() string {
	if s.Kind == Scalar {
		return fmt.Sprintf("%s %g < %g needed", s.Name, s.Have, s.Amount)
	}
	return fmt.Sprintf("%s: %g free < %d needed", s.Name, s.Have, s.Count)
}

// Short lists the needs of ask that rs cannot cover, each on its own (in
// ask order, at Mesos' three-decimal precision): empty exactly when Take
// would take ask, for an ask that names each resource once.
func Short(rs mesos.Resources, ask Ask) []Shortfall {
	var out []Shortfall
	for _, n := range ask {
		have := Free(rs, n.Name, n.Kind)
		if short := n.Kind == Scalar && milli(have) < milli(n.Amount) || n.Kind != Scalar && have < n.size(); short {
			out = append(out, Shortfall{Need: n, Have: have})
		}
	}
	return out
}

// usable is whether Take may take r as resource name of type t.
func usable(r *mesos.Resource, name string, t mesos.Value_Type) bool {
	return r.Name == name && r.GetType() == t && r.Revocable == nil && r.Shared == nil && r.GetDisk().GetPersistence() == nil
}

func takeable(r *mesos.Resource, name string, t mesos.Value_Type, reserved bool) bool {
	return usable(r, name, t) && !r.IsUnreserved() == reserved
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
			piece := cloneOne(r)
			piece.Scalar = &mesos.Value_Scalar{Value: float64(n) / 1000}
			addOwn(taken, piece)
			rest.Subtract1(piece)
			need -= n
		}
	}
	return need <= 0
}

func takeRanges(offer mesos.Resources, taken, rest *mesos.Resources, name string, count int) bool {
	need := uint64(max(count, 0))
	for _, reserved := range []bool{true, false} {
		for i := range offer {
			if need == 0 {
				return true
			}
			r := &offer[i]
			if !takeable(r, name, mesos.RANGES, reserved) {
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
			piece := cloneOne(r)
			piece.Ranges = &mesos.Value_Ranges{Range: got}
			addOwn(taken, piece)
			rest.Subtract1(piece)
		}
	}
	return need == 0
}

func takeSet(offer mesos.Resources, taken, rest *mesos.Resources, name string, count int) bool {
	need := max(count, 0)
	for _, reserved := range []bool{true, false} {
		for i := range offer {
			if need == 0 {
				return true
			}
			r := &offer[i]
			if !takeable(r, name, mesos.SET, reserved) {
				continue
			}
			items := r.GetSet().GetItem()
			n := min(len(items), need)
			if n == 0 {
				continue
			}
			piece := cloneOne(r)
			piece.Set = &mesos.Value_Set{Item: append([]string(nil), items[:n]...)}
			addOwn(taken, piece)
			rest.Subtract1(piece)
			need -= n
		}
	}
	return need == 0
}

// Unreserved builders, for tests and simulated offers.

// ScalarResource is an unreserved scalar resource of role "*".
func ScalarResource(name string, v float64) mesos.Resource {
	role := "*"
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}, Role: &role}
}

// RangeResource is an unreserved range resource of role "*" holding the
// ranges given as begin, end pairs.
func RangeResource(name string, bounds ...uint64) mesos.Resource {
	role := "*"
	var rs []mesos.Value_Range
	for i := 0; i+1 < len(bounds); i += 2 {
		rs = append(rs, mesos.Value_Range{Begin: bounds[i], End: bounds[i+1]})
	}
	return mesos.Resource{Name: name, Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: rs}, Role: &role}
}

// SetResource is an unreserved set resource of role "*".
func SetResource(name string, items ...string) mesos.Resource {
	role := "*"
	return mesos.Resource{Name: name, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}, Role: &role}
}

// clone is a deep copy of rs, as rs.Clone, through the messages' generated
// Marshal and Unmarshal instead of gogo's reflective proto.Clone, which
// was most of a fine driver's placement CPU (every slot a Take, every Take
// a copy of the agent's offer; docs/benchmarks.md, issue 28).
func clone(rs mesos.Resources) mesos.Resources {
	if rs == nil {
		return nil
	}
	out := make(mesos.Resources, len(rs))
	for i := range rs {
		out[i] = cloneOne(&rs[i])
	}
	return out
}

// cloneOne is a deep copy of r; a resource that does not survive the round
// trip (not reached: Unmarshal reads what Marshal wrote) is copied by
// proto.Clone.
func cloneOne(r *mesos.Resource) mesos.Resource {
	var c mesos.Resource
	if b, err := r.Marshal(); err == nil && c.Unmarshal(b) == nil {
		return c
	}
	return mesos.Resources{*r}.Clone()[0]
}

// addOwn adds piece, a copy no one else holds, to rs as rs.Add1 does
// (merged into an addable resource, else appended), without Add1's
// reflective copy of a piece it appends.
func addOwn(rs *mesos.Resources, piece mesos.Resource) {
	if piece.Validate() != nil || piece.IsEmpty() {
		return
	}
	for i := range *rs {
		if r := &(*rs)[i]; r.Addable(piece) {
			r.Add(piece)
			return
		}
	}
	*rs = append(*rs, piece)
}
