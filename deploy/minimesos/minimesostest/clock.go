package minimesostest

import (
	"time"

	"github.com/flint-mesos/flint/internal/clock"
)

// FakeClock is a manual master.Clock for timer-driven tests (clock.Fake):
// time moves only through Advance. Give it to the master with
// WithConfig(func(c *master.Config) { c.Clock = clk }); the allocation,
// heartbeat and ping loops, offer timeouts and failover timeouts then
// run only when the test advances the clock.
//
// testing/synctest cannot serve these tests: they drive the master through
// real HTTP connections (mesos-go clients, httptest servers, agents over
// the link), and a goroutine blocked on network I/O is not durably
// blocked, so a bubble's clock would not move while the master waits on
// its sockets.
type FakeClock = clock.Fake

// NewFakeClock returns a clock reading start (a fixed date when zero).
func NewFakeClock(start time.Time) *FakeClock { return clock.NewFake(start) }
