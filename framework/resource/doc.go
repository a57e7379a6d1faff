// Package resource is Flint's one model of Mesos resources: what an offer
// holds and what a launch takes from it. Three kinds, as Mesos has them:
//
//   - scalars (cpus, mem, disk, gpus): an amount, at Mesos' three-decimal
//     precision;
//   - ranges (ports): a count of values, and the values taken are named;
//   - sets: a count of items, and the items taken are named.
//
// An Ask lists the Needs of one launch; Take cuts them out of an offer's
// resources (reserved before unreserved, in offer order, each piece keeping
// its role, reservation and allocation_info so it can go into a LAUNCH as
// it is) and returns the pieces and the rest; Short says what an offer
// lacks for an Ask. Placement (framework/placement) is the only caller that
// decides fit: it takes each launch's pieces here and hands them to the
// backends in its plan, which use them without checking again.
//
// Adding a resource type is a Need of an existing kind (ports: a Range
// need named "ports"); a new kind is a case in Take, Free and Short here.
// The package does no I/O and keeps no state.
package resource
