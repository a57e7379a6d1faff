package gateway

import "time"

// Clock is the gateway's time source: when an executor was last heard
// from, and the ticker pacing the silence checks. Tests inject a fake one.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
}

// Ticker is a stoppable source of ticks (time.Ticker behind an interface).
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// SystemClock returns the real clock.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

type systemTicker struct{ t *time.Ticker }

func (t systemTicker) C() <-chan time.Time { return t.t.C }
func (t systemTicker) Stop()               { t.t.Stop() }
