package minimesostest

import (
	"reflect"
	"testing"
	"time"
)

func TestFakeClockFiresInDeadlineOrder(t *testing.T) {
	c := NewFakeClock(time.Time{})
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
