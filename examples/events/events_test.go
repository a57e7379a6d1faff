package events_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/events"
	"github.com/flint-mesos/flint/examples/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The Parquet output holds, per user and kind, the count and sum a map computes from the
// same lines; malformed lines are dropped and counted.
func TestEventsTotalsMatchAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	type k struct{ user, kind string }
	want := map[k]events.Total{}
	var lines []string
	for i := range 5000 {
		if i%400 == 7 {
			lines = append(lines, `{"user": "u1", "kind": "click", "amount": "lots"}`, `not json`)
			continue
		}
		u, kd, amt := fmt.Sprintf("u%d", r.IntN(20)), []string{"click", "view", "buy"}[r.IntN(3)], float64(r.IntN(400))/4
		lines = append(lines, fmt.Sprintf(`{"user": %q, "kind": %q, "amount": %g}`, u, kd, amt))
		t := want[k{u, kd}]
		t.User, t.Kind, t.Events, t.Amount = u, kd, t.Events+1, t.Amount+amt
		want[k{u, kd}] = t
	}
	in := filepath.Join(dir, "events.json")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "totals")
	fc := exampletest.Local(t, "flint.files.maxPartitionBytes", "20000")
	res, err := events.Run(context.Background(), fc, events.Options{Input: in, Output: out, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Malformed != 26 || res.Events != int64(len(lines))-26 || res.Totals != int64(len(want)) {
		t.Fatalf("result %+v, want 26 malformed, %d events, %d totals", res, len(lines)-26, len(want))
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "part-*.parquet"))
	if len(files) != 3 {
		t.Fatalf("part files %v, want 3", files)
	}
	var got []events.Total
	for _, f := range files {
		rows, err := parquet.ReadFile[events.Total](f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rows...)
	}
	var wantRows []events.Total
	for _, v := range want {
		wantRows = append(wantRows, v)
	}
	order := func(a, b events.Total) int { return strings.Compare(a.User+"/"+a.Kind, b.User+"/"+b.Kind) }
	slices.SortFunc(got, order)
	slices.SortFunc(wantRows, order)
	if !slices.Equal(got, wantRows) {
		t.Fatalf("got %d totals, want %d (first got %+v, want %+v)", len(got), len(wantRows), got[0], wantRows[0])
	}
}
