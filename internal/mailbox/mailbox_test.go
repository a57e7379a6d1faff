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
