package codec_test

import (
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
