package clock

import (
	"reflect"
	"testing"
	"time"
)

func TestFakeFiresInDeadlineOrder(t *testing.T) {
	c := NewFake(time.Time{})
	start := c.Now()
	var got []string
	var at []time.Duration
	rec := func(name string) func() {
		return func() { got = append(got, name); at = append(at, c.Now().Sub(start)) }
	}
	c.AfterFunc(3*time.Second, rec("c"))
	c.AfterFunc(time.Second, rec("a"))
	c.AfterFunc(time.Second, rec("a2")) // same deadline: arming order
	stopped := c.AfterFunc(2*time.Second, rec("never"))
	// A callback arming another one inside the span: it fires too.
	c.AfterFunc(2*time.Second, func() {
		got = append(got, "b")
		c.AfterFunc(500*time.Millisecond, rec("b+"))
	})
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop of a pending timer must report true once")
	}
	c.Advance(2500 * time.Millisecond)
	if want := []string{"a", "a2", "b", "b+"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if want := []time.Duration{time.Second, time.Second, 2500 * time.Millisecond}; !reflect.DeepEqual(at, want) {
		t.Fatalf("clock read %v in the callbacks, want %v", at, want)
	}
	if d := c.Now().Sub(start); d != 2500*time.Millisecond {
		t.Fatalf("now = start+%v", d)
	}
	if p := c.Pending(); len(p) != 1 || p[0].Sub(start) != 3*time.Second {
		t.Fatalf("pending %v", p)
	}
	c.Advance(499 * time.Millisecond)
	if len(got) != 4 {
		t.Fatalf("fired early: %v", got)
	}
	c.Advance(time.Millisecond)
	if len(got) != 5 || got[4] != "c" {
		t.Fatalf("fired %v", got)
	}
	fired := c.AfterFunc(0, rec("now"))
	c.Advance(0)
	if got[len(got)-1] != "now" || fired.Stop() {
		t.Fatalf("zero-delay timer: %v", got)
	}
}

func TestFakeAfterAndTicker(t *testing.T) {
	c := NewFake(time.Time{})
	start := c.Now()
	after := c.After(time.Second)
	tick := c.NewTicker(300 * time.Millisecond)
	if !c.HasPending(time.Second) || !c.HasPending(300*time.Millisecond) || c.HasPending(time.Minute) {
		t.Fatalf("pending %v", c.Pending())
	}
	c.Advance(299 * time.Millisecond)
	select {
	case <-tick.C():
		t.Fatal("ticked early")
	default:
	}
	c.Advance(time.Millisecond)
	if got := <-tick.C(); got.Sub(start) != 300*time.Millisecond {
		t.Fatalf("tick at start+%v", got.Sub(start))
	}
	// Two more periods pass in one span, the tick untaken: one tick waits,
	// carrying the end of the span, and the ticker is re-armed for its
	// next period after it.
	c.Advance(700 * time.Millisecond)
	if got := <-tick.C(); got.Sub(start) != time.Second {
		t.Fatalf("tick at start+%v, want the span's end (1s)", got.Sub(start))
	}
	select {
	case <-tick.C():
		t.Fatal("a dropped tick was delivered")
	default:
	}
	if got := <-after; got.Sub(start) != time.Second {
		t.Fatalf("After fired at start+%v", got.Sub(start))
	}
	if !c.HasPending(200 * time.Millisecond) {
		t.Fatalf("ticker not re-armed for 1.2s: pending %v", c.Pending())
	}
	tick.Stop()
	c.Advance(time.Hour)
	select {
	case <-tick.C():
		t.Fatal("a stopped ticker ticked")
	default:
	}
	if p := c.Pending(); len(p) != 0 {
		t.Fatalf("pending after Stop: %v", p)
	}
	if got := <-c.After(0); !got.Equal(c.Now()) {
		t.Fatalf("After(0) = %v, want now", got)
	}
}
