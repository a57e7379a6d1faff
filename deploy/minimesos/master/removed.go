package master

// maxRemembered bounds how many removed framework ids the master keeps to
// refuse their re-subscription and to tell agents still holding them to
// shut them down. Mesos keeps removed frameworks in a bounded buffer too
// (--max_completed_frameworks); ids are a few dozen bytes, so this is
// generous while keeping a long-running master's memory flat.
const maxRemembered = 10000

// removedIDs is a bounded set of removed framework ids: the oldest is
// forgotten when a new one would exceed the bound.
type removedIDs struct {
	set   map[string]struct{}
	order []string // ring, oldest at next once full
	next  int
	max   int
}

func newRemovedIDs(max int) *removedIDs {
	return &removedIDs{set: map[string]struct{}{}, max: max}
}

// has reports whether id was removed (and not forgotten yet).
func (r *removedIDs) has(id string) bool {
	_, ok := r.set[id]
	return ok
}

// add remembers id as removed.
func (r *removedIDs) add(id string) {
	if r.has(id) {
		return
	}
	if len(r.order) < r.max {
		r.order = append(r.order, id)
	} else {
		delete(r.set, r.order[r.next])
		r.order[r.next] = id
		r.next = (r.next + 1) % r.max
	}
	r.set[id] = struct{}{}
}
