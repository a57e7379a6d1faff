package shuffle

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

type sliceStream struct{ recs [][2][]byte }

func (s *sliceStream) Next() ([]byte, []byte, error) {
	if len(s.recs) == 0 {
		return nil, nil, io.EOF
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r[0], r[1], nil
}

// The merge of sorted streams is their records in order, equal keys in
// stream order (earlier streams first), in byte order — keys sharing
// their 8-byte prefix, keys that are prefixes of others, empty streams —
// and in a custom (descending) order.
func TestMergerIsAStableMerge(t *testing.T) {
	desc := CustomOrder(func(a, b []byte) int { return bytes.Compare(b, a) })
	for seed := range uint64(30) {
		for _, order := range []Order{ByteOrder, desc} {
			r := rand.New(rand.NewPCG(seed, 3))
			n := 1 + r.IntN(9)
			var all [][3][]byte // key, value, stream
			streams := make([]Stream, n)
			for s := range n {
				var recs [][2][]byte
				for i := range r.IntN(200) {
					key := []byte("prefix00")[:r.IntN(9)]
					for range r.IntN(3) {
						key = append(key, byte('a'+r.IntN(3)))
					}
					recs = append(recs, [2][]byte{key, {byte(s), byte(i)}})
				}
				slices.SortStableFunc(recs, func(x, y [2][]byte) int { return order.compare(x[0], y[0]) })
				for _, rec := range recs {
					all = append(all, [3][]byte{rec[0], rec[1], {byte(s)}})
				}
				streams[s] = &sliceStream{recs: recs}
			}
			slices.SortStableFunc(all, func(x, y [3][]byte) int { return order.compare(x[0], y[0]) })
			m, err := NewMerger(streams, order, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				k, v, err := m.Next()
				if err == io.EOF {
					if i != len(all) {
						t.Fatalf("seed %d: %d records merged, want %d", seed, i, len(all))
					}
					break
				}
				if !bytes.Equal(k, all[i][0]) || !bytes.Equal(v, all[i][1]) {
					t.Fatalf("seed %d record %d: (%q, %v), want (%q, %v)", seed, i, k, v, all[i][0], all[i][1])
				}
			}
		}
	}
}

// prefixOf pads keys shorter than 8 bytes with zeros.
func TestPrefixOfPadsShortKeys(t *testing.T) {
	key := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for n := range len(key) + 1 {
		var padded [8]byte
		copy(padded[:], key[:n])
		want := uint64(0)
		for _, c := range padded {
			want = want<<8 | uint64(c)
		}
		if got := prefixOf(key[:n]); got != want {
			t.Fatalf("prefixOf(%v) = %#x, want %#x", key[:n], got, want)
		}
	}
}

// Unordered streams without a combine come out concatenated, in stream
// order, empty streams skipped, also through ExternalMerge with more
// streams than its fan-in (no runs written); a stream's error stops them.
func TestUnorderedMergeConcatenates(t *testing.T) {
	mk := func() []Stream {
		return []Stream{
			&sliceStream{recs: [][2][]byte{{[]byte("z"), []byte("1")}, {[]byte("a"), []byte("2")}}},
			&sliceStream{},
			&sliceStream{recs: [][2][]byte{{[]byte("m"), []byte("3")}}},
		}
	}
	m, err := ExternalMerge(mk(), Unordered, nil, 2, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got []string
	for {
		k, v, err := m.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(k)+string(v))
	}
	if want := []string{"z1", "a2", "m3"}; !slices.Equal(got, want) || m.Passes != 0 {
		t.Fatalf("got %q with %d runs, want %q with none", got, m.Passes, want)
	}
	broken := errors.New("broken")
	mg, err := NewMerger([]Stream{&sliceStream{recs: [][2][]byte{{[]byte("k"), nil}}}, errStream{broken}}, Unordered, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mg.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := mg.Next(); !errors.Is(err, broken) {
			t.Fatalf("after the first stream: %v, want %v", err, broken)
		}
	}
}

type errStream struct{ err error }

func (s errStream) Next() ([]byte, []byte, error) { return nil, nil, s.err }

// Keys whose first 8 bytes are all ones (an ended stream's prefix) still
// merge in order, before and after other streams end.
func TestMergerAllOnesPrefixes(t *testing.T) {
	ones := "\xff\xff\xff\xff\xff\xff\xff\xff"
	streams := []Stream{
		&sliceStream{recs: [][2][]byte{{[]byte("a"), []byte("0")}}},
		&sliceStream{recs: [][2][]byte{{[]byte(ones), []byte("1")}, {[]byte(ones + "\x02"), []byte("2")}}},
		&sliceStream{recs: [][2][]byte{{[]byte(ones + "\x01"), []byte("3")}, {[]byte(ones + "\xff"), []byte("4")}}},
		&sliceStream{},
	}
	m, err := NewMerger(streams, ByteOrder, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		_, v, err := m.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(v))
	}
	if want := []string{"0", "1", "3", "2", "4"}; !slices.Equal(got, want) {
		t.Fatalf("merged values %q, want %q", got, want)
	}
}
