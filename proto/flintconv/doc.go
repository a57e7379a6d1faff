// Package flintconv converts between the driver↔executor wire messages
// (proto/flintpb) and the driver's domain types (framework/backend), so
// that wire types stay in the transports: the coarse backend at its
// gateway, fine mode's status translation, and the local backend at its
// in-process executor runtime. There is one set of failure kinds, the
// scheduling core's; the wire's FailureKind enum maps onto it here.
package flintconv
