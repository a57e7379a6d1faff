package backoff

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Delay is the n-th wait (from 0) of a back-off starting at base and
// doubling up to max: min(max, base·2ⁿ), without overflow for any n. A
// negative n is 0.
func Delay(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// Backoff is truncated exponential back-off with jitter: the n-th delay
// (from 0) is Delay(Min, Max, n) less a random fraction of up to Jitter of
// it. Safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	Jitter   float64 // in [0, 1]

	mu  sync.Mutex
	rnd *rand.Rand
	n   int
}

// New returns a Backoff drawing jitter from rnd.
func New(min, max time.Duration, jitter float64, rnd *rand.Rand) *Backoff {
	return &Backoff{Min: min, Max: max, Jitter: jitter, rnd: rnd}
}

// Next returns the next delay and advances.
func (b *Backoff) Next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := Delay(b.Min, b.Max, b.n)
	if d < b.Max {
		b.n++
	}
	return b.jitter(d)
}

// Jittered returns d less a random fraction of up to Jitter of it, without
// advancing: for retries that must come promptly but not in lockstep.
func (b *Backoff) Jittered(d time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.jitter(d)
}

func (b *Backoff) jitter(d time.Duration) time.Duration {
	return d - time.Duration(b.Jitter*b.rnd.Float64()*float64(d))
}

// Reset starts over at Min.
func (b *Backoff) Reset() {
	b.mu.Lock()
	b.n = 0
	b.mu.Unlock()
}
