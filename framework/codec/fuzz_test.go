package codec_test

import (
	"math"
	"testing"

	"github.com/flint-mesos/flint/framework/codec"
)

// fuzzDecode decodes arbitrary bytes into a sample; it must not panic, and
// whatever decodes must encode and decode again.
func fuzzDecode(t *testing.T, c codec.Codec, data []byte) {
	var s sample
	if err := c.Unmarshal(data, &s); err != nil {
		return
	}
	again, err := c.Marshal(s)
	if err != nil {
		t.Fatalf("%s: Marshal of a decoded sample: %v", c.Name(), err)
	}
	var s2 sample
	if err := c.Unmarshal(again, &s2); err != nil {
		t.Fatalf("%s: Unmarshal of a re-encoded sample: %v", c.Name(), err)
	}
}

func seeds(f *testing.F, c codec.Codec) {
	for _, s := range []sample{
		{},
		{Name: "x", Count: -5, Tags: []string{"a"}, Counts: map[string]int{"k": 2}, Raw: []byte{1}, Nested: &inner{A: 9}},
	} {
		data, err := c.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
}

func FuzzGobUnmarshal(f *testing.F) {
	seeds(f, codec.Gob)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, codec.Gob, data) })
}

func FuzzJSONUnmarshal(f *testing.F) {
	seeds(f, codec.JSON)
	f.Add([]byte(`{"Name":"\ud800","Ratio":1e999}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, codec.JSON, data) })
}

// FuzzGobFastPathMatchesGob decodes arbitrary bytes into every type the
// gob fast path handles, with the codec and with plain encoding/gob (plus
// the trailing-bytes rule): errors and values must be identical.
func FuzzGobFastPathMatchesGob(f *testing.F) {
	for _, data := range testEncodings(f) {
		f.Add(data)
	}
	for _, data := range oddStreams {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeAll(t, data) })
}

// FuzzGobFastMarshalMatchesGob encodes fuzzed values of the fast types:
// the bytes must be gob's and decode back, as gob decodes them.
func FuzzGobFastMarshalMatchesGob(f *testing.F) {
	f.Add(int64(0), uint64(0), "", []byte(nil))
	f.Add(int64(-1), uint64(math.MaxUint64), "hello, flint", []byte{0, 1, 255})
	f.Add(int64(math.MinInt64), uint64(0x7ff8000000000001), string(make([]byte, 200)), make([]byte, 128))
	f.Add(int64(math.MaxInt64), uint64(0x7f800001), "\xff", []byte{})
	f.Fuzz(func(t *testing.T, i int64, u uint64, s string, b []byte) {
		roundTrip(t, i&1 == 1, eq)
		roundTrip(t, int(i), eq)
		roundTrip(t, int8(i), eq)
		roundTrip(t, int16(i), eq)
		roundTrip(t, int32(i), eq)
		roundTrip(t, i, eq)
		roundTrip(t, uint(u), eq)
		roundTrip(t, uint8(u), eq)
		roundTrip(t, uint16(u), eq)
		roundTrip(t, uint32(u), eq)
		roundTrip(t, u, eq)
		roundTrip(t, math.Float64frombits(u), eqF64)
		roundTrip(t, math.Float32frombits(uint32(u)), eqF32)
		roundTrip(t, float64(i), eqF64)
		roundTrip(t, float32(i), eqF32)
		roundTrip(t, s, eq)
		roundTrip(t, b, sameContents)
	})
}
