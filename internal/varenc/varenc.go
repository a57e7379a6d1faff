package varenc

import (
	"encoding/binary"
	"fmt"
)

// Encoder appends fields to B.
type Encoder struct{ B []byte }

// Byte appends one byte.
func (e *Encoder) Byte(v byte) { e.B = append(e.B, v) }

// Uvarint appends v as an unsigned varint.
func (e *Encoder) Uvarint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }

// Varint appends v as a zig-zag varint.
func (e *Encoder) Varint(v int64) { e.B = binary.AppendVarint(e.B, v) }

// Bytes appends v's length as a uvarint, then v.
func (e *Encoder) Bytes(v []byte) {
	e.Uvarint(uint64(len(v)))
	e.B = append(e.B, v...)
}

// Str appends s as Bytes does.
func (e *Encoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.B = append(e.B, s...)
}

// Decoder reads the fields an Encoder wrote. After the first error every
// read returns a zero value and Err returns that error.
type Decoder struct {
	b    []byte
	err  error
	base error
}

// NewDecoder reads b; its errors wrap base.
func NewDecoder(b []byte, base error) *Decoder { return &Decoder{b: b, base: base} }

// Err is the first error, or nil.
func (d *Decoder) Err() error { return d.err }

// Left is how many bytes are not read yet.
func (d *Decoder) Left() int { return len(d.b) }

// Fail records a decoding error (the first one sticks).
func (d *Decoder) Fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", d.base, fmt.Sprintf(format, a...))
	}
}

// Done is Err, or an error if bytes are left over.
func (d *Decoder) Done() error {
	if d.err == nil && len(d.b) > 0 {
		d.Fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.err == nil && len(d.b) == 0 {
		d.Fail("truncated")
	}
	if d.err != nil {
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if !d.minimal(n) {
		return 0
	}
	return v
}

// Varint reads a zig-zag varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if !d.minimal(n) {
		return 0
	}
	return v
}

// minimal consumes a varint of n bytes (n from binary.Uvarint or Varint)
// if it decoded and is in its shortest form: a last byte of 0 adds
// nothing, and accepting it would let two encodings mean one value.
func (d *Decoder) minimal(n int) bool {
	switch {
	case n <= 0:
		d.Fail("bad varint")
		return false
	case n > 1 && d.b[n-1] == 0:
		d.Fail("varint not in its shortest form")
		return false
	}
	d.b = d.b[n:]
	return true
}

// Int32 reads a varint that must fit in an int32.
func (d *Decoder) Int32() int {
	v := d.Varint()
	if v < -1<<31 || v > 1<<31-1 {
		d.Fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

// Count reads a uvarint that must not exceed limit.
func (d *Decoder) Count(limit int) int {
	v := d.Uvarint()
	if d.err == nil && v > uint64(limit) {
		d.Fail("count %d over %d", v, limit)
	}
	if d.err != nil {
		return 0
	}
	return int(v)
}

// Length reads a uvarint that must not exceed the bytes left: a byte
// string's length, or the number of elements that follow when each takes
// at least one byte.
func (d *Decoder) Length() int {
	v := d.Uvarint()
	if d.err == nil && v > uint64(len(d.b)) {
		d.Fail("length %d over the %d bytes left", v, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(v)
}

// Bytes reads a length-prefixed byte string into a new slice.
func (d *Decoder) Bytes() []byte {
	n := d.Length()
	if d.err != nil {
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

// Str reads a length-prefixed byte string as a string (not String: a
// Decoder is no fmt.Stringer).
func (d *Decoder) Str() string {
	n := d.Length()
	if d.err != nil {
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}
