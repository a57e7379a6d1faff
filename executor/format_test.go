package executor

import (
	"sync"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		3 << 20: "3.0 MiB", 5 << 30: "5.0 GiB", 1 << 62: "4.0 EiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestUpdateIDFormat(t *testing.T) {
	g := newUpdateIDs()
	var a, b [16]byte
	g.put(&a)
	g.put(&b)
	for _, id := range [][16]byte{a, b} {
		if id[6]>>4 != 8 || id[8]>>6 != 2 {
			t.Errorf("id %x: want RFC 9562 version 8, variant 10", id)
		}
	}
	if a == b || string(a[:8]) != string(b[:8]) {
		t.Errorf("ids %x %x: want one prefix, distinct ids", a, b)
	}
}

// Ids are unique within a generator under concurrent use and across many
// generators (runtimes).
func TestUpdateIDsUnique(t *testing.T) {
	const gens, perGen, goroutines = 200, 2000, 4
	seen := make(map[[16]byte]bool, gens*perGen)
	prefixes := make(map[[8]byte]bool, gens)
	var mu sync.Mutex
	for range gens {
		g := newUpdateIDs()
		if prefixes[g.prefix] {
			t.Fatalf("prefix %x drawn twice", g.prefix)
		}
		prefixes[g.prefix] = true
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				ids := make([][16]byte, perGen/goroutines)
				for i := range ids {
					g.put(&ids[i])
				}
				mu.Lock()
				defer mu.Unlock()
				for _, id := range ids {
					if seen[id] {
						t.Errorf("id %x issued twice", id)
					}
					seen[id] = true
				}
			})
		}
		wg.Wait()
	}
	if len(seen) != gens*perGen {
		t.Errorf("%d distinct ids, want %d", len(seen), gens*perGen)
	}
}

// The counter keeps its variant bits and leaves the prefix alone when it
// carries into the masked bits.
func TestUpdateIDCounterCarry(t *testing.T) {
	g := newUpdateIDs()
	g.next.Store(1<<62 - 2)
	var a, b [16]byte
	g.put(&a)
	g.put(&b)
	if a[8]>>6 != 2 || b[8]>>6 != 2 || string(a[:8]) != string(g.prefix[:]) || a == b {
		t.Errorf("ids %x %x", a, b)
	}
}
