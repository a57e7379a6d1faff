package dataset

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"
)

// RangePartitioner.Partition agrees with a binary search by bytes.Compare
// for keys and bounds of every length around the 8-byte fast path,
// sharing prefixes, ascending and descending, with the first-byte table
// (NewRangePartitioner) and without (a literal).
func TestRangePartitionerMatchesBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randKey := func() []byte {
		k := make([]byte, r.IntN(13))
		for i := range k {
			k[i] = byte('a' + r.IntN(3)) // few symbols: long shared prefixes
			if r.IntN(8) == 0 {
				k[i] = byte(r.IntN(2)) // the padding's byte, and a first byte below it
			}
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
			literal := RangePartitioner{Bounds: bounds, Descending: desc}
			for i, p := range []RangePartitioner{literal, NewRangePartitioner(bounds, desc)} {
				if p.Name() != literal.Name() {
					t.Fatalf("partitioner %d is named %s, the literal %s", i, p.Name(), literal.Name())
				}
				checkRangePartitioner(t, p, bounds, desc, randKey)
			}
		}
	}
}

// checkRangePartitioner places 200 random keys with p and with sort.Search.
func checkRangePartitioner(t *testing.T, p RangePartitioner, bounds [][]byte, desc bool, randKey func() []byte) {
	t.Helper()
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

// BenchmarkRangePartition places 10-byte random keys among 31 bounds (32
// partitions, as the embedded shuffle benchmark's sortByKey at 2 GiB),
// binary-searching all bounds (search) or those sharing the key's first
// byte (table).
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
	for _, bc := range []struct {
		name string
		p    RangePartitioner
	}{{"search", RangePartitioner{Bounds: bounds}}, {"table", NewRangePartitioner(bounds, false)}} {
		b.Run(bc.name, func(b *testing.B) {
			sum := 0
			for i := 0; b.Loop(); i++ {
				sum += bc.p.Partition(keys[i&4095])
			}
			_ = sum
		})
	}
}
