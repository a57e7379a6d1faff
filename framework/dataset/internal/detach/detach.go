package detach

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// funcs is For's result by type: a func([]T), nil when T holds no string.
var funcs sync.Map // reflect.Type → func([]T)

// For is the function that detaches every record of a slice of T in place
// (the package's documentation says what that copies and what it leaves), or
// nil when T holds no string by value: a caller then has nothing to do. It is
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
			for i := range recs {
				s := (*string)(unsafe.Pointer(&recs[i]))
				*s = strings.Clone(*s)
			}
		}
	}
	p := newPlanner().plan(t)
	if p == nil {
		return nil
	}
	return func(recs []T) {
		for i := range recs {
			p.apply(unsafe.Pointer(&recs[i]))
		}
	}
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

// apply detaches the value at base, of p's type.
func (p *plan) apply(base unsafe.Pointer) {
	for i := range p.steps {
		s := &p.steps[i]
		at := unsafe.Add(base, s.off)
		switch s.kind {
		case stepString:
			str := (*string)(at)
			*str = strings.Clone(*str)
		case stepStrings:
			if strs := (*[]string)(at); *strs != nil {
				*strs = cloneStrings(*strs)
			}
		case stepSlice:
			s.slice(at)
		case stepArray:
			for j := range s.n {
				s.elem.apply(unsafe.Add(at, uintptr(j)*s.elemSize))
			}
		}
	}
}

// slice replaces the slice at at with a copy of its elements, detached: its
// array may be shared with other records or the caller's data, so it is
// never written.
func (s *step) slice(at unsafe.Pointer) {
	v := reflect.NewAt(s.typ, at).Elem()
	if v.IsNil() {
		return
	}
	c := reflect.MakeSlice(s.typ, v.Len(), v.Len())
	reflect.Copy(c, v)
	base := c.UnsafePointer()
	for j := range c.Len() {
		s.elem.apply(unsafe.Add(base, uintptr(j)*s.elemSize))
	}
	v.Set(c)
}

// cloneStrings is a new slice of copies of ss's strings.
func cloneStrings(ss []string) []string {
	c := make([]string, len(ss))
	for i, s := range ss {
		c[i] = strings.Clone(s)
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
