package dagscheduler

import (
	"slices"
	"testing"
)

// The core decides which reduce partitions a task reads, through every
// narrow dependency (Spark's NarrowDependency.getParents): a coalesce
// reads its groups, a union's range maps to its parents' partitions, and
// a partition reached twice is read once.
func TestShuffleReadsFollowNarrowDependencies(t *testing.T) {
	spec := JobSpec{Name: "reads", Final: "c", Nodes: []Node{
		{ID: "m1", Partitions: 2}, {ID: "m2", Partitions: 2},
		{ID: "r1", Partitions: 4, Deps: []Dep{{Kind: Shuffle, Parent: "m1", ShuffleID: 1}}},
		{ID: "r2", Partitions: 2, Deps: []Dep{{Kind: Shuffle, Parent: "m2", ShuffleID: 2}}},
		// u: r1's 4 partitions, then r2's 2
		{ID: "u", Partitions: 6, Deps: []Dep{{Kind: Range, Parent: "r1", Offset: 0}, {Kind: Range, Parent: "r2", Offset: 4}}},
		// c: groups of u's partitions; group 2 names partition 5 twice
		{ID: "c", Partitions: 3, Deps: []Dep{{Kind: Groups, Parent: "u", Groups: [][]int{{0, 1}, {3, 4}, {5, 5}}}}},
	}}
	nodes, _, err := buildGraph(&spec)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]ShuffleRead{
		{{1, 0}, {1, 1}},
		{{1, 3}, {2, 0}},
		{{2, 1}},
	}
	ts := &TaskSet{Partitions: []int{0, 1, 2}, Reads: []int{1, 2}, node: nodes["c"]}
	for i, w := range want {
		if got := ts.ShuffleReads(i); !slices.Equal(got, w) {
			t.Errorf("partition %d reads %v, want %v", i, got, w)
		}
	}
	// a set built outside the core reads partition p of each shuffle
	plain := &TaskSet{Partitions: []int{1}, Reads: []int{1, 2}}
	if got := plain.ShuffleReads(0); !slices.Equal(got, []ShuffleRead{{1, 1}, {2, 1}}) {
		t.Errorf("set without lineage reads %v", got)
	}
}
