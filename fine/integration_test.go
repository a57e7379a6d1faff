package fine_test

import (
	"context"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
)

const envDriver = "FINE_TEST_DRIVER"

func TestExamplesInFineMode(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, r.fc, 16, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi estimate %f too far from π", est)
	}
	text := []byte("the quick brown fox jumps over the lazy dog the end\nthe fox\n")
	counts, err := wordcount.Run(ctx, r.fc, wordcount.Split("sample", text, 16))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, wc := range counts {
		got[wc.Word] = wc.Count
	}
	if got["the"] != 4 || got["fox"] != 2 || got["dog"] != 1 {
		t.Fatalf("word counts %v", got)
	}
	// One executor process per agent, reused by every task.
	if n := len(executors(r.mark)); n < 1 || n > 2 {
		t.Fatalf("%d executor processes, want one per agent used (1 or 2)", n)
	}
	if err := r.fc.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	checkNoOrphans(t, r.mark)
	if logs := r.logs.String(); regexp.MustCompile(`token=[0-9A-Za-z_-]{16}`).MatchString(logs) {
		t.Fatalf("the file server token was logged")
	}
}

func TestManyTasksAndLargeResults(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(300))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	// 3 MiB results exceed the inline limit: fetched from the executors.
	res, err := framework.Map(ctx, r.fc, big, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res {
		if len(b) != 3<<20 || b[0] != byte(i+1) || b[len(b)-1] != byte(i+1) {
			t.Fatalf("result %d: %d bytes starting %d", i, len(b), b[0])
		}
	}
}
