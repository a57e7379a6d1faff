package shuffle_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type rec struct{ k, v string }

func openStore(t testing.TB) *shuffle.Store {
	t.Helper()
	s, err := shuffle.OpenStore(t.TempDir() + "/shuffle")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func partOf(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// randomRecords are n records over about keys distinct keys.
func randomRecords(seed uint64, n, keys int) []rec {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{fmt.Sprintf("k%07d", r.IntN(keys)), fmt.Sprintf("v%d-%s", i, string(bytes.Repeat([]byte{'x'}, r.IntN(40))))}
	}
	return out
}

// readBlock reads reduce partition p of a map output back.
func readBlock(t testing.TB, s *shuffle.Store, shuffleID, mapIndex, p int) []rec {
	t.Helper()
	b, err := s.OpenBlock(shuffleID, mapIndex, p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return drain(t, shuffleblock.NewReader(b))
}

func drain(t testing.TB, st shuffle.Stream) []rec {
	t.Helper()
	var out []rec
	for {
		k, v, err := st.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec{string(k), string(v)})
	}
}

func writeAll(t testing.TB, cfg shuffle.Config, recs []rec) shuffle.Result {
	t.Helper()
	w, err := shuffle.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Add(partOf(r.k, cfg.Partitions), []byte(r.k), []byte(r.v)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return res
}
