package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// groupsOf is the coalesced dataset's groups of parent partitions and each
// new partition's preferred host ("" for none).
func groupsOf[T any](ds Dataset[T]) ([][]int, []string) {
	groups := ds.n.deps[0].Groups
	hosts := make([]string, len(groups))
	for i := range hosts {
		if ds.n.preferred != nil && len(ds.n.preferred[i]) > 0 {
			hosts[i] = ds.n.preferred[i][0].Host
		}
	}
	return groups, hosts
}

// checkAllOnce fails unless groups hold each of the m parents exactly once.
func checkAllOnce(t *testing.T, groups [][]int, m int) {
	t.Helper()
	var all []int
	for _, g := range groups {
		all = append(all, g...)
	}
	slices.Sort(all)
	for i, p := range all {
		if p != i || len(all) != m {
			t.Fatalf("groups %v do not hold each of the %d parents once", groups, m)
		}
	}
}

// mHosts is RDDSuite's preference pattern: record i (1-based) prefers
// m(i mod 6), m(i+1 mod 6), m(i+2 mod 6).
func mHosts(i int) []string {
	var hs []string
	for j := i; j <= i+2; j++ {
		hs = append(hs, fmt.Sprintf("m%d", j%6))
	}
	return hs
}

// RDDSuite "coalesced RDDs with locality": three parents preferring
// {a,c}, {a,b,c}, {b} coalesced to 3 keep one group per host; nine
// parents over six hosts coalesce to 3 non-empty groups holding every
// parent; coalescing to 20 keeps the 9.
func TestCoalesceWithLocality(t *testing.T) {
	b := graphBuilder()
	data3 := ParallelizeWithHosts(b, []int{1, 2, 3}, [][]string{{"a", "c"}, {"a", "b", "c"}, {"b"}})
	_, hosts := groupsOf(Coalesce(data3, 3))
	slices.Sort(hosts)
	if !slices.Equal(hosts, []string{"a", "b", "c"}) {
		t.Fatalf("coalesce(3) of parents on {a,c} {a,b,c} {b}: preferred hosts %v, want [a b c] (locality preferences dropped)", hosts)
	}
	xs, prefs := make([]int, 9), make([][]string, 9)
	for i := range xs {
		xs[i], prefs[i] = i+1, mHosts(i+1)
	}
	data := ParallelizeWithHosts(b, xs, prefs)
	groups, hosts := groupsOf(Coalesce(data, 3))
	if len(groups) != 3 {
		t.Fatalf("coalesce(3) of 9 gave %d partitions, want 3", len(groups))
	}
	checkAllOnce(t, groups, 9)
	for i, g := range groups {
		if len(g) == 0 || hosts[i] == "" {
			t.Fatalf("group %d = %v on %q: want a non-empty group with a host", i, g, hosts[i])
		}
	}
	if c := Coalesce(data, 20); c.Partitions() != 9 {
		t.Fatalf("coalesce(20) of 9 partitions gave %d, want 9", c.Partitions())
	}
}

// RDDSuite "coalesced RDDs with partial locality": parents 1..4 without
// preferences, 5..9 with; coalesce(3) gives 3 non-empty groups holding
// every parent.
func TestCoalesceWithPartialLocality(t *testing.T) {
	b := graphBuilder()
	xs, prefs := make([]int, 9), make([][]string, 9)
	for i := range xs {
		xs[i] = i + 1
		if i+1 > 4 {
			prefs[i] = mHosts(i + 1)
		}
	}
	groups, _ := groupsOf(Coalesce(ParallelizeWithHosts(b, xs, prefs), 3))
	if len(groups) != 3 {
		t.Fatalf("coalesce(3) gave %d partitions, want 3", len(groups))
	}
	checkAllOnce(t, groups, 9)
	for i, g := range groups {
		if len(g) == 0 {
			t.Fatalf("group %d is empty: %v", i, groups)
		}
	}
}

// randomHosts gives n parents three hosts each drawn from m1..m50.
func randomHosts(seed uint64, n int) [][]string {
	r := rand.New(rand.NewPCG(seed, 0))
	prefs := make([][]string, n)
	for i := range prefs {
		for range 3 {
			prefs[i] = append(prefs[i], fmt.Sprintf("m%d", 1+r.IntN(50)))
		}
	}
	return prefs
}

// localAndBalanced checks RDDSuite's large-scale bounds: every group has
// at least 90% of its parents preferring its host, and 100 ± 20 parents.
func localAndBalanced(t *testing.T, what string, groups [][]int, hosts []string, prefs [][]string) {
	t.Helper()
	minLocal, maxImbalance := 1.0, 0
	for i, g := range groups {
		local := 0
		for _, p := range g {
			if slices.Contains(prefs[p], hosts[i]) {
				local++
			}
		}
		minLocal = math.Min(minLocal, float64(local)/float64(len(g)))
		maxImbalance = max(maxImbalance, abs(100-len(g)))
	}
	if minLocal < 0.90 {
		t.Errorf("%s: least local group has %.0f%% of its parents on its host, want ≥ 90%%", what, minLocal*100)
	}
	if maxImbalance > 20 {
		t.Errorf("%s: a group is %d parents from 100, want ≤ 20", what, maxImbalance)
	}
}

func abs(x int) int { return max(x, -x) }

// RDDSuite "coalesced RDDs with locality, large scale (10K partitions)":
// 10,000 parents on 3 random hosts of 50 coalesced to 100 give groups
// over 90% local with 100 ± 20 parents — also for a dataset derived from
// them (preferences through narrow operations).
func TestCoalesceWithLocalityLargeScale(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		b := graphBuilder()
		prefs := randomHosts(seed, 10000)
		xs := make([]int, len(prefs))
		for i := range xs {
			xs[i] = i + 1
		}
		data := ParallelizeWithHosts(b, xs, prefs)
		groups, hosts := groupsOf(Coalesce(data, 100))
		checkAllOnce(t, groups, 10000)
		localAndBalanced(t, fmt.Sprintf("seed %d", seed), groups, hosts, prefs)
		derived := Map(data, func(x int) int { return 2 * x })
		groups, hosts = groupsOf(Coalesce(derived, 100))
		localAndBalanced(t, fmt.Sprintf("seed %d, derived", seed), groups, hosts, prefs)
	}
}

// RDDSuite "coalesced RDDs with partial locality, large scale": half of
// 10,000 parents with hosts, half without; coalescing to 10,000 keeps
// 10,000 partitions, to 100 gives 100 of 100 ± 20 parents.
func TestCoalesceWithPartialLocalityLargeScale(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		b := graphBuilder()
		prefs := append(randomHosts(seed, 5000), make([][]string, 5000)...)
		xs := make([]int, len(prefs))
		data := ParallelizeWithHosts(b, xs, prefs)
		if c := Coalesce(data, 10000); c.Partitions() != 10000 {
			t.Fatalf("coalesce(10000) gave %d partitions", c.Partitions())
		}
		groups, _ := groupsOf(Coalesce(data, 100))
		if len(groups) != 100 {
			t.Fatalf("coalesce(100) gave %d partitions", len(groups))
		}
		checkAllOnce(t, groups, 10000)
		for _, g := range groups {
			if abs(100-len(g)) > 20 {
				t.Fatalf("seed %d: a group has %d parents, want 100 ± 20", seed, len(g))
			}
		}
	}
}

// RDDSuite "coalesced RDDs with locality, fail first pass" (SPARK-2412):
// 1,000 parents, the first 492 (the coupon bound for 50 groups) on m1 and
// the rest on m2, coalesced to 50 give 50 partitions.
func TestCoalesceWithLocalityFailFirstPass(t *testing.T) {
	b := graphBuilder()
	xs, prefs := make([]int, 1000), make([][]string, 1000)
	for i := range xs {
		prefs[i] = []string{"m1"}
		if i+1 > 492 {
			prefs[i] = []string{"m2"}
		}
	}
	groups, _ := groupsOf(Coalesce(ParallelizeWithHosts(b, xs, prefs), 50))
	if len(groups) != 50 {
		t.Fatalf("coalesce(50) gave %d partitions, want 50", len(groups))
	}
	checkAllOnce(t, groups, 1000)
}
