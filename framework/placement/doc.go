// Package placement decides where Mesos offers go, for both Mesos modes:
// a pure function from (offers, demand, executors running, exclusions,
// back-offs, constraints, locality wants, now) to a plan — executors to
// launch on which offer (coarse), task slots per agent (fine), offers to
// decline with which filter — and a reason for every offer or part of one
// it did not use. It follows Nomad's scheduler: small feasibility checkers
// each filter an offer with a named Reason (a constant, with the shortfall
// in words), the plan is data the backend only applies, and the tests are
// golden scripts (testdata/*.txt, cockroachdb/datadriven, -rewrite).
//
// Placement owns every fit decision. Offers carry their mesos.Resources;
// fit is judged and pieces are cut with framework/resource's one model
// (scalars, ranges such as ports, sets), and each plan says exactly what
// every launch takes from its offer (ExecutorLaunch.Resources and .Ports;
// AgentSlots.Executor, .ExecutorPorts and .Slot), which the backends use
// as they are, without checking fit again. One checker chain (Checks:
// constraints from the constraints subpackage, agent exclusion, launch
// back-off) serves both modes: Admit for fine mode's fresh offers, and
// inside Executors and Slots.
//
// The package does no I/O, reads no clock (now is an input) and keeps no
// state between calls: what must persist (when a locality hold began) is
// returned in the plan and handed back by the caller.
//
//	Admit(offers, Checks)      → offers that pass, Filtered  (fine: offers as they come)
//	Executors(ExecutorRequest) → ExecutorPlan   (coarse: Spark's buildMesosTasks)
//	Slots(SlotRequest)         → SlotPlan       (fine: per-agent executor and task slots)
//	Filtered.String, Summary                   (what Context.Explain and the no-fit aborts say)
package placement
