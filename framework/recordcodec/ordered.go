package recordcodec

import (
	"cmp"
	"encoding/binary"
	"math"
	"reflect"
	"unsafe"
)

// Ordered returns T's order-preserving codec: bytes.Compare of two
// encodings is cmp.Compare of the values (NaNs sort first, after -Inf in
// no case: all NaNs encode alike and below every number). Integers take 8
// bytes, so use For for values that are not sorted.
func Ordered[T cmp.Ordered]() Codec[T] {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.String:
		return castCodec[T, string]{stringCodec{}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return orderedInt[T]{}
	case reflect.Float32, reflect.Float64:
		return orderedFloat[T]{}
	default: // unsigned
		return orderedUint[T]{}
	}
}

type orderedInt[T cmp.Ordered] struct{}

func (orderedInt[T]) Append(dst []byte, v T) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(signedOf(v))^(1<<63)), nil
}

func (orderedInt[T]) Decode(src []byte) (T, error) {
	var v T
	if len(src) != 8 {
		return v, corrupt("ordered integer of %d bytes", len(src))
	}
	x := int64(binary.BigEndian.Uint64(src) ^ (1 << 63))
	bits := 8 * unsafe.Sizeof(v)
	if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
		return v, corrupt("%d overflows %s", x, typeName[T]())
	}
	p := unsafe.Pointer(&v)
	switch bits {
	case 8:
		*(*int8)(p) = int8(x)
	case 16:
		*(*int16)(p) = int16(x)
	case 32:
		*(*int32)(p) = int32(x)
	default:
		*(*int64)(p) = x
	}
	return v, nil
}

func (orderedInt[T]) Name() string { return "ordered-int" }

type orderedUint[T cmp.Ordered] struct{}

func (orderedUint[T]) Append(dst []byte, v T) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, unsignedOf(v)), nil
}

func (orderedUint[T]) Decode(src []byte) (T, error) {
	var v T
	if len(src) != 8 {
		return v, corrupt("ordered unsigned of %d bytes", len(src))
	}
	x := binary.BigEndian.Uint64(src)
	bits := 8 * unsafe.Sizeof(v)
	if bits < 64 && x >= 1<<bits {
		return v, corrupt("%d overflows %s", x, typeName[T]())
	}
	p := unsafe.Pointer(&v)
	switch bits {
	case 8:
		*(*uint8)(p) = uint8(x)
	case 16:
		*(*uint16)(p) = uint16(x)
	case 32:
		*(*uint32)(p) = uint32(x)
	default:
		*(*uint64)(p) = x
	}
	return v, nil
}

func (orderedUint[T]) Name() string { return "ordered-uint" }

type orderedFloat[T cmp.Ordered] struct{}

func (orderedFloat[T]) Append(dst []byte, v T) ([]byte, error) {
	f := floatOf(v)
	if f != f {
		return binary.BigEndian.AppendUint64(dst, 0), nil // every NaN first
	}
	if f == 0 {
		f = 0 // -0 encodes as +0: they compare equal
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, b), nil
}

func (orderedFloat[T]) Decode(src []byte) (T, error) {
	var v T
	if len(src) != 8 {
		return v, corrupt("ordered float of %d bytes", len(src))
	}
	b := binary.BigEndian.Uint64(src)
	var f float64
	switch {
	case b == 0:
		f = math.NaN()
	case b>>63 == 1:
		f = math.Float64frombits(b &^ (1 << 63))
	default:
		f = math.Float64frombits(^b)
	}
	p := unsafe.Pointer(&v)
	if unsafe.Sizeof(v) == 4 {
		if f == f && float64(float32(f)) != f {
			return v, corrupt("%v is not a float32", f)
		}
		*(*float32)(p) = float32(f)
	} else {
		*(*float64)(p) = f
	}
	return v, nil
}

func (orderedFloat[T]) Name() string { return "ordered-float" }

// signedOf is v, of a signed integer kind, as an int64.
func signedOf[T cmp.Ordered](v T) int64 {
	p := unsafe.Pointer(&v)
	switch unsafe.Sizeof(v) {
	case 1:
		return int64(*(*int8)(p))
	case 2:
		return int64(*(*int16)(p))
	case 4:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

// unsignedOf is v, of an unsigned integer kind, as a uint64.
func unsignedOf[T cmp.Ordered](v T) uint64 {
	p := unsafe.Pointer(&v)
	switch unsafe.Sizeof(v) {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

// floatOf is v, of a float kind, as a float64.
func floatOf[T cmp.Ordered](v T) float64 {
	p := unsafe.Pointer(&v)
	if unsafe.Sizeof(v) == 4 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}
