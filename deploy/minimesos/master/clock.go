package master

import "github.com/flint-mesos/flint/internal/clock"

// Clock is the master's source of time, injectable for tests (Flint's one
// clock interface; minimesostest.FakeClock drives it in tests).
type Clock = clock.Clock

// Timer is a pending AfterFunc.
type Timer = clock.Timer

// RealClock is the wall clock.
type RealClock = clock.Real
