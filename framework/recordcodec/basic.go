package recordcodec

import (
	"encoding/binary"
	"math"
	"reflect"
	"unsafe"
)

// basic returns the codec of a predeclared basic type T.
func basic[T any]() Codec[T] {
	var c any
	switch any(*new(T)).(type) {
	case string:
		c = stringCodec{}
	case []byte:
		c = bytesCodec{}
	case bool:
		c = boolCodec{}
	case int:
		c = intCodec[int]{}
	case int8:
		c = intCodec[int8]{}
	case int16:
		c = intCodec[int16]{}
	case int32:
		c = intCodec[int32]{}
	case int64:
		c = intCodec[int64]{}
	case uint:
		c = uintCodec[uint]{}
	case uint8:
		c = uintCodec[uint8]{}
	case uint16:
		c = uintCodec[uint16]{}
	case uint32:
		c = uintCodec[uint32]{}
	case uint64:
		c = uintCodec[uint64]{}
	case uintptr:
		c = uintCodec[uintptr]{}
	case float32:
		c = float32Codec{}
	case float64:
		c = float64Codec{}
	}
	return c.(Codec[T])
}

// namedBasic is the codec of a named type over a basic one (type ID int64,
// type Word string): the basic codec applied to the same memory.
func namedBasic[T any]() (Codec[T], bool) {
	t := reflect.TypeFor[T]()
	switch t.Kind() {
	case reflect.String:
		return castCodec[T, string]{stringCodec{}}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return castCodec[T, []byte]{bytesCodec{}}, true
		}
	case reflect.Bool:
		return castCodec[T, bool]{boolCodec{}}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return castCodec[T, any]{}.numeric(t.Kind())
	}
	return nil, false
}

// numeric picks the numeric codec for kind.
func (castCodec[T, U]) numeric(kind reflect.Kind) (Codec[T], bool) {
	switch kind {
	case reflect.Int:
		return castCodec[T, int]{intCodec[int]{}}, true
	case reflect.Int8:
		return castCodec[T, int8]{intCodec[int8]{}}, true
	case reflect.Int16:
		return castCodec[T, int16]{intCodec[int16]{}}, true
	case reflect.Int32:
		return castCodec[T, int32]{intCodec[int32]{}}, true
	case reflect.Int64:
		return castCodec[T, int64]{intCodec[int64]{}}, true
	case reflect.Uint:
		return castCodec[T, uint]{uintCodec[uint]{}}, true
	case reflect.Uint8:
		return castCodec[T, uint8]{uintCodec[uint8]{}}, true
	case reflect.Uint16:
		return castCodec[T, uint16]{uintCodec[uint16]{}}, true
	case reflect.Uint32:
		return castCodec[T, uint32]{uintCodec[uint32]{}}, true
	case reflect.Uint64:
		return castCodec[T, uint64]{uintCodec[uint64]{}}, true
	case reflect.Uintptr:
		return castCodec[T, uintptr]{uintCodec[uintptr]{}}, true
	case reflect.Float32:
		return castCodec[T, float32]{float32Codec{}}, true
	case reflect.Float64:
		return castCodec[T, float64]{float64Codec{}}, true
	}
	return nil, false
}

// castCodec encodes T, whose underlying type is U's, with U's codec.
type castCodec[T, U any] struct{ inner Codec[U] }

func (c castCodec[T, U]) Append(dst []byte, v T) ([]byte, error) {
	return c.inner.Append(dst, *(*U)(unsafe.Pointer(&v)))
}

func (c castCodec[T, U]) Decode(src []byte) (T, error) {
	u, err := c.inner.Decode(src)
	return *(*T)(unsafe.Pointer(&u)), err
}

func (c castCodec[T, U]) Name() string { return c.inner.Name() }

type stringCodec struct{}

func (stringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }
func (stringCodec) Decode(src []byte) (string, error)           { return string(src), nil }
func (stringCodec) Name() string                                { return "string" }

type bytesCodec struct{}

func (bytesCodec) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }
func (bytesCodec) Decode(src []byte) ([]byte, error)           { return append([]byte(nil), src...), nil }
func (bytesCodec) Name() string                                { return "bytes" }

type boolCodec struct{}

func (boolCodec) Append(dst []byte, v bool) ([]byte, error) {
	if v {
		return append(dst, 1), nil
	}
	return append(dst, 0), nil
}

func (boolCodec) Decode(src []byte) (bool, error) {
	if len(src) != 1 || src[0] > 1 {
		return false, corrupt("bool of %d bytes", len(src))
	}
	return src[0] == 1, nil
}

func (boolCodec) Name() string { return "bool" }

type signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// intCodec is a zig-zag varint, range-checked on decode.
type intCodec[I signed] struct{}

func (intCodec[I]) Append(dst []byte, v I) ([]byte, error) {
	return binary.AppendVarint(dst, int64(v)), nil
}

func (intCodec[I]) Decode(src []byte) (I, error) {
	x, n := binary.Varint(src)
	if n <= 0 || n != len(src) {
		return 0, corrupt("varint of %d bytes", len(src))
	}
	if int64(I(x)) != x {
		return 0, corrupt("%d overflows %s", x, typeName[I]())
	}
	return I(x), nil
}

func (intCodec[I]) Name() string { return "varint" }

// uintCodec is a varint, range-checked on decode.
type uintCodec[U unsigned] struct{}

func (uintCodec[U]) Append(dst []byte, v U) ([]byte, error) {
	return binary.AppendUvarint(dst, uint64(v)), nil
}

func (uintCodec[U]) Decode(src []byte) (U, error) {
	x, n := binary.Uvarint(src)
	if n <= 0 || n != len(src) {
		return 0, corrupt("uvarint of %d bytes", len(src))
	}
	if uint64(U(x)) != x {
		return 0, corrupt("%d overflows %s", x, typeName[U]())
	}
	return U(x), nil
}

func (uintCodec[U]) Name() string { return "uvarint" }

type float64Codec struct{}

func (float64Codec) Append(dst []byte, v float64) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)), nil
}

func (float64Codec) Decode(src []byte) (float64, error) {
	if len(src) != 8 {
		return 0, corrupt("float64 of %d bytes", len(src))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(src)), nil
}

func (float64Codec) Name() string { return "float64" }

type float32Codec struct{}

func (float32Codec) Append(dst []byte, v float32) ([]byte, error) {
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v)), nil
}

func (float32Codec) Decode(src []byte) (float32, error) {
	if len(src) != 4 {
		return 0, corrupt("float32 of %d bytes", len(src))
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(src)), nil
}

func (float32Codec) Name() string { return "float32" }
