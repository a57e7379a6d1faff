package backoff

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{500 * time.Millisecond, 30 * time.Second, 0, 500 * time.Millisecond},
		{500 * time.Millisecond, 30 * time.Second, 1, time.Second},
		{500 * time.Millisecond, 30 * time.Second, 5, 16 * time.Second},
		{500 * time.Millisecond, 30 * time.Second, 6, 30 * time.Second},
		{500 * time.Millisecond, 30 * time.Second, 1000, 30 * time.Second},
		{250 * time.Millisecond, 2 * time.Second, 3, 2 * time.Second},
		{250 * time.Millisecond, 2 * time.Second, -1, 250 * time.Millisecond},
	} {
		if got := Delay(tc.base, tc.max, tc.n); got != tc.want {
			t.Errorf("Delay(%v, %v, %d) = %v, want %v", tc.base, tc.max, tc.n, got, tc.want)
		}
	}
}

// Without jitter the delays double up to Max and stay there; Reset starts
// over; with jitter each delay lies in [(1-Jitter)·d, d].
func TestBackoff(t *testing.T) {
	b := New(time.Second, 5*time.Second, 0, rand.New(rand.NewPCG(1, 2)))
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	b.Reset()
	if d := b.Next(); d != time.Second {
		t.Fatalf("after Reset: %v, want 1s", d)
	}
	j := New(time.Second, 8*time.Second, 0.5, rand.New(rand.NewPCG(3, 4)))
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if got := j.Next(); got > d || got < d/2 {
			t.Fatalf("jittered delay %v outside [%v, %v]", got, d/2, d)
		}
	}
	if got := j.Jittered(10 * time.Second); got > 10*time.Second || got < 5*time.Second {
		t.Fatalf("Jittered(10s) = %v outside [5s, 10s]", got)
	}
}
