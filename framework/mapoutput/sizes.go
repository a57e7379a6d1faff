package mapoutput

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// logBase is Spark's MapStatus LOG_BASE: a compressed size is
// ceil(log base 1.1 of the size), an error of at most 10 %.
const logBase = 1.1

// maxCode is the largest one-byte code; sizes above its threshold (about
// 33.6 GiB) saturate to it.
const maxCode = 255

var (
	// codeFloor[k] = floor(1.1^k): size s encodes to the smallest k with
	// s <= codeFloor[k] (for integers, s <= 1.1^k ⟺ s <= floor(1.1^k)).
	codeFloor [maxCode + 1]uint64
	// codeSize[k] is the decoded size of code k (Spark's decompressSize).
	codeSize [maxCode + 1]uint64
	// start is indexed by the top 16 bits of a size converted to float64
	// (sign, exponent, first four mantissa bits: the bit length l of the
	// size and the four bits j after its leading one). An entry packs
	// codeFloor[k]<<8 | k for the smallest code k whose floor is at least
	// the lowest size of that bucket. A bucket spans a ratio of at most
	// 17/16 < 1.1, so it holds at most one threshold: the code of any size
	// in it is k or k+1. Sizes are capped below 2^36, so only entry 0 (the
	// size 0) and 36*16 entries from 0x3FF0 are used; the rest of the
	// table is never touched.
	start [1 << 16]uint64
	// capSize is the largest size with its own code; larger sizes encode
	// as if they were capSize (code 255).
	capSize uint64
)

func init() {
	for k := range codeFloor {
		p := math.Pow(logBase, float64(k))
		codeFloor[k] = uint64(math.Floor(p))
		codeSize[k] = uint64(p)
	}
	codeSize[0] = 0
	codeFloor[0] = 0 // only 0 encodes to 0; 1 encodes to 1 (1.1^1 floors to 1)
	capSize = codeFloor[maxCode]
	if bits.Len64(capSize) > 36 {
		panic("mapoutput: size table too small")
	}
	for l := 1; l <= bits.Len64(capSize); l++ {
		for j := range 16 {
			low := lowest(l, j)
			k := 1
			for k < maxCode && codeFloor[k] < low {
				k++
			}
			start[floatIndex(lowest(l, j))] = codeFloor[k]<<8 | uint64(k)
		}
	}
}

// lowest is the smallest uint64 with bit length l whose four bits after
// the leading one are j (for l < 5 the missing low bits are zero).
func lowest(l, j int) uint64 {
	v := uint64(1) << (l - 1)
	if l >= 5 {
		return v | uint64(j)<<(l-5)
	}
	return v | uint64(j)>>(5-l)
}

// CompressSize encodes a block size in one byte (Spark's
// MapStatus.compressSize): 0 for empty, else ceil(log1.1(size)) capped at
// 255.
func CompressSize(size uint64) uint8 {
	var b [1]byte
	compressInto(b[:], []uint64{size})
	return b[0]
}

// DecompressSize decodes a CompressSize byte: 1.1^code, truncated; 0 for 0.
func DecompressSize(code uint8) uint64 { return codeSize[code] }

// compressInto writes the one-byte codes of sizes into dst (len(sizes)).
// It is branch-free per size: random sizes would mispredict a branch on
// every other block, which costs more than the arithmetic (one map status
// carries a size per reducer, and the driver encodes every one).
func compressInto(dst []byte, sizes []uint64) {
	dst = dst[:len(sizes)]
	limit, tab := capSize, &start
	// four at a time: the sizes are independent, so the unrolled body
	// keeps the conversion and table loads of several in flight
	i := 0
	for ; i+4 <= len(sizes); i += 4 {
		s, d := sizes[i:i+4:i+4], dst[i:i+4:i+4]
		s0, s1, s2, s3 := min(s[0], limit), min(s[1], limit), min(s[2], limit), min(s[3], limit)
		e0, e1, e2, e3 := tab[floatIndex(s0)], tab[floatIndex(s1)], tab[floatIndex(s2)], tab[floatIndex(s3)]
		d[0] = uint8(e0) + uint8(((e0>>8)-s0)>>63)
		d[1] = uint8(e1) + uint8(((e1>>8)-s1)>>63)
		d[2] = uint8(e2) + uint8(((e2>>8)-s2)>>63)
		d[3] = uint8(e3) + uint8(((e3>>8)-s3)>>63)
	}
	for ; i < len(sizes); i++ {
		s := min(sizes[i], limit)
		// float64 holds s < 2^53 exactly; its top bits are the bucket
		e := tab[floatIndex(s)]
		// +1 when s > floor; s <= capSize keeps the difference below 2^63
		// and the code below 255 whenever it applies
		dst[i] = uint8(e) + uint8(((e>>8)-s)>>63)
	}
}

// floatIndex is the start-table bucket of s (s < 2^53): the top 16 bits
// of float64(s), 0 for 0 (below 1<<16, so indexing start needs no
// bounds check).
func floatIndex(s uint64) uint64 {
	return math.Float64bits(float64(int64(s))) >> 48
}

// Encoded sizes of one map output. The first byte says the format:
//
//	fmtCompressed: one CompressSize byte per reducer.
//	fmtHighly:     bitmap of empty blocks (ceil(R/8) bytes, bit set = empty),
//	               the average of the other blocks below the accurate
//	               threshold (8 bytes, little endian), then pairs of
//	               (reduce index uint32, exact size uint64) for huge blocks,
//	               by ascending index.
//	fmtSparse:     as fmtHighly, with the empty blocks as a count (uint32)
//	               and their ascending reduce indices (uint32 each) instead
//	               of the bitmap, when that is shorter (fewer than R/32
//	               empty blocks) — as Spark's RoaringBitmap keeps a sparse
//	               set as its values: 10,000 reducers with no empty block
//	               take 13 bytes, not 1,259.
const (
	fmtCompressed byte = 1
	fmtHighly     byte = 2
	fmtSparse     byte = 3
)

// encodeSizes returns the encoded form of sizes; the one-byte-per-reducer
// form is carved from sl when it is not nil.
func encodeSizes(sizes []uint64, cfg *Config, sl *slab) []byte {
	r := len(sizes)
	if r < cfg.MinPartitionsToHighlyCompress {
		var b []byte
		if sl != nil {
			b = sl.alloc(1 + r)
		} else {
			b = make([]byte, 1+r)
		}
		b[0] = fmtCompressed
		if r > 0 {
			compressInto(b[1:], sizes)
		}
		return b
	}
	var sum, n uint64
	var huge []int
	for i, s := range sizes {
		switch {
		case s == 0:
		case s >= cfg.AccurateBlockThreshold:
			huge = append(huge, i)
		default:
			sum += s
			n++
		}
	}
	nb := (r + 7) / 8
	empty := r - int(n) - len(huge)
	sparse := 4+4*empty < nb
	head := 1 + nb
	if sparse {
		head = 1 + 4 + 4*empty
	}
	b := make([]byte, head+8+12*len(huge))
	if sparse {
		b[0] = fmtSparse
		binary.LittleEndian.PutUint32(b[1:], uint32(empty))
		p := b[5:]
		for i, s := range sizes {
			if s == 0 {
				binary.LittleEndian.PutUint32(p, uint32(i))
				p = p[4:]
			}
		}
	} else {
		b[0] = fmtHighly
		bm := b[1 : 1+nb]
		for i, s := range sizes {
			if s == 0 {
				bm[i>>3] |= 1 << (i & 7)
			}
		}
	}
	avg := uint64(0)
	if n > 0 {
		avg = sum / n
	}
	binary.LittleEndian.PutUint64(b[head:], avg)
	p := b[head+8:]
	for _, i := range huge {
		binary.LittleEndian.PutUint32(p, uint32(i))
		binary.LittleEndian.PutUint64(p[4:], sizes[i])
		p = p[12:]
	}
	return b
}

// sizeOf decodes the size of reduce partition r from an encoded form
// (already validated for numReduces reducers).
func sizeOf(enc []byte, numReduces, r int) uint64 {
	if enc[0] == fmtCompressed {
		return codeSize[enc[1+r]]
	}
	head := 1 + (numReduces+7)/8
	if enc[0] == fmtSparse {
		empties := enc[5 : 5+4*binary.LittleEndian.Uint32(enc[1:])]
		if _, found := search(empties, 4, r); found {
			return 0
		}
		head = 5 + len(empties)
	} else if enc[1+r>>3]&(1<<(r&7)) != 0 {
		return 0
	}
	huge := enc[head+8:]
	if m, found := search(huge, 12, r); found {
		return binary.LittleEndian.Uint64(huge[12*m+4:])
	}
	return binary.LittleEndian.Uint64(enc[head:])
}

// search binary-searches records of width bytes, each starting with an
// ascending uint32 reduce index, for r.
func search(recs []byte, width, r int) (int, bool) {
	lo, hi := 0, len(recs)/width
	for lo < hi {
		m := (lo + hi) / 2
		idx := int(binary.LittleEndian.Uint32(recs[width*m:]))
		switch {
		case idx == r:
			return m, true
		case idx < r:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// validEncoding reports whether enc is a well-formed encoding for
// numReduces reducers.
func validEncoding(enc []byte, numReduces int) bool {
	if len(enc) == 0 {
		return false
	}
	switch enc[0] {
	case fmtCompressed:
		return len(enc) == 1+numReduces
	case fmtHighly, fmtSparse:
		head := 1 + (numReduces+7)/8
		if enc[0] == fmtSparse {
			if len(enc) < 5 {
				return false
			}
			n := uint64(binary.LittleEndian.Uint32(enc[1:]))
			if n > uint64(numReduces) || uint64(len(enc)) < 5+4*n {
				return false
			}
			head = 5 + 4*int(n)
			if !ascending(enc[5:head], 4, numReduces) {
				return false
			}
		}
		rest := len(enc) - head - 8
		return rest >= 0 && rest%12 == 0 && ascending(enc[head+8:], 12, numReduces)
	}
	return false
}

// ascending reports whether records of width bytes start with strictly
// ascending uint32 reduce indices below numReduces.
func ascending(recs []byte, width, numReduces int) bool {
	prev := -1
	for p := recs; len(p) > 0; p = p[width:] {
		idx := int(binary.LittleEndian.Uint32(p))
		if idx <= prev || idx >= numReduces {
			return false
		}
		prev = idx
	}
	return true
}
