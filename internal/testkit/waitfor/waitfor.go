package waitfor

import (
	"testing"
	"time"
)

// Interval is how often a condition is re-checked.
const Interval = 5 * time.Millisecond

// Poll re-checks cond every Interval until it holds (true) or timeout
// passes (false). cond runs at least once.
func Poll(timeout time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
		case <-deadline.C:
			return cond()
		}
	}
}

// True waits up to timeout for cond, failing t with what otherwise.
func True(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Msg waits up to timeout for f to return "", failing t with f's last
// message otherwise.
func Msg(t testing.TB, timeout time.Duration, f func() string) {
	t.Helper()
	var msg string
	if !Poll(timeout, func() bool { msg = f(); return msg == "" }) {
		t.Fatalf("timed out after %v: %s", timeout, msg)
	}
}
