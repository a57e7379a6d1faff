package event

import (
	"context"
	"errors"
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

func TestBusFlushWaitsForEveryListener(t *testing.T) {
	b := NewBus(0)
	defer b.Close()
	release := make(chan struct{})
	var mu sync.Mutex
	var fast, slow []int64
	b.AddListener(ListenerFunc(func(e Event) {
		mu.Lock()
		fast = append(fast, e.(JobEnd).JobID)
		mu.Unlock()
	}))
	b.AddListener(ListenerFunc(func(e Event) {
		<-release
		mu.Lock()
		slow = append(slow, e.(JobEnd).JobID)
		mu.Unlock()
	}))
	for i := int64(0); i < 3; i++ {
		b.Post(JobEnd{JobID: i})
	}
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(context.Background()) }()
	// A Flush with a deadline already past returns the context's error
	// while the slow listener still holds its events.
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Flush(expired); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with a cancelled context = %v, want context.Canceled", err)
	}
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v before the slow listener handled its events", err)
	default:
	}
	close(release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fast) != 3 || len(slow) != 3 {
		t.Fatalf("after Flush the listeners had handled %d and %d events, want 3 and 3", len(fast), len(slow))
	}
}

func TestBusFlushWithNothingQueuedOrAfterClose(t *testing.T) {
	b := NewBus(0)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatalf("Flush with no listener: %v", err)
	}
	b.AddListener(ListenerFunc(func(Event) {}))
	b.Post(JobStart{})
	b.Close()
	if err := b.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after Close: %v", err)
	}
}
