package detach_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/flint-mesos/flint/framework/dataset/internal/detach"
)

// chunk is a reader's buffer; lines are strings over it, as TextFile's are.
var chunk = []byte("alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n")

// line is the i-th line of chunk, sharing chunk's bytes.
func line(i int) string {
	s := unsafe.String(&chunk[0], len(chunk))
	return strings.Split(s, "\n")[i]
}

// inChunk reports whether s's bytes are chunk's.
func inChunk(s string) bool {
	if len(s) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&chunk[0]))
	return p >= lo && p < lo+uintptr(len(chunk))
}

// detached checks that got equals want and holds none of chunk's bytes.
func detached(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
	if inChunk(got) {
		t.Errorf("%s still shares the chunk's bytes", what)
	}
}

func TestStringRecordsAreCopies(t *testing.T) {
	recs := []string{line(0), line(1), ""}
	detach.For[string]()(recs)
	detached(t, "recs[0]", recs[0], "alpha")
	detached(t, "recs[1]", recs[1], "beta")
	detached(t, "recs[2]", recs[2], "")
}

type word string

func TestNamedStringRecordsAreCopies(t *testing.T) {
	recs := []word{word(line(2))}
	detach.For[word]()(recs)
	detached(t, "recs[0]", string(recs[0]), "gamma")
}

type inner struct {
	N    int
	Name string
}

type record struct {
	ID     int64
	Key    string
	In     inner
	Pair   [2]string
	Ins    [1]inner
	Tags   []string
	Nested []inner
	Deep   [][]string
	hidden string
	Bytes  []byte
	Nil    []string
	Empty  []inner
}

// A record's strings in fields, nested structs, arrays and slices are
// copies; other fields are untouched; the slices the record pointed to
// (the caller's) are not written, the record gets new ones.
func TestRecordStringsAreCopies(t *testing.T) {
	bytes := []byte("raw")
	tags := []string{line(5), line(6)}
	nested := []inner{{N: 7, Name: line(7)}}
	deep := [][]string{{line(0)}}
	recs := []record{{
		ID: 42, Key: line(0), In: inner{N: 1, Name: line(1)}, Pair: [2]string{line(2), line(3)},
		Ins: [1]inner{{N: 2, Name: line(4)}}, Tags: tags, Nested: nested, Deep: deep,
		hidden: line(1), Bytes: bytes, Empty: []inner{},
	}}
	detach.For[record]()(recs)
	r := recs[0]
	detached(t, "Key", r.Key, "alpha")
	detached(t, "In.Name", r.In.Name, "beta")
	detached(t, "Pair[0]", r.Pair[0], "gamma")
	detached(t, "Pair[1]", r.Pair[1], "delta")
	detached(t, "Ins[0].Name", r.Ins[0].Name, "epsilon")
	detached(t, "Tags[0]", r.Tags[0], "zeta")
	detached(t, "Tags[1]", r.Tags[1], "eta")
	detached(t, "Nested[0].Name", r.Nested[0].Name, "theta")
	detached(t, "Deep[0][0]", r.Deep[0][0], "alpha")
	detached(t, "hidden", r.hidden, "beta")
	if r.ID != 42 || r.In.N != 1 || r.Ins[0].N != 2 || r.Nested[0].N != 7 {
		t.Errorf("numbers changed: %+v", r)
	}
	if &r.Bytes[0] != &bytes[0] {
		t.Error("a []byte was copied; slices without strings are left as they are")
	}
	if r.Nil != nil || r.Empty == nil || len(r.Empty) != 0 {
		t.Errorf("nil and empty slices: Nil=%v (want nil), Empty=%v (want empty, not nil)", r.Nil, r.Empty)
	}
	if !inChunk(tags[0]) || !inChunk(nested[0].Name) || !inChunk(deep[0][0]) {
		t.Error("the caller's slices were written; they must be left alone")
	}
}

type behind struct {
	S string
	P *string
	M map[string]string
	I any
}

// Strings behind pointers, maps and interfaces are left: they may be
// shared, so they are not followed.
func TestPointersMapsAndInterfacesAreLeft(t *testing.T) {
	p := line(1)
	recs := []behind{{S: line(0), P: &p, M: map[string]string{"k": line(2)}, I: line(3)}}
	detach.For[behind]()(recs)
	r := recs[0]
	detached(t, "S", r.S, "alpha")
	if r.P != &p || !inChunk(*r.P) || !inChunk(r.M["k"]) || !inChunk(r.I.(string)) {
		t.Error("a string behind a pointer, map or interface was copied")
	}
}

type tree struct {
	Name string
	Kids []tree
}

type counts struct {
	N    int
	Kids []counts
}

// A type that holds itself through a slice is detached at every depth.
func TestRecursiveTypes(t *testing.T) {
	recs := []tree{{Name: line(0), Kids: []tree{{Name: line(1), Kids: []tree{{Name: line(2)}}}}}}
	detach.For[tree]()(recs)
	detached(t, "Name", recs[0].Name, "alpha")
	detached(t, "Kids[0].Name", recs[0].Kids[0].Name, "beta")
	detached(t, "Kids[0].Kids[0].Name", recs[0].Kids[0].Kids[0].Name, "gamma")
	if detach.For[counts]() != nil {
		t.Error("a recursive type without strings got a function")
	}
}

type flat struct {
	A int
	B [4]float64
	C []byte
	D *string
	E map[string]string
	F any
	G [0]string
	H chan string
	I func() string
}

// Types holding no string by value get no function: their records cost
// nothing.
func TestNoStringsNoFunction(t *testing.T) {
	if detach.For[int]() != nil || detach.For[flat]() != nil || detach.For[[]int64]() != nil ||
		detach.For[*string]() != nil || detach.For[struct{}]() != nil {
		t.Error("a type without strings by value got a function")
	}
}

// For builds a type's function once: later calls allocate nothing.
func TestForIsBuiltOnce(t *testing.T) {
	detach.For[record]()
	if n := testing.AllocsPerRun(100, func() { detach.For[record]() }); n != 0 {
		t.Errorf("For allocated %v times per call after the first", n)
	}
}

// Detaching a batch allocates one block for all its strings' bytes (and a
// new array per slice of strings), not one per string.
func TestDetachAllocatesOneBlockPerBatch(t *testing.T) {
	recs := make([]inner, 100)
	for i := range recs {
		recs[i].Name = line(i % 8)
	}
	f := detach.For[inner]()
	if n := testing.AllocsPerRun(10, func() { f(recs) }); n != 1 {
		t.Errorf("detaching 100 records of one string allocated %v times, want 1", n)
	}
	ss := []struct{ Tags []string }{{Tags: []string{line(0), line(1), line(2)}}}
	g := detach.For[struct{ Tags []string }]()
	if n := testing.AllocsPerRun(10, func() { g(ss) }); n != 2 {
		t.Errorf("detaching a slice of 3 strings allocated %v times, want 2", n)
	}
	lines := []string{line(0), "", line(1)}
	h := detach.For[string]()
	if n := testing.AllocsPerRun(10, func() { h(lines) }); n != 1 {
		t.Errorf("detaching 3 lines allocated %v times, want 1", n)
	}
}

// A batch's copies are packed end to end in their block: it holds exactly
// their bytes.
func TestBatchCopiesArePacked(t *testing.T) {
	recs := []string{line(3), line(4), "", line(5)}
	detach.For[string]()(recs)
	at := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	if at(recs[1]) != at(recs[0])+5 || at(recs[3]) != at(recs[1])+7 {
		t.Errorf("the copies of %q are not packed end to end", recs)
	}
	for i, want := range []string{"delta", "epsilon", "", "zeta"} {
		detached(t, "recs", recs[i], want)
	}
}

// The functions are safe to share: records of different slices are
// detached at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	done := make(chan []record)
	for range 4 {
		go func() {
			recs := []record{{Key: line(0), Tags: []string{line(1)}}}
			detach.For[record]()(recs)
			done <- recs
		}()
	}
	for range 4 {
		r := (<-done)[0]
		detached(t, "Key", r.Key, "alpha")
		detached(t, "Tags[0]", r.Tags[0], "beta")
	}
}
