package dataset

import (
	"encoding"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// ErrArgumentCannotTravel: a job's arguments hold a value the executors
// would not get (Spark's "Task not serializable"). Arguments travel gob
// encoded, and gob silently drops funcs and chans in struct fields and
// unexported fields, and never ends on a cyclic value.
var ErrArgumentCannotTravel = errors.New("dataset: a job argument cannot travel to the executors")

// checkArgs walks the job's arguments as gob would encode them and refuses
// what would not arrive as it is on the driver: a non-nil func, chan or
// unsafe.Pointer; an unexported field holding a non-zero value (gob drops
// it); a cycle of pointers, maps or slices. Values of types that encode
// themselves (GobEncoder, BinaryMarshaler, TextMarshaler) are theirs to
// get right and not walked.
func checkArgs(job string, v any) error {
	w := &argWalker{onPath: map[visit]bool{}}
	if err := w.walk(reflect.ValueOf(v), "args"); err != nil {
		return fmt.Errorf("%w: job %q: %w", ErrArgumentCannotTravel, job, err)
	}
	return nil
}

// visit is a reference value on the walk's current path: its address and
// type (a struct and its first field share an address).
type visit struct {
	ptr uintptr
	typ reflect.Type
}

type argWalker struct {
	onPath map[visit]bool
}

func (w *argWalker) walk(v reflect.Value, path string) error {
	if !v.IsValid() || !mayHide(v.Type()) || encodesItself(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return nil
		}
		return fmt.Errorf("%s is %s (%s): gob cannot encode it, so the executors would get nil; "+
			"build it inside the job's body, or pass the data it needs instead", path, map[reflect.Kind]string{reflect.Func: "a func", reflect.Chan: "a chan", reflect.UnsafePointer: "an unsafe.Pointer"}[v.Kind()], v.Type())
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return w.walk(v.Elem(), path)
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return nil
		}
		return w.reference(v, path)
	case reflect.Array:
		for i := range v.Len() {
			if err := w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		return w.fields(v, path)
	}
	return nil
}

// reference walks what a non-nil pointer, map or slice refers to, refusing
// one already on the current path (a cycle gob would follow forever).
func (w *argWalker) reference(v reflect.Value, path string) error {
	k := visit{v.Pointer(), v.Type()}
	if w.onPath[k] {
		return fmt.Errorf("%s (%s) refers back to a value that holds it: gob cannot encode a cyclic value", path, v.Type())
	}
	w.onPath[k] = true
	defer delete(w.onPath, k)
	switch v.Kind() {
	case reflect.Pointer:
		return w.walk(v.Elem(), path)
	case reflect.Slice:
		for i := range v.Len() {
			if err := w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	it := v.MapRange()
	for it.Next() {
		p := fmt.Sprintf("%s[%#v]", path, it.Key().Interface())
		if err := w.walk(it.Key(), p+" (key)"); err != nil {
			return err
		}
		if err := w.walk(it.Value(), p); err != nil {
			return err
		}
	}
	return nil
}

func (w *argWalker) fields(v reflect.Value, path string) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		fp := path + "." + f.Name
		if !f.IsExported() {
			if !v.Field(i).IsZero() {
				return fmt.Errorf("%s is unexported (%s): gob drops unexported fields, so the executors would get its zero value; "+
					"export it, or give %s a GobEncode method", fp, f.Type, t)
			}
			continue
		}
		if err := w.walk(v.Field(i), fp); err != nil {
			return err
		}
	}
	return nil
}

var (
	gobEncoder    = reflect.TypeFor[gob.GobEncoder]()
	binMarshaler  = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodesItself reports whether gob encodes t through its own method.
func encodesItself(t reflect.Type) bool {
	for _, m := range []reflect.Type{gobEncoder, binMarshaler, textMarshaler} {
		if t.Implements(m) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(m)) {
			return true
		}
	}
	return false
}

// hides caches mayHide by type.
var hides sync.Map // reflect.Type → bool

// mayHide reports whether a value of type t can hold something checkArgs
// refuses: false for plain data ([]int, map[string]float64, structs of
// exported plain fields), which is then not walked element by element.
func mayHide(t reflect.Type) bool {
	if h, ok := hides.Load(t); ok {
		return h.(bool)
	}
	hides.Store(t, true) // a recursive type: assume it may, while deciding
	h := decideHide(t)
	hides.Store(t, h)
	return h
}

func decideHide(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Interface, reflect.Pointer:
		return true // pointers: a cycle needs one
	case reflect.Slice, reflect.Array:
		return mayHide(t.Elem())
	case reflect.Map:
		return mayHide(t.Key()) || mayHide(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); !f.IsExported() || mayHide(f.Type) {
				return true
			}
		}
	}
	return false
}
