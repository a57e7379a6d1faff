package placement

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement/constraints"
	"github.com/flint-mesos/flint/framework/resource"
)

// Reason says why an offer (or the rest of one) was not used.
type Reason int

// Reasons, from the checkers in the order they run.
const (
	Used            Reason = iota // not filtered
	ShuttingDown                  // the driver is stopping
	CoresCapReached               // flint.cores.max reached
	NoDemand                      // no executor or task is wanted
	ConstraintUnmet               // flint.mesos.constraints unmet
	AgentExcluded                 // the agent is excluded after executor failures
	AgentBackoff                  // launches on the agent back off after launch failures
	LocalityHold                  // held back for the hosts pending tasks prefer
	CPUsShort                     // too few cpus
	MemShort                      // too little memory
	ResourcesShort                // cpus and memory both short
	NoRoom                        // the offer is used up by executors already planned on it
	OtherShort                    // a resource other than cpus and memory (ports, …) is short; Detail names it
)

var reasonNames = [...]string{"used", "shutting down", "cores cap reached", "no demand", "constraint unmet",
	"agent excluded", "agent backing off", "locality hold", "cpus short", "mem short", "resources short", "no room",
	"resource short"}

func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Unfit reports whether the reason means the offer cannot hold the work
// at all (as opposed to: not wanted now, or held back), which is what a
// no-fit error lists.
func (r Reason) Unfit() bool {
	switch r {
	case ConstraintUnmet, AgentExcluded, AgentBackoff, CPUsShort, MemShort, ResourcesShort, OtherShort:
		return true
	}
	return false
}

// Offer is one Mesos offer as placement sees it: its resources (what a
// plan takes launches' pieces from, framework/resource), its agent's
// attributes, and the executors of ours the agent runs.
type Offer struct {
	ID, AgentID, Host string
	Resources         mesos.Resources
	Attributes        []mesos.Attribute
	Executors         []string
}

// FromMesos converts a Mesos offer.
func FromMesos(o *mesos.Offer) Offer {
	po := Offer{ID: o.ID.Value, AgentID: o.AgentID.Value, Host: o.Hostname, Attributes: o.Attributes, Resources: o.Resources}
	for _, e := range o.ExecutorIDs {
		po.Executors = append(po.Executors, e.Value)
	}
	return po
}

// Checks are the whole-offer feasibility checks both Mesos modes run
// (Nomad's FeasibilityCheckers), in this order: the agent's attributes
// against flint.mesos.constraints, the agent's exclusion after executor
// failures, its launch back-off — each at Now. A nil map checks nothing.
type Checks struct {
	Constraints constraints.Constraints
	Excluded    map[string]Exclusion // by agent id
	Backoff     map[string]time.Time // by agent id: no launch before
	Now         time.Time
}

func (c Checks) chain() []checker {
	return []checker{constraintChecker(c.Constraints), exclusionChecker(c.Excluded, c.Now), backoffChecker(c.Backoff, c.Now)}
}

// Admit runs the checks on every offer: the offers that pass, in order,
// and why each other one was filtered. Fine mode admits offers with it as
// they come; coarse mode's Executors runs the same chain.
func Admit(offers []Offer, c Checks) (pass []Offer, filtered []Filtered) {
	chain := c.chain()
	for i := range offers {
		o := &offers[i]
		if reason, why := feasible(o, chain...); reason != Used {
			filtered = append(filtered, Filtered{OfferID: o.ID, AgentID: o.AgentID, Host: o.Host, Reason: reason, Detail: why})
			continue
		}
		pass = append(pass, *o)
	}
	return pass, filtered
}

// shortDetail is the words for resource shortfalls other than cpus and
// memory, which the modes word themselves.
func shortDetail(fs []resource.Shortfall, why string) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ") + " (" + why + ")"
}

// Filtered is an offer not used (or not further used), and why.
type Filtered struct {
	OfferID, AgentID, Host string
	Reason                 Reason
	Detail                 string // the shortfall or cause in words
}

func (f Filtered) String() string {
	if f.Detail == "" {
		return fmt.Sprintf("offer from %s: %s", f.Host, f.Reason)
	}
	return fmt.Sprintf("offer from %s: %s", f.Host, f.Detail)
}

// Exclusion is an agent kept from new executors until Until.
type Exclusion struct {
	Until    time.Time
	Failures int
	Last     string // the last failure
}

// Summary lists the distinct unfit reasons, sorted: the text of a no-fit
// error.
func Summary(fs []Filtered) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !f.Reason.Unfit() {
			continue
		}
		if s := f.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// checker is one feasibility check of a whole offer (Nomad's
// FeasibilityChecker): Used when the offer passes.
type checker func(o *Offer) (Reason, string)

// constraintChecker filters offers whose agent's attributes fail cs.
func constraintChecker(cs constraints.Constraints) checker {
	return func(o *Offer) (Reason, string) {
		if len(cs) == 0 {
			return Used, ""
		}
		if err := cs.Check(o.Attributes); err != nil {
			return ConstraintUnmet, fmt.Sprintf("flint.mesos.constraints %q unmet: %v", cs.String(), err)
		}
		return Used, ""
	}
}

// exclusionChecker filters offers of agents excluded at now.
func exclusionChecker(ex map[string]Exclusion, now time.Time) checker {
	return func(o *Offer) (Reason, string) {
		e, ok := ex[o.AgentID]
		if !ok || !now.Before(e.Until) {
			return Used, ""
		}
		return AgentExcluded, fmt.Sprintf("agent %s excluded until %s after %d executor failures (last: %s)",
			o.AgentID, e.Until.Format(time.RFC3339), e.Failures, e.Last)
	}
}

// backoffChecker filters offers of agents whose launches back off until a
// time after now.
func backoffChecker(bo map[string]time.Time, now time.Time) checker {
	return func(o *Offer) (Reason, string) {
		until, ok := bo[o.AgentID]
		if !ok || !now.Before(until) {
			return Used, ""
		}
		return AgentBackoff, backoffDetail(o.AgentID, until)
	}
}

func backoffDetail(agent string, until time.Time) string {
	return fmt.Sprintf("agent %s: launches refused by the agent; the next try after %s", agent, until.Format(time.RFC3339Nano))
}

// feasible runs the checkers in order; the first that filters wins.
func feasible(o *Offer, cs ...checker) (Reason, string) {
	for _, c := range cs {
		if r, d := c(o); r != Used {
			return r, d
		}
	}
	return Used, ""
}

// CPUString prints cpus with at least one decimal ("1.0", "2.1", "0.25").
func CPUString(v float64) string {
	s := strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

const eps = 1e-9
