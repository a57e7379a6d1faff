// Package driver is Flint's driver: the driver loop (Driver) and the
// driver core it owns (driverCore), as etcd raft's node is the loop around
// RawNode. The framework package is the user's API over it (Context,
// RunJob, Map); the dataset layer reaches its plumbing (RunStages,
// shuffle ids and releases, cached-partition locations) through an
// internal seam, never through the user's API.
//
// The core is the driver's state machine: the scheduling core
// (framework/scheduler), the DAG core (framework/dagscheduler) with its
// map-output tracker, the job table, the executor and slot registry and
// the stage tracker. It is not safe for concurrent use, reads no clock
// and starts nothing: it is fed inputs with the current time and returns
// a step — the backend's batch, listener events, jobs to wake, result
// fetches — which the loop applies in that order. Every job takes one
// path through it: a Job of independent tasks is a one-stage job of
// stages.
//
// The loop is one goroutine (Start) that owns the core; backends and the
// Context queue inputs without blocking. A loop that is not started is
// stepped by hand (Step) at the time of its injected clock: a simulation
// drives the whole driver so, on virtual time. Tests: golden scripts of
// core steps (testdata/driver, TestDriverLoop) and the loop's ordering
// (TestKillNeverOvertakesItsLaunch).
package driver
