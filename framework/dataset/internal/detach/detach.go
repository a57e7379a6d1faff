package detach

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// funcs is For's result by type: a func([]T), nil when T holds no string.
var funcs sync.Map // reflect.Type → func([]T)

// For is the function that detaches a batch of records of T in place (the
// package's documentation says what that copies and what it leaves), or nil
// when T holds no string by value: a caller then has nothing to do. It is
// built once per type; later calls only look it up.
func For[T any]() func([]T) {
	t := reflect.TypeFor[T]()
	if f, ok := funcs.Load(t); ok {
		return f.(func([]T))
	}
	f, _ := funcs.LoadOrStore(t, build[T](t))
	return f.(func([]T))
}

// build makes For's function for T, whose type is t.
func build[T any](t reflect.Type) func([]T) {
	if t.Kind() == reflect.String {
		return func(recs []T) {
			detachStrings(unsafe.Slice((*string)(unsafe.Pointer(unsafe.SliceData(recs))), len(recs)))
		}
	}
	p := newPlanner().plan(t)
	if p == nil {
		return nil
	}
	size := t.Size()
	return func(recs []T) {
		base := unsafe.Pointer(unsafe.SliceData(recs))
		n := 0
		for i := range recs {
			n += p.count(unsafe.Add(base, uintptr(i)*size))
		}
		a := newArena(n)
		for i := range recs {
			p.apply(unsafe.Add(base, uintptr(i)*size), a)
		}
	}
}

// detachStrings replaces ss's strings by copies in one new allocation.
func detachStrings(ss []string) {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	a := newArena(n)
	for i, s := range ss {
		ss[i] = a.copy(s)
	}
}

// arena is one allocation holding the copies of one batch's strings. The
// records of a persisted partition are kept and dropped together, so their
// strings sharing a few allocations keeps nothing alive that they do not
// show, and one allocation per batch costs far less than one per string. A
// byte, once written, is never written again (strings.Builder's rule), so
// the copies are as immutable as any Go string.
type arena struct {
	b strings.Builder
}

// newArena is an arena for n bytes: it never grows past them, so the
// strings it hands out never move.
func newArena(n int) *arena {
	a := &arena{}
	a.b.Grow(n)
	return a
}

// copy is s copied into the arena; the empty string is "" (no pointer: an
// empty substring may still point into the buffer it was cut from).
func (a *arena) copy(s string) string {
	if len(s) == 0 {
		return ""
	}
	start := a.b.Len()
	a.b.WriteString(s)
	return a.b.String()[start:]
}

// plan is how to detach a value of one type: steps at offsets from the
// value's address.
type plan struct {
	steps []step
}

type stepKind uint8

const (
	stepString  stepKind = iota // a string
	stepStrings                 // a slice of strings
	stepSlice                   // a slice whose elements follow elem
	stepArray                   // n elements, elemSize apart, each following elem
)

// step is one string, slice or array of a value, off bytes from its start.
type step struct {
	kind     stepKind
	off      uintptr
	typ      reflect.Type // stepSlice: the slice's type
	elem     *plan        // stepSlice, stepArray
	elemSize uintptr      // stepSlice, stepArray
	n        int          // stepArray
}

// count is the bytes of the strings the value at base, of p's type, holds.
func (p *plan) count(base unsafe.Pointer) int {
	n := 0
	for i := range p.steps {
		s := &p.steps[i]
		at := unsafe.Add(base, s.off)
		switch s.kind {
		case stepString:
			n += len(*(*string)(at))
		case stepStrings:
			for _, str := range *(*[]string)(at) {
				n += len(str)
			}
		case stepSlice:
			h := (*sliceHeader)(at)
			for j := range h.len {
				n += s.elem.count(unsafe.Add(h.data, uintptr(j)*s.elemSize))
			}
		case stepArray:
			for j := range s.n {
				n += s.elem.count(unsafe.Add(at, uintptr(j)*s.elemSize))
			}
		}
	}
	return n
}

// sliceHeader is a slice's layout, read to count its elements' strings.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// apply detaches the value at base, of p's type, copying its strings into a.
func (p *plan) apply(base unsafe.Pointer, a *arena) {
	for i := range p.steps {
		s := &p.steps[i]
		at := unsafe.Add(base, s.off)
		switch s.kind {
		case stepString:
			str := (*string)(at)
			*str = a.copy(*str)
		case stepStrings:
			if strs := (*[]string)(at); *strs != nil {
				*strs = copyStrings(*strs, a)
			}
		case stepSlice:
			s.slice(at, a)
		case stepArray:
			for j := range s.n {
				s.elem.apply(unsafe.Add(at, uintptr(j)*s.elemSize), a)
			}
		}
	}
}

// slice replaces the slice at at with a copy of its elements, detached: its
// array may be shared with other records or the caller's data, so it is
// never written.
func (s *step) slice(at unsafe.Pointer, a *arena) {
	v := reflect.NewAt(s.typ, at).Elem()
	if v.IsNil() {
		return
	}
	c := reflect.MakeSlice(s.typ, v.Len(), v.Len())
	reflect.Copy(c, v)
	base := c.UnsafePointer()
	for j := range c.Len() {
		s.elem.apply(unsafe.Add(base, uintptr(j)*s.elemSize), a)
	}
	v.Set(c)
}

// copyStrings is a new slice of ss's strings copied into a.
func copyStrings(ss []string, a *arena) []string {
	c := make([]string, len(ss))
	for i, s := range ss {
		c[i] = a.copy(s)
	}
	return c
}

// planner builds the plans of one type and the types it holds. A type can
// hold itself by value only through a slice; plans reached through slices
// are remembered, so such a type's plan refers to itself.
type planner struct {
	plans map[reflect.Type]*plan
	holds map[reflect.Type]bool // types known to hold a string
}

func newPlanner() *planner {
	return &planner{plans: map[reflect.Type]*plan{}, holds: map[reflect.Type]bool{}}
}

// plan is t's plan, nil when t holds no string.
func (pl *planner) plan(t reflect.Type) *plan {
	if !pl.holdsString(t, map[reflect.Type]bool{}) {
		return nil
	}
	if p := pl.plans[t]; p != nil {
		return p // built, or being built (a type holding itself)
	}
	p := &plan{}
	pl.plans[t] = p
	p.steps = pl.steps(t, 0)
	return p
}

// steps are the steps of a value of type t off bytes into its record.
func (pl *planner) steps(t reflect.Type, off uintptr) []step {
	switch t.Kind() {
	case reflect.String:
		return []step{{kind: stepString, off: off}}
	case reflect.Struct:
		var out []step
		for i := range t.NumField() {
			f := t.Field(i)
			if pl.holdsString(f.Type, map[reflect.Type]bool{}) {
				out = append(out, pl.steps(f.Type, off+f.Offset)...)
			}
		}
		return out
	case reflect.Array:
		if e := pl.plan(t.Elem()); e != nil && t.Len() > 0 {
			return []step{{kind: stepArray, off: off, elem: e, elemSize: t.Elem().Size(), n: t.Len()}}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return []step{{kind: stepStrings, off: off}}
		}
		if e := pl.plan(t.Elem()); e != nil {
			return []step{{kind: stepSlice, off: off, typ: t, elem: e, elemSize: t.Elem().Size()}}
		}
	}
	return nil
}

// holdsString reports whether a value of type t holds a string by value:
// is one, or holds one in a field, an array element or a slice element.
// visiting holds the types on the path from the first call: a type met again
// adds nothing new, so it counts as holding none there (only true results are
// remembered, since a false one may depend on the path).
func (pl *planner) holdsString(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if pl.holds[t] {
		return true
	}
	if visiting[t] {
		return false
	}
	visiting[t] = true
	defer delete(visiting, t)
	held := false
	switch t.Kind() {
	case reflect.String:
		held = true
	case reflect.Struct:
		for i := 0; i < t.NumField() && !held; i++ {
			held = pl.holdsString(t.Field(i).Type, visiting)
		}
	case reflect.Array:
		held = t.Len() > 0 && pl.holdsString(t.Elem(), visiting)
	case reflect.Slice:
		held = pl.holdsString(t.Elem(), visiting)
	}
	if held {
		pl.holds[t] = true
	}
	return held
}
