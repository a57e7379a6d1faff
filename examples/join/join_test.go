package join_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/internal/exampletest"
	"github.com/flint-mesos/flint/examples/join"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func genSide(r *rand.Rand, n int, tag string) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("k%d\t%s%d", r.IntN(n/3+1), tag, i)
	}
	return lines
}

// The output's lines are exactly a nested-loop join's, repeated keys
// giving every pair.
func TestJoinMatchesANestedLoopJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	left, right := genSide(r, 900, "l"), genSide(r, 600, "r")
	right = append(right, "lonely") // a line without a tab: key "lonely", empty value
	lp, rp := filepath.Join(dir, "left"), filepath.Join(dir, "right")
	os.WriteFile(lp, []byte(strings.Join(left, "\n")+"\n"), 0o644)
	os.WriteFile(rp, []byte(strings.Join(right, "\n")), 0o644)
	out := filepath.Join(dir, "out")
	fc := exampletest.Local(t, "flint.files.maxPartitionBytes", "2000")
	if err := join.Run(context.Background(), fc, join.Options{Left: lp, Right: rp, Output: out, Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(exampletest.Output(t, out), "\n"), "\n")
	var want []string
	for _, l := range left {
		lk, lv, _ := strings.Cut(l, "\t")
		for _, rl := range right {
			rk, rv, _ := strings.Cut(rl, "\t")
			if lk == rk {
				want = append(want, lk+"\t"+lv+"\t"+rv)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < len(left) {
		t.Fatalf("test data has only %d pairs", len(want))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d joined lines, want %d", len(got), len(want))
	}
}
