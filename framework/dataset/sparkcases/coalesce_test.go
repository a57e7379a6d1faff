package sparkcases_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// coalesceOut is what the locality cases check: every record of the
// coalesce to 3, its partitions, and the partitions of the coalesce to 20.
type coalesceOut struct {
	All       []int
	To3, To20 [][]int
}

// coalesceJob coalesces 1..9, one record per partition, record i
// preferring hosts m(i mod 6)..m(i+2 mod 6) — all records when partial is
// false, those above 4 when true (RDDSuite's inputs).
var coalesceJob = dataset.JobResult("sparkcases.coalesceLocality", func(b *dataset.Builder, partial bool) (coalesceOut, error) {
	var o coalesceOut
	xs, hosts := make([]int, 9), make([][]string, 9)
	for i := range xs {
		xs[i] = i + 1
		if partial && i+1 <= 4 {
			continue
		}
		for j := i + 1; j <= i+3; j++ {
			hosts[i] = append(hosts[i], fmt.Sprintf("m%d", j%6))
		}
	}
	data := dataset.ParallelizeWithHosts(b, xs, hosts)
	c3 := dataset.Coalesce(data, 3)
	var err error
	if o.All, err = dataset.Collect(c3); err != nil {
		return o, err
	}
	if o.To3, err = dataset.Collect(dataset.Glom(c3)); err != nil {
		return o, err
	}
	o.To20, err = dataset.Collect(dataset.Glom(dataset.Coalesce(data, 20)))
	return o, err
})

// RDDSuite "coalesced RDDs with locality" and "coalesced RDDs with
// partial locality": nine partitions with host preferences (all, or
// only 5..9) coalesced to 3 lose no record and give 3 non-empty
// partitions; coalesced to 20 they stay 9 partitions of one record.
func TestCoalescedWithLocality(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		for _, partial := range []bool{false, true} {
			o, err := coalesceJob.Run(t.Context(), fc, partial)
			if err != nil {
				t.Fatal(err)
			}
			want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
			slices.Sort(o.All)
			if !slices.Equal(o.All, want) {
				t.Errorf("partial=%v: coalesce(3) records %v, want %v (data lost in coalescing)", partial, o.All, want)
			}
			if len(o.To3) != 3 {
				t.Errorf("partial=%v: coalesce(3) gave %d partitions %v, want 3", partial, len(o.To3), o.To3)
			}
			for _, p := range o.To3 {
				if len(p) == 0 {
					t.Errorf("partial=%v: coalesce(3) has an empty partition: %v", partial, o.To3)
				}
			}
			var singles [][]int
			for _, p := range o.To20 {
				singles = append(singles, p)
			}
			slices.SortFunc(singles, func(a, b []int) int { return slices.Compare(a, b) })
			for i, p := range singles {
				if !slices.Equal(p, []int{i + 1}) || len(singles) != 9 {
					t.Fatalf("partial=%v: coalesce(20) of 9 partitions gave %v, want the 9 as they were", partial, o.To20)
				}
			}
		}
	})
}
