package pagerank_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/internal/exampletest"
	"github.com/flint-mesos/flint/examples/pagerank"
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPageRankMatchesADirectComputation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var edges [][2]string
	var text strings.Builder
	for range 3000 {
		e := [2]string{fmt.Sprintf("p%d", r.IntN(300)), fmt.Sprintf("p%d", r.IntN(250))}
		edges = append(edges, e)
		text.WriteString(e[0] + "\t" + e[1] + "\n")
	}
	in := filepath.Join(t.TempDir(), "edges")
	os.WriteFile(in, []byte(text.String()), 0o644)
	fc := exampletest.Local(t, "flint.files.maxPartitionBytes", "8000")
	got, err := pagerank.Run(context.Background(), fc, pagerank.Options{Input: in, Iterations: 5, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := examplecheck.DirectPageRank(edges, 5)
	if len(got) != len(want) {
		t.Fatalf("%d ranks, want %d", len(got), len(want))
	}
	for _, rk := range got {
		// sums are added in another order: equal to a few ulps
		if w, ok := want[rk.Page]; !ok || math.Abs(rk.Rank-w) > 1e-9*w {
			t.Fatalf("rank of %s = %v, want %v", rk.Page, rk.Rank, w)
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return pagerank.Before(got[i], got[j]) }) {
		t.Fatal("ranks are not sorted highest first")
	}
}
