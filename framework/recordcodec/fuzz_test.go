package recordcodec_test

import (
	"net/netip"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// FuzzDecode feeds arbitrary bytes to every path's decoder: an error or a
// value that re-encodes to a decodable value, never a panic.
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{{}, {0}, {1}, {0x80}, {3, 'a', 'b', 'c', 4}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0, 0, 0, 0, 0, 0, 0, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check(t, recordcodec.For[recordcodec.KV[string, int64]](), b)
		check(t, recordcodec.For[recordcodec.KV[int8, recordcodec.KV[uint16, []byte]]](), b)
		check(t, recordcodec.For[bool](), b)
		check(t, recordcodec.For[float32](), b)
		check(t, recordcodec.For[netip.Addr](), b)
		check(t, recordcodec.For[point](), b)
		check(t, recordcodec.For[visit](), b)
		check(t, recordcodec.For[map[string][]int](), b)
		check(t, recordcodec.For[[3]complex64](), b)
		check(t, recordcodec.Ordered[int32](), b)
		check(t, recordcodec.Ordered[uint8](), b)
		check(t, recordcodec.Ordered[float32](), b)
	})
}

func check[T any](t *testing.T, c recordcodec.Codec[T], b []byte) {
	v, err := c.Decode(b)
	if err != nil {
		return
	}
	again, err := c.Append(nil, v)
	if err != nil {
		t.Fatalf("%s: re-encoding decoded %v: %v", c.Name(), v, err)
	}
	if _, err := c.Decode(again); err != nil {
		t.Fatalf("%s: decoding the re-encoding of %v: %v", c.Name(), v, err)
	}
}
