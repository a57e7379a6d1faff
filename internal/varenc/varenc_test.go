package varenc

import (
	"errors"
	"strings"
	"testing"
)

var errBad = errors.New("test: bad encoding")

func TestRoundTrip(t *testing.T) {
	var e Encoder
	e.Byte(7)
	e.Uvarint(300)
	e.Varint(-5)
	e.Varint(1<<31 - 1)
	e.Bytes([]byte{1, 2, 3})
	e.Str("héllo")
	e.Uvarint(4)
	d := NewDecoder(e.B, errBad)
	if v := d.Byte(); v != 7 {
		t.Fatalf("Byte = %d", v)
	}
	if v := d.Uvarint(); v != 300 {
		t.Fatalf("Uvarint = %d", v)
	}
	if v := d.Varint(); v != -5 {
		t.Fatalf("Varint = %d", v)
	}
	if v := d.Int32(); v != 1<<31-1 {
		t.Fatalf("Int32 = %d", v)
	}
	if v := d.Bytes(); string(v) != "\x01\x02\x03" {
		t.Fatalf("Bytes = %v", v)
	}
	if v := d.Str(); v != "héllo" {
		t.Fatalf("Str = %q", v)
	}
	if v := d.Count(4); v != 4 {
		t.Fatalf("Count = %d", v)
	}
	if d.Left() != 0 {
		t.Fatalf("%d bytes left", d.Left())
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestBytesAreCopied(t *testing.T) {
	var e Encoder
	e.Bytes([]byte("abc"))
	d := NewDecoder(e.B, errBad)
	v := d.Bytes()
	e.B[1] = 'X'
	if string(v) != "abc" {
		t.Fatalf("Bytes aliases the input: %q", v)
	}
}

func TestErrors(t *testing.T) {
	long := Encoder{}
	long.Uvarint(10)
	long.B = append(long.B, "abc"...)
	big := Encoder{}
	big.Varint(1 << 40)
	over := Encoder{}
	over.Uvarint(9)
	for _, c := range []struct {
		name string
		in   []byte
		read func(*Decoder)
		want string
	}{
		{"empty byte", nil, func(d *Decoder) { d.Byte() }, "truncated"},
		{"bad uvarint", []byte{0x80}, func(d *Decoder) { d.Uvarint() }, "bad varint"},
		{"long uvarint", []byte{0xd7, 0x00}, func(d *Decoder) { d.Uvarint() }, "varint not in its shortest form"},
		{"long varint", []byte{0x80, 0x80, 0x00}, func(d *Decoder) { d.Varint() }, "varint not in its shortest form"},
		{"bad varint", []byte{0xff, 0xff}, func(d *Decoder) { d.Varint() }, "bad varint"},
		{"length past the end", long.B, func(d *Decoder) { d.Bytes() }, "length 10 over the 3 bytes left"},
		{"string past the end", long.B, func(d *Decoder) { d.Str() }, "length 10 over the 3 bytes left"},
		{"int out of range", big.B, func(d *Decoder) { d.Int32() }, "integer 1099511627776 out of range"},
		{"count over its limit", over.B, func(d *Decoder) { d.Count(8) }, "count 9 over 8"},
		{"trailing bytes", []byte{1, 2}, func(d *Decoder) { d.Byte() }, "1 trailing bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(c.in, errBad)
			c.read(d)
			err := d.Done()
			if !errors.Is(err, errBad) || !strings.HasSuffix(err.Error(), ": "+c.want) {
				t.Fatalf("error %v, want %q wrapping %v", err, c.want, errBad)
			}
		})
	}
}

func TestFirstErrorSticks(t *testing.T) {
	d := NewDecoder([]byte{0x80, 0x80}, errBad)
	d.Uvarint()
	first := d.Err()
	if v := d.Byte(); v != 0 {
		t.Fatalf("Byte after an error = %d, want 0", v)
	}
	if s := d.Str(); s != "" {
		t.Fatalf("Str after an error = %q", s)
	}
	d.Fail("later")
	if d.Err() != first || !strings.Contains(first.Error(), "bad varint") {
		t.Fatalf("error %v, want the first one (%v)", d.Err(), first)
	}
}

func FuzzDecoder(f *testing.F) {
	var e Encoder
	e.Byte(1)
	e.Str("x")
	e.Varint(-3)
	f.Add(e.B)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(b, errBad)
		for d.Err() == nil && d.Left() > 0 {
			switch d.Byte() % 5 {
			case 0:
				d.Uvarint()
			case 1:
				d.Int32()
			case 2:
				d.Bytes()
			case 3:
				d.Str()
			case 4:
				d.Length()
			}
		}
		if err := d.Done(); err != nil && !errors.Is(err, errBad) {
			t.Fatalf("error %v does not wrap the sentinel", err)
		}
	})
}
