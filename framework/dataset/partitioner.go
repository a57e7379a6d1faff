package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Partitioner assigns an encoded key to a reduce partition. Keys arrive
// encoded with the dataset's key codec (recordcodec.For, or
// recordcodec.Ordered for sorts), so a partitioner works the same in
// every process.
type Partitioner interface {
	NumPartitions() int
	Partition(key []byte) int
	// Name describes the partitioner in the graph fingerprint.
	Name() string
}

// HashPartitioner spreads keys by a fixed-seed hash of their encoding
// (never hash/maphash, whose seed differs per process).
type HashPartitioner int

// NumPartitions implements Partitioner.
func (h HashPartitioner) NumPartitions() int { return int(h) }

// Partition implements Partitioner.
func (h HashPartitioner) Partition(key []byte) int { return int(hashKey(key) % uint64(h)) }

// Name implements Partitioner.
func (h HashPartitioner) Name() string { return fmt.Sprintf("hash(%d)", int(h)) }

// RangePartitioner sends keys below Bounds[0] to partition 0, keys in
// [Bounds[i-1], Bounds[i]) to partition i, and the rest to the last:
// with keys encoded by recordcodec.Ordered, partition i's keys all sort
// before partition i+1's. Descending reverses the partitions. Bounds must
// be sorted. Build it with NewRangePartitioner for the first-byte table; a
// literal binary-searches all the bounds.
type RangePartitioner struct {
	Bounds     [][]byte
	Descending bool
	// byFirst[c] is the number of bounds whose first byte is below c
	// (an empty bound's counts as 0): a key starting with c lies after
	// those and before the bounds from byFirst[c+1] on, so only the
	// bounds in between are searched — mostly one or none.
	byFirst *[257]int32
}

// NewRangePartitioner partitions by the sorted bounds.
func NewRangePartitioner(bounds [][]byte, descending bool) RangePartitioner {
	t := new([257]int32)
	for _, b := range bounds {
		t[firstByte(b)+1]++
	}
	for c := 1; c < len(t); c++ {
		t[c] += t[c-1]
	}
	return RangePartitioner{Bounds: bounds, Descending: descending, byFirst: t}
}

// firstByte is b's first byte, 0 for an empty b: a key whose padded first
// byte is below a bound's is below the bound itself.
func firstByte(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return int(b[0])
}

// NumPartitions implements Partitioner.
func (r RangePartitioner) NumPartitions() int { return len(r.Bounds) + 1 }

// Partition implements Partitioner: binary search over the bounds that
// share the key's first byte.
func (r RangePartitioner) Partition(key []byte) int {
	i, hi := 0, len(r.Bounds) // the first bound above key
	if r.byFirst != nil {
		c := firstByte(key)
		i, hi = int(r.byFirst[c]), int(r.byFirst[c+1])
	}
	for i < hi {
		m := int(uint(i+hi) >> 1)
		if keyBelow(key, r.Bounds[m]) {
			hi = m
		} else {
			i = m + 1
		}
	}
	if r.Descending {
		return len(r.Bounds) - i
	}
	return i
}

// keyBelow is bytes.Compare(a, b) < 0, deciding on the first 8 bytes as
// one integer where both have them (a shuffle's keys mostly differ there).
func keyBelow(a, b []byte) bool {
	if len(a) >= 8 && len(b) >= 8 {
		if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
			return x < y
		}
	}
	return bytes.Compare(a, b) < 0
}

// Name implements Partitioner.
func (r RangePartitioner) Name() string {
	return fmt.Sprintf("range(%d,desc=%v,%x)", len(r.Bounds)+1, r.Descending, hashKey(bytes.Join(r.Bounds, []byte{0})))
}

// hashKey is the fixed-seed hash of an encoded key (FNV-1a, 64 bits, with
// a finaliser so that the low bits mix): the same in every process.
func hashKey(b []byte) uint64 {
	x := uint64(14695981039346656037)
	for _, c := range b {
		x ^= uint64(c)
		x *= 1099511628211
	}
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}
