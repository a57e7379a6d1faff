package shuffleblock

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

const indexMagic = "FLSHIDX1"

// MaxPartitions bounds the partition count an index may claim.
const MaxPartitions = 1 << 24

// IndexSize is the size of the index of p partitions.
func IndexSize(p int) int { return len(indexMagic) + 4 + 8*(p+1) + 4 }

// EncodeIndex is the index file for the partition offsets (P+1 of them,
// the first 0, the last the data file's size).
func EncodeIndex(offsets []int64) []byte {
	b := make([]byte, 0, IndexSize(len(offsets)-1))
	b = append(b, indexMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(offsets)-1))
	for _, o := range offsets {
		b = binary.BigEndian.AppendUint64(b, uint64(o))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeIndex parses an index file: P+1 non-decreasing offsets from 0.
func DecodeIndex(b []byte) ([]int64, error) {
	if len(b) < IndexSize(0) || string(b[:len(indexMagic)]) != indexMagic {
		return nil, fmt.Errorf("%w: not a shuffle index (%d bytes)", ErrCorrupt, len(b))
	}
	p := binary.BigEndian.Uint32(b[len(indexMagic):])
	if p > MaxPartitions || len(b) != IndexSize(int(p)) {
		return nil, fmt.Errorf("%w: index of %d bytes claims %d partitions", ErrCorrupt, len(b), p)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: index: %w", ErrCorrupt, ErrChecksum)
	}
	offsets := make([]int64, p+1)
	at := len(indexMagic) + 4
	for i := range offsets {
		o := binary.BigEndian.Uint64(b[at+8*i:])
		if o > 1<<62 || (i == 0 && o != 0) || (i > 0 && int64(o) < offsets[i-1]) {
			return nil, fmt.Errorf("%w: index offset %d of %d is %d", ErrCorrupt, i, p+1, o)
		}
		offsets[i] = int64(o)
	}
	return offsets, nil
}
