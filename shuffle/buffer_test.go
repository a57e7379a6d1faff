package shuffle

import (
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// The buffer's radix sort puts keys in bytes.Compare order, also keys
// that tie on their 16 prefix bytes, keys that are prefixes of others,
// zero bytes (the prefix's padding) and empty keys; values stay with
// their keys.
func TestBufferSortsLikeBytesCompare(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		parts := 1 + r.IntN(4)
		b := newBuffer(1<<10, parts, true)
		want := make([][][2][]byte, parts)
		n := r.IntN(3000)
		alphabet := []byte{0, 1, 'a', 'b', 0xff}
		common := bytes.Repeat([]byte{'k'}, r.IntN(20)) // a shared prefix of any length
		for i := range n {
			key := append([]byte(nil), common[:r.IntN(len(common)+1)]...)
			for range r.IntN(24) {
				key = append(key, alphabet[r.IntN(len(alphabet))])
			}
			val := []byte{byte(i), byte(i >> 8)}
			p := r.IntN(parts)
			b.add(p, key, val)
			want[p] = append(want[p], [2][]byte{key, val})
		}
		b.sort(ByteOrder)
		for p := range parts {
			slices.SortStableFunc(want[p], func(x, y [2][]byte) int { return bytes.Compare(x[0], y[0]) })
			var got [][2][]byte
			s := b.stream(p)
			for {
				k, v, err := s.Next()
				if err == io.EOF {
					break
				}
				got = append(got, [2][]byte{slices.Clone(k), slices.Clone(v)})
			}
			if len(got) != len(want[p]) {
				t.Fatalf("seed %d partition %d: %d records, want %d", seed, p, len(got), len(want[p]))
			}
			for i := range got {
				if !bytes.Equal(got[i][0], want[p][i][0]) {
					t.Fatalf("seed %d partition %d record %d: key %q, want %q", seed, p, i, got[i][0], want[p][i][0])
				}
			}
			// equal keys may come in any order: compare the multisets of
			// (key, value)
			cmpKV := func(x, y [2][]byte) int {
				if c := bytes.Compare(x[0], y[0]); c != 0 {
					return c
				}
				return bytes.Compare(x[1], y[1])
			}
			slices.SortFunc(got, cmpKV)
			slices.SortFunc(want[p], cmpKV)
			for i := range got {
				if !bytes.Equal(got[i][1], want[p][i][1]) {
					t.Fatalf("seed %d partition %d: key %q has value %v, want %v", seed, p, got[i][0], got[i][1], want[p][i][1])
				}
			}
		}
	}
}
