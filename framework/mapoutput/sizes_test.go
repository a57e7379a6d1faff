package mapoutput

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sparkCompress is Spark's MapStatus.compressSize, computed with
// floating-point logarithms as Spark does.
func sparkCompress(size uint64) uint8 {
	switch {
	case size == 0:
		return 0
	case size <= 1:
		return 1
	}
	return uint8(math.Min(255, math.Ceil(math.Log(float64(size))/math.Log(1.1))))
}

func TestCompressSizeMatchesSpark(t *testing.T) {
	check := func(s uint64) {
		t.Helper()
		if got, want := CompressSize(s), sparkCompress(s); got != want {
			t.Fatalf("CompressSize(%d) = %d, Spark's formula gives %d", s, got, want)
		}
	}
	for s := uint64(0); s < 1<<16; s++ {
		check(s)
	}
	// around every threshold (where floating point and the tables could
	// disagree) and at random
	for k := 1; k < 256; k++ {
		f := uint64(math.Pow(1.1, float64(k)))
		for _, s := range []uint64{f - 1, f, f + 1} {
			if s > 0 && math.Abs(math.Log(float64(s))/math.Log(1.1)-math.Round(math.Log(float64(s))/math.Log(1.1))) > 1e-9 {
				check(s)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(r.Uint64() >> r.IntN(64))
	}
	check(math.MaxUint64)
}

func TestDecompressedSizeWithinTenPercent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		s := r.Uint64N(30<<30) + 2 // below the 255 cap
		d := DecompressSize(CompressSize(s))
		if d < s*99/100 || float64(d) > float64(s)*1.1+1 {
			t.Fatalf("size %d decodes to %d (code %d): more than 10%% off", s, d, CompressSize(s))
		}
	}
	if DecompressSize(0) != 0 || DecompressSize(CompressSize(0)) != 0 {
		t.Fatal("0 must stay 0")
	}
	if DecompressSize(1) != 1 {
		t.Fatalf("code 1 = %d, want 1", DecompressSize(1))
	}
	if CompressSize(1<<62) != 255 {
		t.Fatalf("huge sizes saturate to 255, got %d", CompressSize(1<<62))
	}
}

func TestEncodeSizesFormats(t *testing.T) {
	cfg := Config{MinPartitionsToHighlyCompress: 10, AccurateBlockThreshold: 1000}
	small := []uint64{0, 5, 100, 0}
	enc := encodeSizes(small, &cfg, nil)
	if enc[0] != fmtCompressed || len(enc) != 1+len(small) {
		t.Fatalf("below the threshold: format %d, %d bytes", enc[0], len(enc))
	}
	for r, s := range small {
		if got := sizeOf(enc, len(small), r); got != DecompressSize(CompressSize(s)) {
			t.Errorf("reduce %d: %d, want %d", r, got, DecompressSize(CompressSize(s)))
		}
	}
	// 12 reducers: highly compressed; 5000 and 1000 are at/above the
	// accurate threshold and kept exactly; the rest average to (10+20+30)/3.
	big := []uint64{0, 10, 5000, 20, 0, 0, 30, 0, 0, 0, 1000, 0}
	enc = encodeSizes(big, &cfg, nil)
	if enc[0] != fmtHighly || !validEncoding(enc, len(big)) {
		t.Fatalf("format %d valid=%v", enc[0], validEncoding(enc, len(big)))
	}
	want := []uint64{0, 20, 5000, 20, 0, 0, 20, 0, 0, 0, 1000, 0}
	for r := range big {
		if got := sizeOf(enc, len(big), r); got != want[r] {
			t.Errorf("reduce %d: %d, want %d", r, got, want[r])
		}
	}
	if len(enc) != 1+2+8+2*12 {
		t.Errorf("encoded %d bytes, want %d", len(enc), 1+2+8+2*12)
	}
}

// BenchmarkCompress compares the table-driven encoding of 1,000 block
// sizes (one map status) with Spark's formula in floating point, the
// baseline.
func BenchmarkCompress(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := make([]uint64, 1000)
	for i := range sizes {
		sizes[i] = r.Uint64N(1 << 24)
	}
	dst := make([]byte, len(sizes))
	b.Run("tables", func(b *testing.B) {
		for b.Loop() {
			compressInto(dst, sizes)
		}
		b.ReportMetric(float64(b.N*len(sizes))/b.Elapsed().Seconds(), "sizes/s")
	})
	b.Run("float-log", func(b *testing.B) {
		for b.Loop() {
			for i, s := range sizes {
				dst[i] = sparkCompress(s)
			}
		}
		b.ReportMetric(float64(b.N*len(sizes))/b.Elapsed().Seconds(), "sizes/s")
	})
}

// TestEncodeSizesSparse: with fewer than R/32 empty blocks the highly
// compressed form lists the empty indices instead of a bitmap, and reads
// back the same sizes; a malformed sparse encoding is invalid.
func TestEncodeSizesSparse(t *testing.T) {
	cfg := Config{MinPartitionsToHighlyCompress: 100, AccurateBlockThreshold: 1 << 20}
	sizes := make([]uint64, 640) // bitmap: 80 bytes
	for r := range sizes {
		sizes[r] = 1000
	}
	sizes[7], sizes[300] = 0, 0
	sizes[500] = 2 << 20 // huge: exact
	enc := encodeSizes(sizes, &cfg, nil)
	// format, count, 2 indices, average, one huge pair
	if enc[0] != fmtSparse || len(enc) != 1+4+2*4+8+12 || !validEncoding(enc, len(sizes)) {
		t.Fatalf("format %d, %d bytes, valid=%v", enc[0], len(enc), validEncoding(enc, len(sizes)))
	}
	for r, want := range sizes {
		if got := sizeOf(enc, len(sizes), r); got != want {
			t.Errorf("reduce %d: %d, want %d", r, got, want)
		}
	}
	none := encodeSizes(sizes[:100:100], &cfg, nil) // [7] empty, the rest 1000
	if none[0] != fmtSparse || len(none) != 1+4+4+8 {
		t.Fatalf("one empty of 100: format %d, %d bytes", none[0], len(none))
	}
	bad := slices.Clone(enc)
	binary.LittleEndian.PutUint32(bad[9:], 6) // second empty index 6 < 7: not ascending
	if validEncoding(bad, len(sizes)) {
		t.Error("descending empty indices accepted")
	}
	if validEncoding(enc[:len(enc)-1], len(sizes)) || validEncoding(enc[:3], len(sizes)) {
		t.Error("truncated sparse encoding accepted")
	}
	many := make([]uint64, 640) // half empty: the bitmap is shorter
	for r := range many {
		many[r] = uint64(r % 2 * 1000)
	}
	if enc := encodeSizes(many, &cfg, nil); enc[0] != fmtHighly {
		t.Errorf("320 empty of 640: format %d, want the bitmap", enc[0])
	}
}
