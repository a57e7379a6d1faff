package dataset

import (
	"strings"
	"testing"
)

var tenOps = Job("bench.tenops", func(b *Builder, n int) error {
	xs := Range(b, 0, int64(n), 4)
	a := Map(xs, func(x int64) int64 { return x + 1 })
	c := Filter(a, func(x int64) bool { return x%3 != 0 })
	d := Map(c, func(x int64) string { return strings.Repeat("x", int(x%5)) })
	e := FlatMap(d, func(s string, yield func(string)) { yield(s); yield(s + "y") })
	f := KeyBy(e, func(s string) int { return len(s) })
	g := MapValues(f, func(s string) int { return len(s) })
	h := ReduceByKey(g, func(x, y int) int { return x + y }, 3)
	i := Map(h, func(kv KV[int, int]) int { return kv.Value })
	j := Filter(i, func(x int) bool { return x > 0 })
	_, err := Count(j)
	return err
})

// BenchmarkGraphRebuild is what a task pays when its executor rebuilds
// the graph of a 10-operator job (the body replayed up to the action,
// the fingerprint compared); executors cache the result per (run,
// action), so it is paid once per executor per action.
func BenchmarkGraphRebuild(b *testing.B) {
	d := newDriverBuilder("bench.tenops", mustArgs(b, 1000), nil, nil)
	d.replay = &replay{stopAt: 0} // capture the driver's graph without running
	tenOps.build(d, d.args)
	fp := fingerprint(d.replay.captured.nodes)
	w := &jobWire{Args: d.args, Values: d.values, Fingerprint: fp}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := replayBody(newState(), tenOps, w); err != nil {
			b.Fatal(err)
		}
	}
}

func mustArgs(b *testing.B, n int) []byte {
	enc, err := encodeArgs(n)
	if err != nil {
		b.Fatal(err)
	}
	return enc
}
