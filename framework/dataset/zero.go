package dataset

import (
	"fmt"
	"reflect"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// zeroMaker returns a function giving fresh copies of zero, so that a
// task or key whose function modifies its first argument (a slice's
// array, a map) never shares it with another — Spark clones its zero
// value per task and per key. A type holding no references (numbers,
// strings, arrays and structs of them) is copied by assignment; any other
// is encoded once with its record codec and decoded for every copy, so it
// must be a type the codec round-trips (gob for most: exported fields).
func zeroMaker[U any](b *Builder, op string, zero U) func() U {
	if !holdsReferences(reflect.TypeFor[U]()) {
		return func() U { return zero }
	}
	codec := recordcodec.For[U]()
	enc, err := codec.Append(nil, zero)
	if err == nil {
		_, err = codec.Decode(enc)
	}
	if err != nil {
		b.fail(fmt.Errorf("dataset: %s: its zero value (%T) is copied for every task and key with its record codec: %w", op, zero, err))
		return func() U { return zero }
	}
	return func() U {
		u, err := codec.Decode(enc)
		if err != nil { // it decoded once: a codec that is not deterministic
			panic(fmt.Sprintf("dataset: %s: decode a copy of the zero value: %v", op, err))
		}
		return u
	}
}

// holdsReferences reports whether a value of t can share memory with a
// copy made by assignment.
func holdsReferences(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return false
	case reflect.Array:
		return holdsReferences(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsReferences(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}
