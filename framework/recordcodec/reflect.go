package recordcodec

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
)

// structCodec is the path for composite types (structs, arrays, slices,
// maps, pointers of the basic kinds): a walk of the value fixed by its
// type, so one value has one encoding in every process. Gob cannot be
// that: its stream names types by ids a process assigns in the order it
// first meets them, so the same key encoded by two executors could differ
// and be hashed to two partitions (a wrong answer). Fields follow gob's
// rule: exported fields only, chan and func fields ignored. A map's
// entries are sorted by their encoded keys. A part implementing
// encoding.BinaryMarshaler or gob.GobEncoder (with the unmarshaler on its
// pointer) is encoded by its own methods, length-prefixed.
type structCodec[T any] struct{ c *typeCodec }

// typeCodec encodes and decodes one reflect.Type.
type typeCodec struct {
	enc func(dst []byte, v reflect.Value) ([]byte, error)
	dec func(src []byte, v reflect.Value) ([]byte, error)
	// empty: the encoding can be zero bytes long (struct{}, [0]T), which
	// a length-prefixed sequence could not bound.
	empty bool
}

var typeCodecs sync.Map // reflect.Type → *typeCodec

// reflectCodecFor returns the structCodec for T, or false when some part
// of T cannot be encoded this way (interfaces, a struct with no exported
// field, a sequence of zero-length elements): those keep gob.
func reflectCodecFor[T any]() (Codec[T], bool) {
	t := reflect.TypeFor[T]()
	switch t.Kind() {
	case reflect.Struct, reflect.Array, reflect.Slice, reflect.Map, reflect.Pointer,
		reflect.Complex64, reflect.Complex128:
	default:
		return nil, false
	}
	if c, ok := typeCodecs.Load(t); ok {
		return structCodec[T]{c.(*typeCodec)}, true
	}
	c, err := buildTypeCodec(t, map[reflect.Type]*typeCodec{})
	if err != nil {
		return nil, false
	}
	c2, _ := typeCodecs.LoadOrStore(t, c)
	return structCodec[T]{c2.(*typeCodec)}, true
}

func (c structCodec[T]) Append(dst []byte, v T) ([]byte, error) {
	out, err := c.c.enc(dst, reflect.ValueOf(&v).Elem())
	if err != nil {
		return dst, fmt.Errorf("recordcodec: %s: %w", typeName[T](), err)
	}
	return out, nil
}

func (c structCodec[T]) Decode(src []byte) (T, error) {
	var v T
	rest, err := c.c.dec(src, reflect.ValueOf(&v).Elem())
	if err != nil {
		return v, fmt.Errorf("%w: %s: %w", ErrCorrupt, typeName[T](), err)
	}
	if len(rest) != 0 {
		return v, corrupt("%s: %d trailing bytes", typeName[T](), len(rest))
	}
	return v, nil
}

func (structCodec[T]) Name() string { return "struct" }

var (
	binaryMarshalerType   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	gobEncoderType        = reflect.TypeFor[gob.GobEncoder]()
	gobDecoderType        = reflect.TypeFor[gob.GobDecoder]()
)

// buildTypeCodec makes t's codec; building records each type before its
// parts so a recursive type (type Node struct{ Next *Node }) refers to
// its own codec.
func buildTypeCodec(t reflect.Type, building map[reflect.Type]*typeCodec) (*typeCodec, error) {
	if c, ok := building[t]; ok {
		return c, nil
	}
	if c, ok := typeCodecs.Load(t); ok {
		return c.(*typeCodec), nil
	}
	c := &typeCodec{}
	building[t] = c
	if err := c.build(t, building); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *typeCodec) build(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	if marshalled(c, t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		c.enc, c.dec = scalar(t.Kind())
		return nil
	case reflect.Pointer:
		return c.pointer(t, building)
	case reflect.Array:
		return c.array(t, building)
	case reflect.Slice:
		return c.slice(t, building)
	case reflect.Map:
		return c.mapOf(t, building)
	case reflect.Struct:
		return c.structOf(t, building)
	}
	return fmt.Errorf("%s: kind %s has no fixed encoding", t, t.Kind())
}

// marshalled sets c to t's own marshalling methods when t or *t has them
// (unmarshalling always through *t). A pointer type is left to pointer(),
// whose element then finds the methods.
func marshalled(c *typeCodec, t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return false
	}
	pt := reflect.PointerTo(t)
	var marshal func(v reflect.Value) ([]byte, error)
	var unmarshal func(v reflect.Value, b []byte) error
	switch {
	case pt.Implements(binaryMarshalerType) && pt.Implements(binaryUnmarshalerType):
		marshal = func(v reflect.Value) ([]byte, error) {
			return addr(v).Interface().(encoding.BinaryMarshaler).MarshalBinary()
		}
		unmarshal = func(v reflect.Value, b []byte) error {
			return v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b)
		}
	case pt.Implements(gobEncoderType) && pt.Implements(gobDecoderType):
		marshal = func(v reflect.Value) ([]byte, error) { return addr(v).Interface().(gob.GobEncoder).GobEncode() }
		unmarshal = func(v reflect.Value, b []byte) error {
			return v.Addr().Interface().(gob.GobDecoder).GobDecode(b)
		}
	default:
		return false
	}
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		b, err := marshal(v)
		if err != nil {
			return dst, fmt.Errorf("marshalling %s: %w", t, err)
		}
		return appendBytes(dst, b), nil
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		b, rest, err := readBytes(src)
		if err != nil {
			return nil, err
		}
		if err := unmarshal(v, bytes.Clone(b)); err != nil {
			return nil, fmt.Errorf("unmarshalling %s: %w", t, err)
		}
		return rest, nil
	}
	return true
}

// addr is a pointer to v: v's own address, or a copy's when v cannot be
// addressed (a map's value).
func addr(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v.Addr()
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return p
}

func (c *typeCodec) pointer(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	elem, err := buildTypeCodec(t.Elem(), building)
	if err != nil {
		return err
	}
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(dst, 0), nil
		}
		return elem.enc(append(dst, 1), v.Elem())
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		if len(src) == 0 || src[0] > 1 {
			return nil, fmt.Errorf("%s: bad nil flag", t)
		}
		if src[0] == 0 {
			v.SetZero()
			return src[1:], nil
		}
		p := reflect.New(t.Elem())
		rest, err := elem.dec(src[1:], p.Elem())
		v.Set(p)
		return rest, err
	}
	return nil
}

func (c *typeCodec) array(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	elem, err := buildTypeCodec(t.Elem(), building)
	if err != nil {
		return err
	}
	c.empty = t.Len() == 0 || elem.empty
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		var err error
		for i := range v.Len() {
			if dst, err = elem.enc(dst, v.Index(i)); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		var err error
		for i := range v.Len() {
			if src, err = elem.dec(src, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return src, nil
	}
	return nil
}

func (c *typeCodec) slice(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	if t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(binaryMarshalerType) {
		c.enc = func(dst []byte, v reflect.Value) ([]byte, error) { return appendBytes(dst, v.Bytes()), nil }
		c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
			b, rest, err := readBytes(src)
			if err == nil && len(b) > 0 {
				v.SetBytes(bytes.Clone(b))
			}
			return rest, err
		}
		return nil
	}
	elem, err := sequenceElem(t, t.Elem(), building)
	if err != nil {
		return err
	}
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		dst = appendLen(dst, v)
		var err error
		for i := range v.Len() {
			if dst, err = elem.enc(dst, v.Index(i)); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		n, src, err := readLen(src, t)
		if err != nil || n < 0 {
			return src, err
		}
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			if src, err = elem.dec(src, s.Index(i)); err != nil {
				return nil, err
			}
		}
		v.Set(s)
		return src, nil
	}
	return nil
}

func (c *typeCodec) mapOf(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	key, err := sequenceElem(t, t.Key(), building)
	if err != nil {
		return err
	}
	val, err := buildTypeCodec(t.Elem(), building)
	if err != nil {
		return err
	}
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		return appendMap(dst, v, key, val)
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		n, src, err := readLen(src, t)
		if err != nil || n < 0 {
			return src, err
		}
		m := reflect.MakeMapWithSize(t, n)
		for range n {
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			if src, err = key.dec(src, k); err != nil {
				return nil, err
			}
			if src, err = val.dec(src, e); err != nil {
				return nil, err
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
		return src, nil
	}
	return nil
}

// appendMap writes a map's entries sorted by their encoded keys, so equal
// maps have equal encodings whatever Go's iteration order.
func appendMap(dst []byte, v reflect.Value, key, val *typeCodec) ([]byte, error) {
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k, err := key.enc(nil, it.Key())
		if err != nil {
			return dst, err
		}
		e, err := val.enc(nil, it.Value())
		if err != nil {
			return dst, err
		}
		entries = append(entries, entry{k, e})
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	dst = appendLen(dst, v)
	for _, e := range entries {
		dst = append(append(dst, e.k...), e.v...)
	}
	return dst, nil
}

func (c *typeCodec) structOf(t reflect.Type, building map[reflect.Type]*typeCodec) error {
	var fields []int
	var codecs []*typeCodec
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() == reflect.Chan || f.Type.Kind() == reflect.Func {
			continue // gob's rule: such fields are not sent
		}
		fc, err := buildTypeCodec(f.Type, building)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields, codecs = append(fields, i), append(codecs, fc)
	}
	if len(fields) == 0 {
		return fmt.Errorf("%s has no exported fields", t)
	}
	c.empty = !slices.ContainsFunc(codecs, func(fc *typeCodec) bool { return !fc.empty })
	c.enc = func(dst []byte, v reflect.Value) ([]byte, error) {
		var err error
		for j, i := range fields {
			if dst, err = codecs[j].enc(dst, v.Field(i)); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	c.dec = func(src []byte, v reflect.Value) ([]byte, error) {
		var err error
		for j, i := range fields {
			if src, err = codecs[j].dec(src, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return src, nil
	}
	return nil
}

// sequenceElem is the codec of a slice's element or a map's key, which
// must take at least one byte so a corrupt length cannot ask for more
// elements than the input holds.
func sequenceElem(t, elem reflect.Type, building map[reflect.Type]*typeCodec) (*typeCodec, error) {
	c, err := buildTypeCodec(elem, building)
	if err != nil {
		return nil, err
	}
	if c.empty {
		return nil, fmt.Errorf("%s: elements of %s may encode to nothing", t, elem)
	}
	return c, nil
}

// scalar is the codec of one basic kind (named or not).
func scalar(k reflect.Kind) (enc func([]byte, reflect.Value) ([]byte, error), dec func([]byte, reflect.Value) ([]byte, error)) {
	switch k {
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) ([]byte, error) {
				if v.Bool() {
					return append(dst, 1), nil
				}
				return append(dst, 0), nil
			}, func(src []byte, v reflect.Value) ([]byte, error) {
				if len(src) == 0 || src[0] > 1 {
					return nil, fmt.Errorf("bad bool")
				}
				v.SetBool(src[0] == 1)
				return src[1:], nil
			}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return binary.AppendVarint(dst, v.Int()), nil },
			func(src []byte, v reflect.Value) ([]byte, error) {
				x, n := binary.Varint(src)
				if n <= 0 || v.OverflowInt(x) {
					return nil, fmt.Errorf("bad %s", v.Type())
				}
				v.SetInt(x)
				return src[n:], nil
			}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return binary.AppendUvarint(dst, v.Uint()), nil },
			func(src []byte, v reflect.Value) ([]byte, error) {
				x, n := binary.Uvarint(src)
				if n <= 0 || v.OverflowUint(x) {
					return nil, fmt.Errorf("bad %s", v.Type())
				}
				v.SetUint(x)
				return src[n:], nil
			}
	case reflect.Float32, reflect.Float64:
		return encFloat, decFloat
	case reflect.Complex64, reflect.Complex128:
		return func(dst []byte, v reflect.Value) ([]byte, error) {
				c := v.Complex()
				dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(real(c)))
				return binary.BigEndian.AppendUint64(dst, math.Float64bits(imag(c))), nil
			}, func(src []byte, v reflect.Value) ([]byte, error) {
				if len(src) < 16 {
					return nil, fmt.Errorf("short complex")
				}
				re := math.Float64frombits(binary.BigEndian.Uint64(src))
				im := math.Float64frombits(binary.BigEndian.Uint64(src[8:]))
				v.SetComplex(complex(re, im))
				return src[16:], nil
			}
	}
	return func(dst []byte, v reflect.Value) ([]byte, error) { return appendBytes(dst, []byte(v.String())), nil },
		func(src []byte, v reflect.Value) ([]byte, error) {
			b, rest, err := readBytes(src)
			if err == nil {
				v.SetString(string(b))
			}
			return rest, err
		}
}

func encFloat(dst []byte, v reflect.Value) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v.Float())), nil
}

func decFloat(src []byte, v reflect.Value) ([]byte, error) {
	if len(src) < 8 {
		return nil, fmt.Errorf("short float")
	}
	v.SetFloat(math.Float64frombits(binary.BigEndian.Uint64(src)))
	return src[8:], nil
}

func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

func readBytes(src []byte) (b, rest []byte, err error) {
	n, h := binary.Uvarint(src)
	if h <= 0 || n > uint64(len(src)-h) {
		return nil, nil, fmt.Errorf("bad length")
	}
	return src[h : h+int(n)], src[h+int(n):], nil
}

// appendLen writes a slice's or map's length plus one, or 0 for nil: an
// empty map decodes as an empty map, not nil (a zero value copied through
// the codec, Fold's or Aggregate's, must stay writable).
func appendLen(dst []byte, v reflect.Value) []byte {
	if v.IsNil() {
		return append(dst, 0)
	}
	return binary.AppendUvarint(dst, uint64(v.Len())+1)
}

// readLen reads what appendLen wrote: -1 for nil, else the length, which
// cannot exceed the bytes left (every element takes at least one).
func readLen(src []byte, t reflect.Type) (int, []byte, error) {
	n, h := binary.Uvarint(src)
	if h <= 0 || (n > 0 && n-1 > uint64(len(src)-h)) {
		return 0, nil, fmt.Errorf("%s: bad length", t)
	}
	return int(n) - 1, src[h:], nil
}
