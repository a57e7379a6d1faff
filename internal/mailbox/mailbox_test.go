package mailbox

import (
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Inputs from one producer arrive in order; every input from every producer
// arrives once; nothing put after Close arrives.
func TestOrderAndClose(t *testing.T) {
	m := New[int]()
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if !m.Put(p*each + i) {
					t.Errorf("Put refused before Close")
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := map[int]int{}
	seen := 0
	var q []int
	drain := func() {
		q = m.Take(q)
		for _, v := range q {
			p, i := v/each, v%each
			if prev, ok := last[p]; ok && i != prev+1 {
				t.Fatalf("producer %d: %d after %d", p, i, prev)
			} else if !ok && i != 0 {
				t.Fatalf("producer %d starts at %d", p, i)
			}
			last[p] = i
			seen++
		}
	}
	for running := true; running; {
		select {
		case <-m.Wake():
			drain()
		case <-done:
			running = false
		}
	}
	drain()
	if seen != producers*each {
		t.Fatalf("got %d inputs, want %d", seen, producers*each)
	}
	m.Put(-1)
	if rest := m.Close(); len(rest) != 1 || rest[0] != -1 {
		t.Fatalf("Close returned %v, want the one input queued", rest)
	}
	if m.Put(7) {
		t.Fatal("Put accepted after Close")
	}
	if q := m.Take(nil); len(q) != 0 {
		t.Fatalf("Take after Close: %v", q)
	}
}

// End queues its last values after what was queued, wakes the consumer,
// refuses later Puts; TakeEnded reports the end with the last values.
func TestEnd(t *testing.T) {
	m := New[int]()
	m.Put(1)
	<-m.Wake()
	m.End(2, 3)
	select {
	case <-m.Wake():
	default:
		t.Fatal("End did not wake the consumer")
	}
	if m.Put(4) {
		t.Fatal("Put after End: true")
	}
	m.End(5) // changes nothing
	q, ended := m.TakeEnded(nil)
	if !ended || len(q) != 3 || q[0] != 1 || q[1] != 2 || q[2] != 3 {
		t.Fatalf("TakeEnded = %v, %v; want [1 2 3], true", q, ended)
	}
	if q, ended := m.TakeEnded(nil); !ended || len(q) != 0 {
		t.Fatalf("second TakeEnded = %v, %v; want [], true", q, ended)
	}
	o := New[int]()
	o.Put(7)
	if q, ended := o.TakeEnded(nil); ended || len(q) != 1 || q[0] != 7 {
		t.Fatalf("TakeEnded of an open mailbox = %v, %v; want [7], false", q, ended)
	}
}
