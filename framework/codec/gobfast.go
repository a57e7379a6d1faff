package codec

import (
	"math"
	"math/bits"
)

// A fast path for GobCodec and values of Go's basic types.
//
// Most task inputs and outputs are an int, a string or a []byte, and for
// those building a gob.Encoder or gob.Decoder per call (0.5–1.5 µs and
// 11–18 allocations, see BenchmarkGob*) is the largest per-task cost. A gob stream holding one such
// value is tiny and fixed in shape, so it is written and parsed here by
// hand:
//
//	message length  uint
//	type id         int: one of gob's predefined ids below, no descriptor
//	field delta     uint 0 (the singleton field)
//	value           uint (bool, unsigned), zig-zagged int (signed),
//	                byte-reversed float64 bits as uint (float32, float64),
//	                uint length + bytes (string, []byte)
//
// where a uint below 128 is one byte and otherwise the negated byte count
// followed by the big-endian bytes, without leading zeros.
//
// The output is byte for byte what encoding/gob writes (the tests check it
// differentially and by fuzzing), so an encoder with the fast path and a
// decoder without it, or the other way round, still agree. The decoder
// accepts exactly this canonical form; anything else — another type id, a
// type descriptor, trailing or non-minimal bytes, a value that overflows the
// target — is handed to encoding/gob, so results and errors stay gob's.
// Only the exact types are handled: a named type such as `type ID int`
// keeps going through encoding/gob.

// gob's predefined type ids (encoding/gob/type.go), fixed by its wire
// format. They travel as ints, i.e. doubled.
const (
	gobBool   = 1
	gobInt    = 2
	gobUint   = 3
	gobFloat  = 4
	gobBytes  = 5
	gobString = 6
)

// gobFastMax bounds the strings, byte slices and streams the fast path
// handles. encoding/gob refuses messages of 1 GiB and more on 32-bit
// platforms (8 GiB on 64-bit); longer input is left to it so its limits
// and errors apply unchanged.
const gobFastMax = 1 << 29

// gobMarshalFast encodes v exactly like gob.NewEncoder(w).Encode(v) if v's
// dynamic type is one of the basic types above; ok is false otherwise.
func gobMarshalFast(v any) (data []byte, ok bool) {
	switch x := v.(type) {
	case bool:
		var u uint64
		if x {
			u = 1
		}
		return gobUintMessage(gobBool, u), true
	case int:
		return gobUintMessage(gobInt, zigzag(int64(x))), true
	case int8:
		return gobUintMessage(gobInt, zigzag(int64(x))), true
	case int16:
		return gobUintMessage(gobInt, zigzag(int64(x))), true
	case int32:
		return gobUintMessage(gobInt, zigzag(int64(x))), true
	case int64:
		return gobUintMessage(gobInt, zigzag(x)), true
	case uint:
		return gobUintMessage(gobUint, uint64(x)), true
	case uint8:
		return gobUintMessage(gobUint, uint64(x)), true
	case uint16:
		return gobUintMessage(gobUint, uint64(x)), true
	case uint32:
		return gobUintMessage(gobUint, uint64(x)), true
	case uint64:
		return gobUintMessage(gobUint, x), true
	case float32: // gob sends every float as a float64
		return gobUintMessage(gobFloat, floatBits(float64(x))), true
	case float64:
		return gobUintMessage(gobFloat, floatBits(x)), true
	case string:
		if len(x) < gobFastMax {
			return gobBytesMessage(gobString, x), true
		}
	case []byte: // a nil slice is sent as an empty one, as gob does
		if len(x) < gobFastMax {
			return gobBytesMessage(gobBytes, x), true
		}
	}
	return nil, false
}

// gobUintMessage returns the message for a value sent as one uint. Its
// body is at most 11 bytes, so the length takes one byte.
func gobUintMessage(id byte, u uint64) []byte {
	body := 2 + uintSize(u)
	b := make([]byte, 0, 1+body)
	b = append(b, byte(body), id<<1, 0)
	return appendUint(b, u)
}

// gobBytesMessage returns the message for a string or []byte: its length
// as a uint followed by its bytes.
func gobBytesMessage[S string | []byte](id byte, s S) []byte {
	body := 2 + uintSize(uint64(len(s))) + len(s)
	b := make([]byte, 0, uintSize(uint64(body))+body)
	b = appendUint(b, uint64(body))
	b = append(b, id<<1, 0)
	b = appendUint(b, uint64(len(s)))
	return append(b, s...)
}

// zigzag maps a signed int onto the uint gob sends (encoding/gob's
// encodeInt): the sign moves to the low bit, negatives are complemented.
func zigzag(i int64) uint64 {
	if i < 0 {
		return uint64(^i<<1) | 1
	}
	return uint64(i << 1)
}

// floatBits is the uint gob sends for a float: its IEEE bits byte-reversed,
// so that the common values with few mantissa bits encode short.
func floatBits(f float64) uint64 { return bits.ReverseBytes64(math.Float64bits(f)) }

// uintSize is the length of u's gob encoding.
func uintSize(u uint64) int {
	if u < 0x80 {
		return 1
	}
	return 1 + (bits.Len64(u)+7)/8
}

// appendUint appends gob's encoding of u.
func appendUint(b []byte, u uint64) []byte {
	if u < 0x80 {
		return append(b, byte(u))
	}
	n := (bits.Len64(u) + 7) / 8
	b = append(b, byte(-n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}

// gobUnmarshalFast decodes data into v if v is a non-nil pointer to one of
// the basic types and data is the canonical stream gob would decode into
// it. When it returns false, *v is untouched and encoding/gob takes over.
func gobUnmarshalFast(data []byte, v any) bool {
	switch p := v.(type) {
	case *bool:
		// gob reads any non-zero uint as true; only 0 and 1 are canonical.
		u, ok := gobFastUint(data, gobBool)
		if ok && u <= 1 && p != nil {
			*p = u == 1
			return true
		}
	case *int:
		return setInt(p, data)
	case *int8:
		return setInt(p, data)
	case *int16:
		return setInt(p, data)
	case *int32:
		return setInt(p, data)
	case *int64:
		return setInt(p, data)
	case *uint:
		return setUint(p, data)
	case *uint8:
		return setUint(p, data)
	case *uint16:
		return setUint(p, data)
	case *uint32:
		return setUint(p, data)
	case *uint64:
		return setUint(p, data)
	case *float32:
		// Finite values beyond float32's range are gob's overflow error;
		// they, and the infinities gob does accept, are left to gob.
		f, ok := gobFastFloat(data)
		if ok && p != nil && (math.Abs(f) <= math.MaxFloat32 || math.IsNaN(f)) {
			*p = float32(f)
			return true
		}
	case *float64:
		f, ok := gobFastFloat(data)
		if ok && p != nil {
			*p = f
			return true
		}
	case *string:
		s, ok := gobFastBytes(data, gobString)
		if ok && p != nil {
			*p = string(s)
			return true
		}
	case *[]byte:
		s, ok := gobFastBytes(data, gobBytes)
		if ok && p != nil {
			// Like gob: reuse the slice's array if it is big enough (so
			// a nil slice stays nil when s is empty), else allocate.
			if cap(*p) >= len(s) {
				*p = (*p)[:len(s)]
			} else {
				*p = make([]byte, len(s))
			}
			copy(*p, s)
			return true
		}
	}
	return false
}

// setInt stores a canonical int stream in *p if it fits T.
func setInt[T int | int8 | int16 | int32 | int64](p *T, data []byte) bool {
	u, ok := gobFastUint(data, gobInt)
	i := int64(u >> 1) // undo zigzag, as encoding/gob's decodeInt does
	if u&1 != 0 {
		i = ^i
	}
	if !ok || p == nil || int64(T(i)) != i {
		return false
	}
	*p = T(i)
	return true
}

// setUint stores a canonical uint stream in *p if it fits T.
func setUint[T uint | uint8 | uint16 | uint32 | uint64](p *T, data []byte) bool {
	u, ok := gobFastUint(data, gobUint)
	if !ok || p == nil || uint64(T(u)) != u {
		return false
	}
	*p = T(u)
	return true
}

// gobFastFloat decodes a canonical float stream.
func gobFastFloat(data []byte) (float64, bool) {
	u, ok := gobFastUint(data, gobFloat)
	return math.Float64frombits(bits.ReverseBytes64(u)), ok
}

// gobFastUint decodes a canonical stream of type id whose value is one
// uint.
func gobFastUint(data []byte, id byte) (uint64, bool) {
	val, ok := gobFastValue(data, id)
	if !ok {
		return 0, false
	}
	u, rest, ok := readUint(val)
	return u, ok && len(rest) == 0
}

// gobFastBytes decodes a canonical string or []byte stream of type id; the
// result aliases data.
func gobFastBytes(data []byte, id byte) ([]byte, bool) {
	val, ok := gobFastValue(data, id)
	if !ok {
		return nil, false
	}
	n, rest, ok := readUint(val)
	return rest, ok && n == uint64(len(rest))
}

// gobFastValue returns the value part of data if data is exactly one
// message — length, type id, delta 0, value — of the predefined type id.
func gobFastValue(data []byte, id byte) ([]byte, bool) {
	n, body, ok := readUint(data)
	if !ok || len(data) >= gobFastMax || n != uint64(len(body)) ||
		len(body) < 3 || body[0] != id<<1 || body[1] != 0 {
		return nil, false
	}
	return body[2:], true
}

// readUint reads a minimally encoded gob uint from the front of b: at
// most 8 bytes after the count byte, no leading zero byte, and the long
// form only for values of 128 and more. gob itself also reads non-minimal
// forms; those go to it.
func readUint(b []byte) (u uint64, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	if b[0] < 0x80 {
		return uint64(b[0]), b[1:], true
	}
	n := -int(int8(b[0]))
	if n > 8 || len(b) <= n || b[1] == 0 || n == 1 && b[1] < 0x80 {
		return 0, nil, false
	}
	for _, c := range b[1 : 1+n] {
		u = u<<8 | uint64(c)
	}
	return u, b[1+n:], true
}
