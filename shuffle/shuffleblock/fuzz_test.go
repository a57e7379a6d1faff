package shuffleblock_test

import (
	"bytes"
	"testing"

	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// FuzzReader: arbitrary bytes are records or an error, never a panic; what
// Verify accepts the Reader decodes or rejects as corrupt.
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	for _, c := range []shuffleblock.Compression{shuffleblock.None, shuffleblock.S2, shuffleblock.Zstd} {
		f.Add(encode(f, c, 64, records(10)))
	}
	f.Add([]byte{0xF1, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		verr := shuffleblock.Verify(b)
		got, err := decode(b)
		if verr == nil && err == nil {
			// Valid input re-encodes to the same records.
			var rs []rec
			rs = append(rs, got...)
			again, derr := decode(encode(t, shuffleblock.None, 0, rs))
			if derr != nil || len(again) != len(got) {
				t.Fatalf("re-encoding %d records: %d, %v", len(got), len(again), derr)
			}
		}
		if verr != nil && err == nil && !bytes.Equal(b, nil) {
			t.Fatalf("Verify rejected (%v) what the Reader accepted", verr)
		}
	})
}

// FuzzDecodeIndex: arbitrary bytes are an index or ErrCorrupt.
func FuzzDecodeIndex(f *testing.F) {
	f.Add(shuffleblock.EncodeIndex([]int64{0, 10, 10, 30}))
	f.Add([]byte("FLSHIDX1\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		offsets, err := shuffleblock.DecodeIndex(b)
		if err != nil {
			return
		}
		if !bytes.Equal(shuffleblock.EncodeIndex(offsets), b) {
			t.Fatalf("index %v does not re-encode to its input", offsets)
		}
	})
}
