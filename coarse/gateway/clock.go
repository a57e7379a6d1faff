package gateway

import "github.com/flint-mesos/flint/internal/clock"

// Clock is the gateway's time source (Flint's one clock interface): when an
// executor was last heard from, and the ticker pacing the silence checks.
// Tests inject a clock.Fake.
type Clock = clock.Clock

// Ticker is a stoppable source of ticks.
type Ticker = clock.Ticker

// SystemClock returns the real clock.
func SystemClock() Clock { return clock.Real{} }
