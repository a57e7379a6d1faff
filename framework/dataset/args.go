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

// ErrValueCannotTravel: a value the body hands the executors — a Value's
// result or a broadcast value — holds something they would not get, by the
// same rules as ErrArgumentCannotTravel: Value results travel gob
// encoded, broadcast values with the record codec of their type
// (recordcodec.For), which follows gob's rules for struct fields.
var ErrValueCannotTravel = errors.New("dataset: a value cannot travel to the executors")

// travelRules are what a codec carries: its name for messages and the
// interfaces through which it lets a type encode itself.
type travelRules struct {
	codec string
	self  []reflect.Type
}

var (
	gobEncoder    = reflect.TypeFor[gob.GobEncoder]()
	binMarshaler  = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

	// gobRules: encoding/gob (job arguments, Value results, and records of
	// the types the record codec leaves to gob).
	gobRules = travelRules{codec: "gob", self: []reflect.Type{gobEncoder, binMarshaler, textMarshaler}}
	// recordRules: the record codec's struct walk, which uses a part's
	// BinaryMarshaler or GobEncoder but never its TextMarshaler.
	recordRules = travelRules{codec: "the record codec", self: []reflect.Type{gobEncoder, binMarshaler}}
)

// checkArgs walks the job's arguments as gob would encode them and refuses
// what would not arrive as it is on the driver (checkTravel).
func checkArgs(job string, v any) error {
	if err := checkTravel("args", v, gobRules); err != nil {
		return fmt.Errorf("%w: job %q: %w", ErrArgumentCannotTravel, job, err)
	}
	return nil
}

// checkTravel walks v, named root in messages, as a codec with rules would
// encode it, and refuses what would not arrive as it is on the driver: a
// non-nil func, chan or unsafe.Pointer; an unexported field holding a
// non-zero value (the codec drops it); a cycle of pointers, maps or
// slices. Values of types that encode themselves (rules.self) are theirs
// to get right and not walked. The error names the field's path from
// root, its type and why. It is the one check for everything a job hands
// its executors: arguments, Value results and broadcast values.
func checkTravel(root string, v any, rules travelRules) error {
	w := &argWalker{onPath: map[visit]bool{}, rules: rules}
	return w.walk(reflect.ValueOf(v), root)
}

// visit is a reference value on the walk's current path: its address and
// type (a struct and its first field share an address).
type visit struct {
	ptr uintptr
	typ reflect.Type
}

type argWalker struct {
	onPath map[visit]bool
	rules  travelRules
}

func (w *argWalker) walk(v reflect.Value, path string) error {
	if !v.IsValid() || !mayHide(v.Type()) || w.rules.encodesItself(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return nil
		}
		return fmt.Errorf("%s is %s (%s): %s cannot encode it, so the executors would get nil; "+
			"build it inside the job's body, or pass the data it needs instead", path, map[reflect.Kind]string{reflect.Func: "a func", reflect.Chan: "a chan", reflect.UnsafePointer: "an unsafe.Pointer"}[v.Kind()], v.Type(), w.rules.codec)
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
		return fmt.Errorf("%s (%s) refers back to a value that holds it: %s cannot encode a cyclic value", path, v.Type(), w.rules.codec)
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
				return fmt.Errorf("%s is unexported (%s): %s drops unexported fields, so the executors would get its zero value; "+
					"export it, or give %s a MarshalBinary or GobEncode method", fp, f.Type, w.rules.codec, t)
			}
			continue
		}
		if err := w.walk(v.Field(i), fp); err != nil {
			return err
		}
	}
	return nil
}

// encodesItself reports whether the codec encodes t through its own method.
func (r travelRules) encodesItself(t reflect.Type) bool {
	for _, m := range r.self {
		if t.Implements(m) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(m)) {
			return true
		}
	}
	return false
}

// hides caches mayHide by type.
var hides sync.Map // reflect.Type → bool

// mayHide reports whether a value of type t can hold something checkTravel
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
