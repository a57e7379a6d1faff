// Package examplecheck runs the dataset examples (sort, join, PageRank)
// on a given context — local, coarse, fine or embedded — over generated
// inputs, and checks each result exactly against an independent
// computation: the standard library's sort of the same lines, a
// nested-loop join, and PageRank computed with maps.
package examplecheck

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/examples/join"
	"github.com/flint-mesos/flint/examples/pagerank"
	"github.com/flint-mesos/flint/examples/sortlines"
	"github.com/flint-mesos/flint/framework"
)

// All runs Sort, Join and PageRank on fc.
func All(ctx context.Context, t testing.TB, fc *framework.Context) {
	t.Helper()
	Sort(ctx, t, fc)
	Join(ctx, t, fc)
	PageRank(ctx, t, fc)
}

// Lines generates n lines of up to 40 bytes (tabs, carriage returns,
// NULs, invalid UTF-8 and duplicates among them).
func Lines(r *rand.Rand, n int) []string {
	alphabet := []byte("abcAB \t\r\x00é\xff0123456789zz")
	lines := make([]string, n)
	for i := range lines {
		if r.IntN(20) == 0 && i > 0 {
			lines[i] = lines[r.IntN(i)]
			continue
		}
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		lines[i] = string(b)
	}
	return lines
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Sort sorts two generated files into 5 range partitions and checks the
// output against slices.Sort of the same lines.
func Sort(ctx context.Context, t testing.TB, fc *framework.Context) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	a, b := Lines(r, 6000), Lines(r, 1500)
	write(t, filepath.Join(dir, "a"), strings.Join(a, "\n")+"\n")
	write(t, filepath.Join(dir, "b"), strings.Join(b, "\n")) // no final newline
	out := filepath.Join(dir, "out")
	if err := sortlines.Run(ctx, fc, sortlines.Options{Inputs: []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")},
		Output: out, Partitions: 5}); err != nil {
		t.Fatalf("sort: %v", err)
	}
	all := append(a, b...)
	slices.Sort(all)
	if got, want := Output(t, out), strings.Join(all, "\n")+"\n"; got != want {
		t.Fatalf("sort: the output (%d bytes) is not the sorted input (%d bytes)", len(got), len(want))
	}
}

// Join joins generated sides with repeated keys and checks the output
// lines against a nested-loop join's.
func Join(ctx context.Context, t testing.TB, fc *framework.Context) {
	t.Helper()
	r := rand.New(rand.NewPCG(13, 14))
	dir := t.TempDir()
	side := func(n int, tag string) []string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("k%d\t%s%d", r.IntN(n/3+1), tag, i)
		}
		return lines
	}
	left, right := side(1200, "l"), side(700, "r")
	lp, rp := filepath.Join(dir, "left"), filepath.Join(dir, "right")
	write(t, lp, strings.Join(left, "\n")+"\n")
	write(t, rp, strings.Join(right, "\n")+"\n")
	out := filepath.Join(dir, "out")
	if err := join.Run(ctx, fc, join.Options{Left: lp, Right: rp, Output: out, Partitions: 4}); err != nil {
		t.Fatalf("join: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(Output(t, out), "\n"), "\n")
	var want []string
	for _, l := range left {
		lk, lv, _ := strings.Cut(l, "\t")
		for _, rl := range right {
			if rk, rv, _ := strings.Cut(rl, "\t"); lk == rk {
				want = append(want, lk+"\t"+lv+"\t"+rv)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < len(left) || !slices.Equal(got, want) {
		t.Fatalf("join: %d joined lines, want %d (a nested-loop join's)", len(got), len(want))
	}
}

// PageRank runs 4 iterations over a generated edge list and checks every
// rank against a computation with maps.
func PageRank(ctx context.Context, t testing.TB, fc *framework.Context) {
	t.Helper()
	r := rand.New(rand.NewPCG(15, 16))
	var edges [][2]string
	var text strings.Builder
	for range 2000 {
		e := [2]string{fmt.Sprintf("p%d", r.IntN(200)), fmt.Sprintf("p%d", r.IntN(170))}
		edges = append(edges, e)
		text.WriteString(e[0] + "\t" + e[1] + "\n")
	}
	in := filepath.Join(t.TempDir(), "edges")
	write(t, in, text.String())
	got, err := pagerank.Run(ctx, fc, pagerank.Options{Input: in, Iterations: 4, Partitions: 3})
	if err != nil {
		t.Fatalf("pagerank: %v", err)
	}
	want := DirectPageRank(edges, 4)
	if len(got) != len(want) {
		t.Fatalf("pagerank: %d ranks, want %d", len(got), len(want))
	}
	for _, rk := range got {
		// sums are added in another order: equal to a few ulps
		if w, ok := want[rk.Page]; !ok || math.Abs(rk.Rank-w) > 1e-9*w {
			t.Fatalf("pagerank: rank of %s = %v, want %v", rk.Page, rk.Rank, w)
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return pagerank.Before(got[i], got[j]) }) {
		t.Fatal("pagerank: ranks are not sorted highest first")
	}
}

// DirectPageRank is Spark's PageRank example computed with maps.
func DirectPageRank(edges [][2]string, iters int) map[string]float64 {
	links := map[string][]string{}
	seen := map[[2]string]bool{}
	for _, e := range edges {
		if !seen[e] {
			seen[e] = true
			links[e[0]] = append(links[e[0]], e[1])
		}
	}
	ranks := map[string]float64{}
	for p := range links {
		ranks[p] = 1
	}
	for range iters {
		sums := map[string]float64{}
		for p, urls := range links {
			rk, ok := ranks[p]
			if !ok {
				continue
			}
			for _, u := range urls {
				sums[u] += rk / float64(len(urls))
			}
		}
		ranks = map[string]float64{}
		for p, s := range sums {
			ranks[p] = 0.15 + 0.85*s
		}
	}
	return ranks
}

// Output is the concatenation of dir's part files in name order; it
// fails the test unless dir has _SUCCESS and nothing but part files.
func Output(t testing.TB, dir string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
		t.Fatalf("no _SUCCESS in %s: %v", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		switch {
		case e.Name() == "_SUCCESS":
		case strings.HasPrefix(e.Name(), "part-"):
			names = append(names, e.Name())
		default:
			t.Fatalf("unexpected %s in the output directory %s", e.Name(), dir)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
