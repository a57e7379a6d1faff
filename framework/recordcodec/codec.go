package recordcodec

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
)

// Codec encodes values of T. Implementations are safe for concurrent use.
type Codec[T any] interface {
	// Append appends v's encoding to dst.
	Append(dst []byte, v T) ([]byte, error)
	// Decode decodes exactly one value from src, all of src.
	Decode(src []byte) (T, error)
	// Name says which path was chosen ("string", "varint", "kv(string,varint)",
	// "binary", "gob", ...), for logs and benchmarks.
	Name() string
}

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("recordcodec: corrupt record")

// KV is a key and a value: the record of every keyed dataset.
type KV[K, V any] struct {
	Key   K
	Value V
}

// codecOfKV lets For find KV's codec without knowing K and V.
type kvCodecMaker interface{ recordcodecKV() any }

func (KV[K, V]) recordcodecKV() any { return kvCodec[K, V]{key: For[K](), value: For[V]()} }

// For returns the fastest codec that round-trips every value of T (see the
// package documentation for the order in which paths are chosen).
func For[T any]() Codec[T] {
	var zero T
	switch any(zero).(type) {
	case string, []byte, bool, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
		return basic[T]()
	}
	if m, ok := any(zero).(kvCodecMaker); ok {
		return m.recordcodecKV().(Codec[T])
	}
	if c, ok := marshalerCodec[T](); ok {
		return c
	}
	if c, ok := namedBasic[T](); ok {
		return c
	}
	if c, ok := reflectCodecFor[T](); ok {
		return c
	}
	return gobCodec[T]{}
}

// marshalerCodec is the BinaryMarshaler path when T has MarshalBinary and
// *T has UnmarshalBinary.
func marshalerCodec[T any]() (Codec[T], bool) {
	var zero T
	if _, ok := any(zero).(encoding.BinaryMarshaler); !ok {
		return nil, false
	}
	if _, ok := any(&zero).(encoding.BinaryUnmarshaler); !ok {
		return nil, false
	}
	return binaryCodec[T]{}, true
}

func corrupt(what string, args ...any) error {
	return fmt.Errorf("%w: "+what, append([]any{ErrCorrupt}, args...)...)
}

func typeName[T any]() string { return reflect.TypeFor[T]().String() }
