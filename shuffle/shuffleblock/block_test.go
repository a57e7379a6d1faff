package shuffleblock_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

type rec struct{ k, v string }

func records(n int) []rec {
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{fmt.Sprintf("key-%06d", i), strings.Repeat(string(rune('a'+i%26)), i%50)}
	}
	return out
}

func encode(t testing.TB, c shuffleblock.Compression, frame int, rs []rec) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := shuffleblock.NewWriter(&buf, c, frame)
	for _, r := range rs {
		if err := w.Append([]byte(r.k), []byte(r.v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Written() != int64(buf.Len()) {
		t.Fatalf("Written() = %d, buffer holds %d", w.Written(), buf.Len())
	}
	return buf.Bytes()
}

func decode(b []byte) ([]rec, error) {
	r := shuffleblock.NewReader(bytes.NewReader(b))
	var out []rec
	for {
		k, v, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec{string(k), string(v)})
	}
}

func TestRecordsRoundTripInEveryCompression(t *testing.T) {
	want := records(5000)
	for _, c := range []shuffleblock.Compression{shuffleblock.None, shuffleblock.S2, shuffleblock.Zstd} {
		for _, frame := range []int{1, 512, 0} {
			b := encode(t, c, frame, want)
			if err := shuffleblock.Verify(b); err != nil {
				t.Fatalf("%v/%d: Verify: %v", c, frame, err)
			}
			got, err := decode(b)
			if err != nil {
				t.Fatalf("%v/%d: %v", c, frame, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%v/%d: %d records, want %d", c, frame, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v/%d: record %d = %v, want %v", c, frame, i, got[i], want[i])
				}
			}
		}
	}
	if b := encode(t, shuffleblock.S2, 0, want); len(b) >= len(encode(t, shuffleblock.None, 0, want)) {
		t.Fatalf("s2 did not compress repetitive records: %d bytes", len(b))
	}
}

func TestEmptyBlockIsNoBytes(t *testing.T) {
	if b := encode(t, shuffleblock.S2, 0, nil); len(b) != 0 {
		t.Fatalf("empty block is %d bytes", len(b))
	}
	if got, err := decode(nil); err != nil || len(got) != 0 {
		t.Fatalf("decode(empty) = %v, %v", got, err)
	}
}

func TestEveryFlippedByteIsDetected(t *testing.T) {
	for _, c := range []shuffleblock.Compression{shuffleblock.None, shuffleblock.S2, shuffleblock.Zstd} {
		b := encode(t, c, 256, records(40))
		for i := range b {
			bad := bytes.Clone(b)
			bad[i] ^= 0x10
			if err := shuffleblock.Verify(bad); !errors.Is(err, shuffleblock.ErrCorrupt) {
				t.Fatalf("%v: flipping byte %d of %d: Verify = %v", c, i, len(b), err)
			}
			if _, err := decode(bad); !errors.Is(err, shuffleblock.ErrCorrupt) {
				t.Fatalf("%v: flipping byte %d of %d: Reader = %v", c, i, len(b), err)
			}
		}
	}
}

func TestTruncationIsDetected(t *testing.T) {
	b := encode(t, shuffleblock.S2, 256, records(40))
	for n := 1; n < len(b); n++ {
		if err := shuffleblock.Verify(b[:n]); err == nil {
			// A cut exactly between frames is a shorter valid block;
			// the index's offsets catch that (see TestIndex...).
			continue
		}
		if _, err := decode(b[:n]); !errors.Is(err, shuffleblock.ErrCorrupt) {
			t.Fatalf("cut at %d: Reader = %v, want ErrCorrupt", n, err)
		}
	}
}

func TestParseCompression(t *testing.T) {
	for in, want := range map[string]shuffleblock.Compression{"s2": shuffleblock.S2, "ZSTD": shuffleblock.Zstd, "none": shuffleblock.None, "": shuffleblock.S2} {
		if got, err := shuffleblock.ParseCompression(in); err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := shuffleblock.ParseCompression("lz4"); err == nil || !strings.Contains(err.Error(), `"lz4"`) {
		t.Errorf("ParseCompression(lz4) = %v", err)
	}
}

func TestIndexRoundTripAndCorruption(t *testing.T) {
	offsets := []int64{0, 0, 17, 17, 4096}
	b := shuffleblock.EncodeIndex(offsets)
	if len(b) != shuffleblock.IndexSize(4) {
		t.Fatalf("index of 4 partitions is %d bytes, want %d", len(b), shuffleblock.IndexSize(4))
	}
	got, err := shuffleblock.DecodeIndex(b)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(offsets) {
		t.Fatalf("DecodeIndex = %v, %v", got, err)
	}
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 1
		if _, err := shuffleblock.DecodeIndex(bad); !errors.Is(err, shuffleblock.ErrCorrupt) {
			t.Fatalf("flipped index byte %d: %v", i, err)
		}
	}
	for n := range b {
		if _, err := shuffleblock.DecodeIndex(b[:n]); !errors.Is(err, shuffleblock.ErrCorrupt) {
			t.Fatalf("index cut at %d: %v", n, err)
		}
	}
	if _, err := shuffleblock.DecodeIndex(shuffleblock.EncodeIndex([]int64{0, 9, 3})); !errors.Is(err, shuffleblock.ErrCorrupt) {
		t.Fatalf("decreasing offsets accepted: %v", err)
	}
	if _, err := shuffleblock.DecodeIndex(shuffleblock.EncodeIndex([]int64{5, 9})); !errors.Is(err, shuffleblock.ErrCorrupt) {
		t.Fatalf("index not starting at 0 accepted: %v", err)
	}
}
