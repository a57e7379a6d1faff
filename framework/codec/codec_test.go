package codec_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/flint-mesos/flint/framework/codec"
)

type inner struct{ A int }

type sample struct {
	Name   string
	Count  int64
	Big    uint64
	Ratio  float64
	Tags   []string
	Counts map[string]int
	Raw    []byte
	Nested *inner
}

// upper is a user codec: JSON with an upper-cased name, to test Register.
type upper struct{ codec.JSONCodec }

func (upper) Name() string { return "test-upper" }

func init() { codec.Register(upper{}) }

func TestBuiltinsRegistered(t *testing.T) {
	for _, c := range []codec.Codec{codec.Gob, codec.JSON} {
		got, err := codec.Lookup(c.Name())
		if err != nil {
			t.Fatalf("Lookup(%q): %v", c.Name(), err)
		}
		if got != c {
			t.Errorf("Lookup(%q) = %v, want %v", c.Name(), got, c)
		}
	}
	if codec.Default() != codec.Gob {
		t.Errorf("Default() = %v, want Gob", codec.Default())
	}
	if got := codec.Names(); !reflect.DeepEqual(got, []string{"gob", "json", "test-upper"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := codec.Lookup("msgpack")
	if !errors.Is(err, codec.ErrUnknownCodec) {
		t.Fatalf("Lookup(msgpack) error = %v, want ErrUnknownCodec", err)
	}
	for _, want := range []string{"codec: ", `"msgpack"`, "gob", "json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRegisterUserCodec(t *testing.T) {
	c, err := codec.Lookup("test-upper")
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Marshal(map[string]int{"a": 1})
	if err != nil || string(data) != `{"a":1}` {
		t.Errorf("Marshal = %s, %v", data, err)
	}
}

func TestRegisterPanics(t *testing.T) {
	for name, c := range map[string]codec.Codec{
		"nil":       nil,
		"empty":     named(""),
		"duplicate": named("gob"),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.HasPrefix(r.(string), "codec: ") {
					t.Errorf("Register(%v) recovered %v, want a codec: panic", c, r)
				}
			}()
			codec.Register(c)
		})
	}
}

type named string

func (n named) Name() string                     { return string(n) }
func (named) Marshal(any) ([]byte, error)        { return nil, nil }
func (named) Unmarshal(data []byte, v any) error { return nil }

func TestRoundTrip(t *testing.T) {
	in := sample{
		Name: "héllo", Count: -1 << 62, Big: math.MaxUint64, Ratio: 0.1,
		Tags: []string{"a", ""}, Counts: map[string]int{"x": 1}, Raw: []byte{0, 255},
		Nested: &inner{A: 3},
	}
	for _, c := range []codec.Codec{codec.Gob, codec.JSON} {
		t.Run(c.Name(), func(t *testing.T) {
			data, err := c.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var out sample
			if err := c.Unmarshal(data, &out); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, out) {
				t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
			}
		})
	}
}

func TestGobKeepsLargeIntegersInInterfaces(t *testing.T) {
	in := map[string]any{"n": int64(1<<53 + 1)}
	data, err := codec.Gob.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := codec.Gob.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if out["n"] != int64(1<<53+1) {
		t.Errorf("gob decoded %v (%T)", out["n"], out["n"])
	}
}

func TestErrors(t *testing.T) {
	gobData, err := codec.Gob.Marshal(sample{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
	}{
		{"gob marshal func", errOf(codec.Gob.Marshal(func() {}))},
		{"gob marshal nil pointer", errOf(codec.Gob.Marshal((*sample)(nil)))},
		{"gob marshal nil", errOf(codec.Gob.Marshal(nil))},
		{"gob marshal nested nil pointer", errOf(codec.Gob.Marshal(map[string]any{"p": (*inner)(nil)}))},
		{"gob unmarshal garbage", codec.Gob.Unmarshal([]byte("not gob"), new(sample))},
		{"gob unmarshal empty", codec.Gob.Unmarshal(nil, new(sample))},
		{"gob unmarshal non-pointer", codec.Gob.Unmarshal(gobData, sample{})},
		{"gob unmarshal wrong type", codec.Gob.Unmarshal(gobData, new(int))},
		{"gob trailing bytes", codec.Gob.Unmarshal(append(slicesClone(gobData), 0), new(sample))},
		{"json marshal chan", errOf(codec.JSON.Marshal(make(chan int)))},
		{"json unmarshal garbage", codec.JSON.Unmarshal([]byte("{"), new(sample))},
		{"json unmarshal wrong type", codec.JSON.Unmarshal([]byte(`"s"`), new(int))},
	}
	for _, tc := range cases {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.HasPrefix(tc.err.Error(), "codec: ") {
			t.Errorf("%s: error %q lacks the codec: prefix", tc.name, tc.err)
		}
	}
}

func errOf(_ []byte, err error) error { return err }

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// genSample draws samples whose zero/empty parts are nil, the form both
// codecs reproduce exactly.
func genSample() *rapid.Generator[sample] {
	return rapid.Custom(func(t *rapid.T) sample {
		s := sample{
			Name:  rapid.String().Draw(t, "name"),
			Count: rapid.Int64().Draw(t, "count"),
			Big:   rapid.Uint64().Draw(t, "big"),
			Ratio: rapid.Float64Range(-1e300, 1e300).Draw(t, "ratio"),
		}
		if tags := rapid.SliceOfN(rapid.String(), 0, 5).Draw(t, "tags"); len(tags) > 0 {
			s.Tags = tags
		}
		if m := rapid.MapOfN(rapid.String(), rapid.Int(), 0, 5).Draw(t, "counts"); len(m) > 0 {
			s.Counts = m
		}
		if raw := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "raw"); len(raw) > 0 {
			s.Raw = raw
		}
		if a := rapid.Int().Draw(t, "nested"); a != 0 {
			s.Nested = &inner{A: a}
		}
		return s
	})
}

func TestRoundTripProperty(t *testing.T) {
	for _, c := range []codec.Codec{codec.Gob, codec.JSON} {
		t.Run(c.Name(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				in := genSample().Draw(rt, "sample")
				data, err := c.Marshal(in)
				if err != nil {
					rt.Fatalf("Marshal: %v", err)
				}
				var out sample
				if err := c.Unmarshal(data, &out); err != nil {
					rt.Fatalf("Unmarshal: %v", err)
				}
				if !reflect.DeepEqual(in, out) {
					rt.Fatalf("round trip:\n got %#v\nwant %#v", out, in)
				}
			})
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	done := make(chan error)
	for i := range 8 {
		go func() {
			c := []codec.Codec{codec.Gob, codec.JSON}[i%2]
			data, err := c.Marshal(sample{Count: int64(i)})
			if err == nil {
				var out sample
				err = c.Unmarshal(data, &out)
				if err == nil && out.Count != int64(i) {
					err = errors.New("wrong value")
				}
			}
			if err == nil {
				_, err = codec.Lookup(c.Name())
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
