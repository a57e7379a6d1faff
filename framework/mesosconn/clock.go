package mesosconn

import (
	"math/rand/v2"
	"time"

	"github.com/flint-mesos/flint/internal/backoff"
	"github.com/flint-mesos/flint/internal/clock"
)

// Clock is the Conn's source of time (Flint's one clock interface). Tests
// inject a clock.Fake.
type Clock = clock.Clock

// RealClock is the wall clock.
type RealClock = clock.Real

// Backoff is the connection's re-subscription back-off: internal/backoff's,
// Flint's one (truncated exponential with jitter from an injected source).
type Backoff = backoff.Backoff

// NewBackoff returns a Backoff drawing jitter from rnd (backoff.New).
func NewBackoff(min, max time.Duration, jitter float64, rnd *rand.Rand) *Backoff {
	return backoff.New(min, max, jitter, rnd)
}
