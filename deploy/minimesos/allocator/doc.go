// Package allocator is minimesos' resource allocator: a simplified but faithful model of
// Apache Mesos' HierarchicalAllocator with its DRF sorters, written as a pure state machine.
//
// # Purity
//
// The Allocator has no goroutines, no clock, no I/O and no global randomness, and it is not
// safe for concurrent use: the master owns it under its lock. Time comes in as `now`
// arguments; the only randomness (the agent order of each round) comes from the *rand.Rand
// given to New. The same calls with the same seed give the same offers. Go map iteration never
// decides an outcome: every ordering is by share and name, or sorted.
//
// # Model
//
// Each agent has a total; the allocator books, per agent, records (framework, role) →
// resources for everything offered or in use. available = total − Σ records. Resources are
// kept without allocation_info; offers carry allocation_info.role (as Mesos does — the master
// strips it for frameworks without MULTI_ROLE), and Recover accepts resources with or without
// it.
//
// A round (Allocate, or AllocateAgents for "allocate on release") visits agents in a seeded
// shuffled order. For each active agent with available resources:
//
//  1. If anything unreserved is available, roles are taken in weighted-DRF order (role share =
//     max over scalar kinds of role allocation / cluster total, divided by the role's weight;
//     ties by name) and, within a role, frameworks in DRF order (framework allocation in that
//     role / cluster total). The first framework that may take the resources gets all of the
//     agent's unreserved resources plus those reserved for its role (one offer per agent and
//     framework per round, as in Mesos).
//  2. What stays (reservations of other roles) goes, reservation role by reservation role, to
//     the lowest-share eligible framework of that role (or, with hierarchical role names, of
//     one of its sub-roles).
//
// A framework may take resources on an agent unless it is inactive, suppressed for the role,
// at Config.MaxOutstandingOffers unanswered offers, not in the role, not GPU-aware while the
// agent has gpus, or filtered: a filter installed by Recover(…, refuse, now) refuses, until
// now+refuse, any offer on that agent for that role that is contained in the refused
// resources (a strictly larger offer passes, as in Mesos). Filters expire by time, checked
// against the `now` of each round; Revive drops them.
//
// Shares are computed once per round and kept in indexed binary heaps (roles, and frameworks
// per role); an allocation only re-keys the chosen role and framework, so a round costs
// O(agents · log frameworks) rather than Mesos' sort per agent. Shares use scalar resources
// only (cpus, mem, disk, gpus…); ranges and sets (ports) are allocated but do not weigh in
// DRF, like Mesos' sorter.
//
// # Reservations
//
// A resource is reserved when it has Resource.reservations (post-refinement format) or a
// legacy Resource.role other than "*"; its reservation role is mesos-go's ReservationRole (the
// last refinement, else the legacy role), and it is offered only to frameworks of that role
// or its sub-roles (Resource.IsAllocatableTo). The allocator relies on mesos-go's default
// resource arithmetic, lib.CapabilityReservationRefinement unset ("" — refinement disabled),
// where Resource.role takes part in Addable/Subtractable so legacy-reserved and unreserved
// resources are never merged. Do not set that link-time flag in binaries embedding minimesos.
//
// # Recovery
//
// After a master restart agents and frameworks come back in any order. AddAgent books the used
// resources an agent reports (the agent's report is authoritative); AddFramework books its
// used resources only on already known agents that did not report them, so nothing is counted
// twice, and adopts what agents reported before it came back. Used resources are booked only
// as far as they fit the agent's total.
//
// # Not modelled
//
// Quota, revocable resources, hierarchical share accounting (sub-role allocations do not count
// toward the parent's share), framework weights inside a role, inverse offers and
// maintenance, resource providers, and fairness-excluded resource names.
package allocator
