// Package backendharness tests a Mesos backend (fine, coarse) without a
// Mesos master, as Nomad's scheduler Harness tests its schedulers: Conn is
// a fake Mesos connection and Driver a fake driver loop, and both record
// what the backend did, in order. A test builds the backend with
// Harness.Dial as its Dialer, feeds Mesos events to Harness.Handler and
// batches to the backend's Apply, waits until the backend's owner
// goroutine handled them, and asserts on the recorded calls (each has a
// short String form, so a test reads like a script).
package backendharness
