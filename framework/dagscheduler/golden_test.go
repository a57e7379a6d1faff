package dagscheduler

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/golden"
)

// The golden scenario scripts in testdata/*.txt drive a DAG core step by
// step; lines starting with "> " after a step list every event that step
// must produce, in order. See testdata/README.txt for the syntax. Run with
// -rewrite to regenerate the expected lines (then review the diff).

var rewrite = flag.Bool("rewrite", false, "rewrite golden files with the actual output")

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestGolden(t *testing.T) {
	golden.RunDir(t, "testdata", *rewrite, func(t *testing.T, file string) func(golden.Step) []string {
		r := newGoldenRunner(t, file)
		return func(s golden.Step) []string {
			r.cur = s
			return r.run(s.Tokens)
		}
	})
}

func (r *goldenRunner) fatalf(format string, a ...any) {
	r.t.Fatalf("%s: %s", r.cur, fmt.Sprintf(format, a...))
}

func kv(tokens []string) (map[string][]string, []string) { return golden.KV(tokens) }

func first(m map[string][]string, k, def string) string { return golden.First(m, k, def) }
