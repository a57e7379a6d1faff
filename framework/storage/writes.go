package storage

import "sync"

// Writes orders an application's writes into each output directory, for the commit
// protocol's last sweep (the dataset layer's, once every attempt of a write's job has ended):
// that sweep must not discard staged writes of a later write into the same directory, which
// its own sweeps cover. One per application (a framework.Context); safe for concurrent use.
type Writes struct {
	mu     sync.Mutex
	latest map[string]uint64 // dir → the generation of its latest write
	next   uint64
}

// Begin marks the start of a write into dir (before its first sweep) and returns its
// generation. It waits for a LastSweep of dir in progress.
func (w *Writes) Begin(dir string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest == nil {
		w.latest = map[string]uint64{}
	}
	w.next++
	w.latest[dir] = w.next
	return w.next
}

// LastSweep runs sweep when gen is still dir's latest write, holding off any new write into
// dir until it returns, and reports whether it ran. dir is forgotten then: its write is over.
func (w *Writes) LastSweep(dir string, gen uint64, sweep func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest[dir] != gen {
		return false
	}
	sweep()
	delete(w.latest, dir)
	return true
}
