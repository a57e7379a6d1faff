package recordcodec_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"pgregory.net/rapid"
)

type word string
type id int32
type blob []byte

type point struct {
	X, Y int
	Tags []string
}

func roundTrip[T any](t *testing.T, want T, wantName string) {
	t.Helper()
	c := recordcodec.For[T]()
	if c.Name() != wantName {
		t.Errorf("For[%T]().Name() = %q, want %q", want, c.Name(), wantName)
	}
	b, err := c.Append([]byte("prefix"), want)
	if err != nil {
		t.Fatalf("Append(%v): %v", want, err)
	}
	if !bytes.HasPrefix(b, []byte("prefix")) {
		t.Fatalf("Append(%v) overwrote dst: %q", want, b)
	}
	got, err := c.Decode(b[len("prefix"):])
	if err != nil {
		t.Fatalf("Decode(Append(%v)): %v", want, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of %T: got %#v, want %#v", want, got, want)
	}
}

func TestForChoosesTheTypedPathAndRoundTrips(t *testing.T) {
	roundTrip(t, "héllo", "string")
	roundTrip(t, "", "string")
	roundTrip(t, []byte{0, 1, 255}, "bytes")
	roundTrip(t, true, "bool")
	roundTrip(t, math.MinInt64, "varint")
	roundTrip(t, int8(-128), "varint")
	roundTrip(t, int16(32767), "varint")
	roundTrip(t, int32(-5), "varint")
	roundTrip(t, uint64(math.MaxUint64), "uvarint")
	roundTrip(t, uint8(200), "uvarint")
	roundTrip(t, uintptr(7), "uvarint")
	roundTrip(t, math.Pi, "float64")
	roundTrip(t, float32(-1.5), "float32")
	roundTrip(t, word("named"), "string")
	roundTrip(t, id(-42), "varint")
	roundTrip(t, blob("b"), "bytes")
	roundTrip(t, recordcodec.KV[string, int64]{Key: "the", Value: 3}, "kv(string,varint)")
	roundTrip(t, recordcodec.KV[string, int64]{Key: strings.Repeat("k", 300), Value: -1}, "kv(string,varint)")
	roundTrip(t, recordcodec.KV[word, recordcodec.KV[id, []byte]]{Key: "w", Value: recordcodec.KV[id, []byte]{Key: 9, Value: []byte("v")}}, "kv(string,kv(varint,bytes))")
	roundTrip(t, netip.MustParseAddr("10.1.2.3"), "binary")
	roundTrip(t, point{X: 1, Y: -2, Tags: []string{"a", "b"}}, "struct")
}

func TestDecodedBytesDoNotAliasTheInput(t *testing.T) {
	c := recordcodec.For[[]byte]()
	src := []byte("abc")
	got, err := c.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	src[0] = 'X'
	if string(got) != "abc" {
		t.Fatalf("decoded slice changed with its input: %q", got)
	}
}

func TestCorruptInputIsAnErrorNotAPanic(t *testing.T) {
	cases := map[string]func() error{
		"bool of 2 bytes":      func() error { _, err := recordcodec.For[bool]().Decode([]byte{1, 1}); return err },
		"bool of value 2":      func() error { _, err := recordcodec.For[bool]().Decode([]byte{2}); return err },
		"truncated varint":     func() error { _, err := recordcodec.For[int]().Decode([]byte{0x80}); return err },
		"varint with trailing": func() error { _, err := recordcodec.For[int]().Decode([]byte{2, 0}); return err },
		"int8 overflow":        func() error { _, err := recordcodec.For[int8]().Decode([]byte{0x80, 0x04}); return err },
		"uint8 overflow":       func() error { _, err := recordcodec.For[uint8]().Decode([]byte{0x80, 0x04}); return err },
		"short float":          func() error { _, err := recordcodec.For[float64]().Decode([]byte{1}); return err },
		"pair key past the end": func() error {
			_, err := recordcodec.For[recordcodec.KV[string, int]]().Decode([]byte{9, 'a'})
			return err
		},
		"gob garbage":            func() error { _, err := recordcodec.For[point]().Decode([]byte("nope")); return err },
		"binary garbage":         func() error { _, err := recordcodec.For[netip.Addr]().Decode([]byte{1, 2, 3}); return err },
		"ordered int of 3 bytes": func() error { _, err := recordcodec.Ordered[int]().Decode([]byte{1, 2, 3}); return err },
		"ordered int16 overflow": func() error {
			b, _ := recordcodec.Ordered[int]().Append(nil, 1<<20)
			_, err := recordcodec.Ordered[int16]().Decode(b)
			return err
		},
	}
	for name, decode := range cases {
		err := decode()
		if !errors.Is(err, recordcodec.ErrCorrupt) || !strings.HasPrefix(err.Error(), "recordcodec: ") {
			t.Errorf("%s: %v, want a recordcodec: ErrCorrupt", name, err)
		}
	}
}

func TestGobErrorsNameTheType(t *testing.T) {
	_, err := recordcodec.For[chan int]().Append(nil, make(chan int))
	if err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Fatalf("gob of a channel: %v", err)
	}
}

// orderedAgrees checks bytes.Compare(enc(a), enc(b)) == cmp.Compare(a, b)
// and the round trip, for random a and b.
func orderedAgrees[T cmp.Ordered](t *testing.T, gen *rapid.Generator[T]) {
	c := recordcodec.Ordered[T]()
	rapid.Check(t, func(t *rapid.T) {
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		ea, err := c.Append(nil, a)
		if err != nil {
			t.Fatal(err)
		}
		eb, _ := c.Append(nil, b)
		want := cmp.Compare(a, b)
		if a == b { // -0 and +0
			want = 0
		}
		if got := bytes.Compare(ea, eb); got != want {
			t.Fatalf("bytes.Compare(enc(%v), enc(%v)) = %d, cmp.Compare = %d", a, b, got, want)
		}
		back, err := c.Decode(ea)
		if err != nil {
			t.Fatal(err)
		}
		if back != a && (a == a || back == back) {
			t.Fatalf("round trip of %v gave %v", a, back)
		}
	})
}

func TestOrderedEncodingSortsLikeTheValues(t *testing.T) {
	t.Run("int64", func(t *testing.T) { orderedAgrees(t, rapid.Int64()) })
	t.Run("int8", func(t *testing.T) { orderedAgrees(t, rapid.Int8()) })
	t.Run("int", func(t *testing.T) { orderedAgrees(t, rapid.Int()) })
	t.Run("uint64", func(t *testing.T) { orderedAgrees(t, rapid.Uint64()) })
	t.Run("uint16", func(t *testing.T) { orderedAgrees(t, rapid.Uint16()) })
	t.Run("float64", func(t *testing.T) { orderedAgrees(t, rapid.Float64()) })
	t.Run("float32", func(t *testing.T) { orderedAgrees(t, rapid.Float32()) })
	t.Run("string", func(t *testing.T) { orderedAgrees(t, rapid.String()) })
	t.Run("named", func(t *testing.T) {
		orderedAgrees(t, rapid.Custom(func(t *rapid.T) word { return word(rapid.String().Draw(t, "s")) }))
	})
	nan, _ := recordcodec.Ordered[float64]().Append(nil, math.NaN())
	inf, _ := recordcodec.Ordered[float64]().Append(nil, math.Inf(-1))
	if bytes.Compare(nan, inf) >= 0 {
		t.Fatal("NaN does not sort before -Inf")
	}
}

func TestForRoundTripsRandomPairs(t *testing.T) {
	c := recordcodec.For[recordcodec.KV[string, int64]]()
	rapid.Check(t, func(t *rapid.T) {
		kv := recordcodec.KV[string, int64]{Key: rapid.String().Draw(t, "k"), Value: rapid.Int64().Draw(t, "v")}
		b, _ := c.Append(nil, kv)
		got, err := c.Decode(b)
		if err != nil || got != kv {
			t.Fatalf("round trip %v: %v, %v", kv, got, err)
		}
	})
}

func ExampleFor() {
	c := recordcodec.For[recordcodec.KV[string, int]]()
	b, _ := c.Append(nil, recordcodec.KV[string, int]{Key: "flint", Value: 3})
	kv, _ := c.Decode(b)
	fmt.Println(c.Name(), len(b), kv.Key, kv.Value)
	// Output: kv(string,varint) 7 flint 3
}
