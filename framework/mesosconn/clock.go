package mesosconn

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/flint-mesos/flint/internal/clock"
)

// Clock is the Conn's source of time (Flint's one clock interface). Tests
// inject a clock.Fake.
type Clock = clock.Clock

// RealClock is the wall clock.
type RealClock = clock.Real

// Backoff is truncated exponential backoff with jitter: the n-th delay (from 0) is
// min(Max, Min·2ⁿ) less a random fraction of up to Jitter of it. Safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	Jitter   float64 // in [0, 1]

	mu  sync.Mutex
	rnd *rand.Rand
	n   int
}

// NewBackoff returns a Backoff drawing jitter from rnd.
func NewBackoff(min, max time.Duration, jitter float64, rnd *rand.Rand) *Backoff {
	return &Backoff{Min: min, Max: max, Jitter: jitter, rnd: rnd}
}

// Next returns the next delay and advances.
func (b *Backoff) Next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.Min
	for i := 0; i < b.n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if d < b.Max {
		b.n++
	}
	return d - time.Duration(b.Jitter*b.rnd.Float64()*float64(d))
}

// Jittered returns d less a random fraction of up to Jitter of it, without
// advancing: for retries that must come promptly but not in lockstep.
func (b *Backoff) Jittered(d time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return d - time.Duration(b.Jitter*b.rnd.Float64()*float64(d))
}

// Reset starts over at Min.
func (b *Backoff) Reset() {
	b.mu.Lock()
	b.n = 0
	b.mu.Unlock()
}
