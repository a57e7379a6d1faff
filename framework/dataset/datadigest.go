package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"reflect"
	"slices"
)

// A source's records are decided by data the body hands it (Parallelize's
// slice, Range's bounds, a sampler's seed), which an executor replaying
// the body computes again. Data that differs between processes (read
// from rand, time.Now or the environment without Value) would give an
// executor other records than the driver's, silently; so that data's
// digest is part of the node's fingerprint, and a difference is the
// graph-mismatch error naming the node.

// maxDigestDepth bounds how deep digestValue follows pointers (a cyclic
// value stops there).
const maxDigestDepth = 32

// digestOf is a short digest of xs's values: equal for equal values in
// any process, whatever their addresses or the order a map iterates in.
func digestOf(xs ...any) string {
	h := sha256.New()
	var buf []byte
	for _, x := range xs {
		buf = digestValue(buf[:0], reflect.ValueOf(x), 0)
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// digestValue appends a canonical encoding of v: kinds, lengths and
// contents; pointers by what they point to; maps sorted by their keys'
// encodings; funcs, chans and unsafe pointers by whether they are nil.
func digestValue(buf []byte, v reflect.Value, depth int) []byte {
	if !v.IsValid() {
		return append(buf, 0)
	}
	buf = append(buf, byte(v.Kind()))
	if depth > maxDigestDepth {
		return buf
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(buf, 1)
		}
		return append(buf, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(buf, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(buf, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(real(c)))
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(imag(c)))
	case reflect.String:
		buf = binary.AppendUvarint(buf, uint64(v.Len()))
		return append(buf, v.String()...)
	case reflect.Slice, reflect.Array:
		buf = binary.AppendUvarint(buf, uint64(v.Len()))
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return append(buf, v.Bytes()...)
		}
		for i := range v.Len() {
			buf = digestValue(buf, v.Index(i), depth)
		}
		return buf
	case reflect.Struct:
		for i := range v.NumField() {
			buf = digestValue(buf, v.Field(i), depth)
		}
		return buf
	case reflect.Map:
		entries := make([][]byte, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			e := digestValue(nil, it.Key(), depth+1)
			entries = append(entries, digestValue(e, it.Value(), depth+1))
		}
		slices.SortFunc(entries, bytes.Compare)
		buf = binary.AppendUvarint(buf, uint64(len(entries)))
		for _, e := range entries {
			buf = binary.AppendUvarint(buf, uint64(len(e)))
			buf = append(buf, e...)
		}
		return buf
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(buf, 0)
		}
		buf = append(buf, 1)
		if v.Kind() == reflect.Interface {
			buf = append(buf, v.Elem().Type().String()...)
		}
		return digestValue(buf, v.Elem(), depth+1)
	default: // func, chan, unsafe pointer: only whether set
		if v.IsNil() {
			return append(buf, 0)
		}
		return append(buf, 1)
	}
}
