package event

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBusDeliversInOrderToEveryListener(t *testing.T) {
	b := NewBus(0)
	var mu sync.Mutex
	got := map[int][]int64{}
	for i := 0; i < 2; i++ {
		i := i
		b.AddListener(ListenerFunc(func(e Event) {
			mu.Lock()
			got[i] = append(got[i], e.(JobStart).JobID)
			mu.Unlock()
		}))
	}
	for j := int64(0); j < 100; j++ {
		b.Post(JobStart{JobID: j})
	}
	b.Close()
	for i := 0; i < 2; i++ {
		if len(got[i]) != 100 {
			t.Fatalf("listener %d got %d events, want 100", i, len(got[i]))
		}
		for j, id := range got[i] {
			if id != int64(j) {
				t.Fatalf("listener %d event %d has job %d: out of order", i, j, id)
			}
		}
	}
	if b.Dropped() != 0 {
		t.Fatalf("dropped %d events with room in the queue", b.Dropped())
	}
}

func TestBusDropsForSlowListenerWithoutBlocking(t *testing.T) {
	b := NewBus(2)
	release := make(chan struct{})
	b.AddListener(ListenerFunc(func(Event) { <-release }))
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			b.Post(JobEnd{JobID: int64(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Post blocked on a slow listener")
	}
	// One event may be in the listener's hands, two queued: at least 7 dropped.
	if d := b.Dropped(); d < 7 {
		t.Fatalf("dropped %d events, want at least 7", d)
	}
	close(release)
	b.Close()
	b.Post(JobEnd{}) // after Close: ignored, no panic
}

func TestBusListening(t *testing.T) {
	b := NewBus(0)
	if b.Listening() {
		t.Fatal("Listening() with no listener")
	}
	b.AddListener(ListenerFunc(func(Event) {}))
	if !b.Listening() {
		t.Fatal("!Listening() with a listener")
	}
	b.Close()
	if b.Listening() {
		t.Fatal("Listening() after Close")
	}
	b.AddListener(ListenerFunc(func(Event) {}))
	if b.Listening() {
		t.Fatal("Listening() after AddListener on a closed bus")
	}
}
