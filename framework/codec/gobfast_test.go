package codec_test

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/codec"
)

// The gob fast path (gobfast.go) is tested differentially: whatever it
// does must be what the codec did before it, i.e. plain encoding/gob.

// gobMarshal is GobCodec.Marshal without the fast path, for the basic
// types (which are never nil and never make gob panic).
func gobMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("codec: gob: marshal %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// gobUnmarshal is GobCodec.Unmarshal without the fast path: a fresh
// gob.Decoder, the trailing-bytes rule and the codec's error texts.
func gobUnmarshal(data []byte, v any) error {
	r := bytes.NewReader(data)
	if err := gob.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("codec: gob: unmarshal %d bytes into %T: %w", len(data), v, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("codec: gob: unmarshal into %T: %d trailing bytes", v, r.Len())
	}
	return nil
}

func sameErr(a, b error) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error()
}

func eq[T comparable](a, b T) bool { return a == b }

// Floats compare by bits, so NaN payloads and -0 count.
func eqF32(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
func eqF64(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// eqBytes also compares nil-ness and capacity: gob reuses a destination
// slice with room enough (so its capacity stays) and keeps a nil one nil
// for an empty value. (Capacities would differ above gob's 10 MB
// allocation chunk; no test gets near it.)
func eqBytes(a, b []byte) bool {
	return bytes.Equal(a, b) && (a == nil) == (b == nil) && cap(a) == cap(b)
}

// sameContents is eqBytes for round trips: an empty []byte comes back nil.
// (decodeAll then compares with gob's decoding using eqBytes.)
func sameContents(a, b []byte) bool { return bytes.Equal(a, b) }

// sameDecode decodes data with the codec and with plain gob into a T that
// starts as init() and fails unless errors and results are identical
// (results also on error: the destination must be left alone alike).
func sameDecode[T any](t testing.TB, data []byte, init func() T, same func(a, b T) bool) {
	t.Helper()
	got, want := init(), init()
	gotErr, wantErr := codec.Gob.Unmarshal(data, &got), gobUnmarshal(data, &want)
	if !sameErr(gotErr, wantErr) || !same(got, want) {
		t.Fatalf("Unmarshal(% x) into *%T from %#v:\n got %#v, %v\nwant %#v, %v",
			data, want, init(), got, gotErr, want, wantErr)
	}
}

func zero[T any]() T { var z T; return z }

// decodeAll decodes data into every type the fast path handles, from a
// zero and a non-zero destination, and into nil pointers.
func decodeAll(t testing.TB, data []byte) {
	t.Helper()
	sameDecode(t, data, zero[bool], eq)
	sameDecode(t, data, func() bool { return true }, eq)
	sameDecode(t, data, zero[int], eq)
	sameDecode(t, data, func() int { return -7 }, eq)
	sameDecode(t, data, zero[int8], eq)
	sameDecode(t, data, func() int8 { return 9 }, eq)
	sameDecode(t, data, zero[int16], eq)
	sameDecode(t, data, zero[int32], eq)
	sameDecode(t, data, zero[int64], eq)
	sameDecode(t, data, func() int64 { return math.MinInt64 }, eq)
	sameDecode(t, data, zero[uint], eq)
	sameDecode(t, data, func() uint { return 3 }, eq)
	sameDecode(t, data, zero[uint8], eq)
	sameDecode(t, data, zero[uint16], eq)
	sameDecode(t, data, zero[uint32], eq)
	sameDecode(t, data, zero[uint64], eq)
	sameDecode(t, data, zero[float32], eqF32)
	sameDecode(t, data, func() float32 { return -1.5 }, eqF32)
	sameDecode(t, data, zero[float64], eqF64)
	sameDecode(t, data, func() float64 { return math.NaN() }, eqF64)
	sameDecode(t, data, zero[string], eq)
	sameDecode(t, data, func() string { return "old" }, eq)
	sameDecode(t, data, zero[[]byte], eqBytes)
	sameDecode(t, data, func() []byte { return []byte{} }, eqBytes)
	sameDecode(t, data, func() []byte { return make([]byte, 3, 8) }, eqBytes)
	for _, v := range []any{(*bool)(nil), (*int)(nil), (*uint8)(nil), (*float32)(nil), (*string)(nil), (*[]byte)(nil)} {
		if got, want := codec.Gob.Unmarshal(data, v), gobUnmarshal(data, v); !sameErr(got, want) {
			t.Fatalf("Unmarshal(% x) into %T: got %v, want %v", data, v, got, want)
		}
	}
}

// sameEncoding fails unless the codec encodes v exactly as gob does, and
// returns the bytes.
func sameEncoding(t testing.TB, v any) []byte {
	t.Helper()
	got, gotErr := codec.Gob.Marshal(v)
	want, wantErr := gobMarshal(v)
	if !sameErr(gotErr, wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%T %#v):\n got % x, %v\nwant % x, %v", v, v, got, gotErr, want, wantErr)
	}
	return got
}

// roundTrip checks v's encoding against gob's and that it decodes back to
// v, as gob decodes it.
func roundTrip[T any](t testing.TB, v T, same func(a, b T) bool) []byte {
	t.Helper()
	data := sameEncoding(t, v)
	sameDecode(t, data, zero[T], same)
	var back T
	if err := codec.Gob.Unmarshal(data, &back); err != nil || !same(back, v) && !isNaN(v) {
		t.Fatalf("round trip of %T %#v: got %#v, %v", v, v, back, err)
	}
	return data
}

// isNaN reports whether v is a float NaN. Those need not come back
// bit-exact: float32 travels as float64, and the conversions quieten a
// signalling NaN (gob alike, which sameDecode checks).
func isNaN(v any) bool {
	switch f := v.(type) {
	case float32:
		return f != f
	case float64:
		return f != f
	}
	return false
}

var (
	testInts = []int64{0, 1, -1, 2, -2, 63, -64, 64, -65, 127, -128, 128, -129, 255, 256, -256,
		math.MaxInt16, math.MinInt16, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1,
		1 << 40, -1 << 40, 1<<56 - 1, 1 << 56, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	testUints = []uint64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1,
		1<<56 - 1, 1 << 56, math.MaxUint64 - 1, math.MaxUint64}
	testFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 17, 0.1, -2.75, math.Pi, 1e300, -1e-300,
		math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, math.MaxFloat32, 2 * math.MaxFloat32,
		math.SmallestNonzeroFloat32, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123)}
	testStrings = []string{"", "a", "hello, flint", "héllo\x00\xff", strings.Repeat("x", 127),
		strings.Repeat("y", 128), strings.Repeat("z", 70000)}
)

// testEncodings round-trips every test value of every fast type and
// returns their encodings.
func testEncodings(t testing.TB) [][]byte {
	var all [][]byte
	add := func(data []byte) { all = append(all, data) }
	add(roundTrip(t, false, eq))
	add(roundTrip(t, true, eq))
	for _, i := range testInts {
		add(roundTrip(t, int(i), eq))
		add(roundTrip(t, int8(i), eq))
		add(roundTrip(t, int16(i), eq))
		add(roundTrip(t, int32(i), eq))
		add(roundTrip(t, i, eq))
	}
	for _, u := range testUints {
		add(roundTrip(t, uint(u), eq))
		add(roundTrip(t, uint8(u), eq))
		add(roundTrip(t, uint16(u), eq))
		add(roundTrip(t, uint32(u), eq))
		add(roundTrip(t, u, eq))
	}
	for _, f := range testFloats {
		add(roundTrip(t, f, eqF64))
		if math.Abs(f) <= math.MaxFloat32 || math.IsInf(f, 0) || math.IsNaN(f) {
			add(roundTrip(t, float32(f), eqF32))
		}
	}
	add(roundTrip(t, math.Float32frombits(0x7f800001), eqF32)) // a signalling NaN
	for _, s := range testStrings {
		add(roundTrip(t, s, eq))
		add(roundTrip(t, []byte(s), sameContents))
	}
	// gob sends a nil []byte as an empty one, and decodes it as nil.
	if got, want := sameEncoding(t, []byte(nil)), sameEncoding(t, []byte{}); !bytes.Equal(got, want) {
		t.Fatalf("nil []byte encodes as % x, empty as % x", got, want)
	}
	return all
}

// oddStreams are streams outside the fast path's canonical form (each
// labelled with what gob does with it), plus other gob streams; the fast
// path must leave all of them to gob.
var oddStreams = [][]byte{
	{},
	{0},
	{3, 4, 0},             // truncated
	{3, 4, 0, 2, 0},       // trailing byte after the message: codec error
	{4, 4, 0, 2, 99},      // junk inside the message: gob ignores it
	{4, 4, 0, 0xff, 2},    // non-minimal int 1: gob accepts it
	{5, 4, 0, 0xfe, 0, 2}, // leading zero byte: gob accepts it
	{0xff, 3, 4, 0, 2},    // non-minimal message length
	{3, 4, 1, 2},          // non-zero field delta: gob error
	{3, 2, 0, 5},          // bool 5: gob reads true
	{3, 2, 0, 2},          // bool 2
	{4, 4, 0, 0xff, 0xfe}, // int 127: out of int8's range
	{4, 6, 0, 0xff, 0xff}, // uint 255: fits uint8
	{5, 6, 0, 0xfe, 1, 0}, // uint 256: overflows uint8
	{11, 8, 0, 0xf8, 0, 0, 0, 0, 0, 0, 0xf0, 0x47}, // float64 beyond float32
	{5, 8, 0, 0xfe, 0xf0, 0x7f},                    // +Inf
	{3, 12, 0, 1},                                  // string longer than the message
	{4, 12, 0, 0x81, 0},                            // bad count byte
	{3, 0x0e, 0, 0},                                // complex
	{3, 0x10, 0, 0},                                // interface type id
	{3, 0x7e, 0, 0},                                // unknown type id
	{3, 0x0a, 0, 0, 9},                             // []byte then trailing byte
	{12, 4, 0, 0xf7, 1, 2, 3, 4, 5, 6, 7, 8, 9},    // 9-byte uint: gob error
}

func TestGobFastPathMatchesGob(t *testing.T) {
	for _, data := range testEncodings(t) {
		decodeAll(t, data)
	}
	for _, data := range oddStreams {
		decodeAll(t, data)
	}
	// Named types and other shapes keep going through gob (type
	// descriptors included); they must still decode alike.
	type myInt int
	for _, v := range []any{myInt(5), []int{1}, map[string]int{"a": 1}, sample{Name: "x"}, complex(1, 2)} {
		decodeAll(t, sameEncoding(t, v))
	}
}

func TestGobFastPathAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts differ under -cover and -race; make test runs this test again without them")
	}
	var (
		i     int
		s     string
		b     []byte
		v     any = 123456
		w     any = "hello, flint"
		iData     = sameEncoding(t, v)
		sData     = sameEncoding(t, w)
		bData     = sameEncoding(t, []byte("hello, flint"))
	)
	for name, tc := range map[string]struct {
		f    func()
		want float64
	}{
		"Marshal int":      {func() { codec.Gob.Marshal(v) }, 1},
		"Marshal string":   {func() { codec.Gob.Marshal(w) }, 1},
		"Unmarshal int":    {func() { codec.Gob.Unmarshal(iData, &i) }, 0},
		"Unmarshal string": {func() { codec.Gob.Unmarshal(sData, &s) }, 1},
		"Unmarshal bytes":  {func() { b = nil; codec.Gob.Unmarshal(bData, &b) }, 1},
	} {
		if got := testing.AllocsPerRun(100, tc.f); got > tc.want {
			t.Errorf("%s: %v allocations, want %v", name, got, tc.want)
		}
	}
}

// Benchmarks: the codec (with its fast path) against the same calls on
// plain encoding/gob, i.e. the codec before the fast path.

func BenchmarkGobMarshalInt(b *testing.B)      { benchMarshal(b, 123456) }
func BenchmarkGobMarshalString(b *testing.B)   { benchMarshal(b, "hello, flint") }
func BenchmarkGobUnmarshalInt(b *testing.B)    { benchUnmarshal(b, 123456) }
func BenchmarkGobUnmarshalString(b *testing.B) { benchUnmarshal(b, "hello, flint") }

func benchMarshal(b *testing.B, v any) {
	for name, marshal := range map[string]func(any) ([]byte, error){
		"codec": codec.Gob.Marshal, "encoding-gob": gobMarshal,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchUnmarshal[T any](b *testing.B, v T) {
	data := sameEncoding(b, v)
	for name, unmarshal := range map[string]func([]byte, any) error{
		"codec": codec.Gob.Unmarshal, "encoding-gob": gobUnmarshal,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var out T
			for b.Loop() {
				if err := unmarshal(data, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
