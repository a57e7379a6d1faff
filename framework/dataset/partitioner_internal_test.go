package dataset

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"
)

// RangePartitioner.Partition agrees with a binary search by bytes.Compare
// for keys and bounds of every length around the 8-byte fast path,
// sharing prefixes, ascending and descending.
func TestRangePartitionerMatchesBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randKey := func() []byte {
		k := make([]byte, r.IntN(13))
		for i := range k {
			k[i] = byte('a' + r.IntN(3)) // few symbols: long shared prefixes
		}
		return k
	}
	for range 200 {
		var bounds [][]byte
		for range r.IntN(40) {
			bounds = append(bounds, randKey())
		}
		sort.Slice(bounds, func(i, j int) bool { return bytes.Compare(bounds[i], bounds[j]) < 0 })
		for _, desc := range []bool{false, true} {
			p := RangePartitioner{Bounds: bounds, Descending: desc}
			for range 200 {
				key := randKey()
				want := sort.Search(len(bounds), func(i int) bool { return bytes.Compare(key, bounds[i]) < 0 })
				if desc {
					want = len(bounds) - want
				}
				if got := p.Partition(key); got != want {
					t.Fatalf("Partition(%q) over %q (descending %v) = %d, want %d", key, bounds, desc, got, want)
				}
			}
		}
	}
}

// BenchmarkRangePartition places 10-byte random keys among 31 bounds (32
// partitions, as the embedded shuffle benchmark's sortByKey at 2 GiB).
func BenchmarkRangePartition(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	key := func() []byte {
		k := make([]byte, 10)
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		return k
	}
	var bounds [][]byte
	for range 31 {
		bounds = append(bounds, key())
	}
	sort.Slice(bounds, func(i, j int) bool { return bytes.Compare(bounds[i], bounds[j]) < 0 })
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = key()
	}
	p := RangePartitioner{Bounds: bounds}
	sum := 0
	for i := 0; b.Loop(); i++ {
		sum += p.Partition(keys[i&4095])
	}
	_ = sum
}
