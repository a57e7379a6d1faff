package shuffle_test

import (
	"slices"
	"testing"

	"github.com/flint-mesos/flint/shuffle"
)

// The first commit of a map output wins within a generation (attempts of
// one run write the same records); a later generation of an
// indeterminate stage replaces it, an earlier one does not.
func TestCommitKeepsTheFirstOfAGenerationAndReplacesOlderOnes(t *testing.T) {
	s := openStore(t)
	recs := func(tag string) []rec {
		return []rec{{"a", tag}, {"b", tag}}
	}
	commit := func(gen int, tag string) {
		t.Helper()
		writeAll(t, shuffle.Config{Store: s, ShuffleID: 3, MapIndex: 1, Partitions: 1, Order: shuffle.ByteOrder,
			Memory: shuffle.NewMemory(1 << 20).Task(), Generation: gen}, recs(tag))
	}
	steps := []struct {
		gen  int
		tag  string
		want string
	}{
		{0, "determinate-1", "determinate-1"},
		{0, "determinate-2", "determinate-1"}, // a retry of a determinate stage: first wins
		{1, "run-1", "run-1"},                 // an indeterminate stage's first run replaces an output without a generation
		{1, "run-1-retry", "run-1"},           // same run: first wins
		{2, "run-2", "run-2"},                 // rerun after a rollback: replaces
		{1, "late-run-1", "run-2"},            // a late attempt of the old run does not come back
	}
	for i, st := range steps {
		commit(st.gen, st.tag)
		if got, want := readBlock(t, s, 3, 1, 0), recs(st.want); !slices.Equal(got, want) {
			t.Fatalf("step %d (generation %d, %s): the committed output holds %v, want %v", i, st.gen, st.tag, got, want)
		}
	}
}
