// Package pagerank is Spark's classic PageRank over a src<TAB>dst edge
// list: the links of each page are grouped once and cached on the
// executors, and every iteration joins them with the current ranks,
// spreads each page's rank over its links and sums the contributions
// (rank = 0.15 + 0.85 × contributions). As in Spark's example, duplicate
// edges count once and a page without inbound links drops out after the
// first iteration.
package pagerank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/examples/exampleutil"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// Usage documents the example's arguments.
const Usage = "pagerank --input EDGES --iterations N [--output DIR] [--partitions N]"

// Options are a PageRank's inputs.
type Options struct {
	Input, Output string
	Iterations    int
	Partitions    int
	Top           int
}

// Rank is a page and its rank.
type Rank struct {
	Page string
	Rank float64
}

// Before orders ranks: highest first, then by page.
func Before(a, b Rank) bool {
	if a.Rank != b.Rank {
		return a.Rank > b.Rank
	}
	return a.Page < b.Page
}

// ParseEdge splits "src<TAB>dst" (or src and dst separated by spaces).
func ParseEdge(l string) (dataset.KV[string, string], bool) {
	f := strings.Fields(l)
	if len(f) < 2 {
		return dataset.KV[string, string]{}, false
	}
	return dataset.KV[string, string]{Key: f[0], Value: f[1]}, true
}

// Job is PageRank as a dataset job; it returns every rank.
var Job = dataset.JobResult("examples.pagerank", func(b *dataset.Builder, o Options) ([]Rank, error) {
	edges := dataset.FlatMap(dataset.TextFile(b, o.Input), func(l string, yield func(dataset.KV[string, string])) {
		if e, ok := ParseEdge(l); ok {
			yield(e)
		}
	})
	links := dataset.Cache(dataset.GroupByKey(dataset.Distinct(edges, o.Partitions), o.Partitions))
	ranks := dataset.MapValues(links, func([]string) float64 { return 1 })
	for range o.Iterations {
		contribs := dataset.FlatMap(dataset.Join(links, ranks, o.Partitions),
			func(kv dataset.KV[string, dataset.Pair[[]string, float64]], yield func(dataset.KV[string, float64])) {
				urls := kv.Value.Left
				for _, u := range urls {
					yield(dataset.KV[string, float64]{Key: u, Value: kv.Value.Right / float64(len(urls))})
				}
			})
		sums := dataset.ReduceByKey(contribs, func(x, y float64) float64 { return x + y }, o.Partitions)
		ranks = dataset.MapValues(sums, func(s float64) float64 { return 0.15 + 0.85*s })
	}
	if o.Output != "" {
		lines := dataset.Map(ranks, func(kv dataset.KV[string, float64]) string {
			return kv.Key + "\t" + strconv.FormatFloat(kv.Value, 'g', -1, 64)
		})
		if err := dataset.SaveAsTextFile(lines, o.Output); err != nil {
			return nil, err
		}
	}
	all, err := dataset.Collect(ranks)
	out := make([]Rank, len(all))
	for i, kv := range all {
		out[i] = Rank{Page: kv.Key, Rank: kv.Value}
	}
	sort.Slice(out, func(i, j int) bool { return Before(out[i], out[j]) })
	return out, err
})

// Run computes the ranks on fc, highest first.
func Run(ctx context.Context, fc *framework.Context, o Options) ([]Rank, error) {
	return Job.Run(ctx, fc, o)
}

func parseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("pagerank", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.Input, "input", "", "edge list: src<TAB>dst lines")
	fs.IntVar(&o.Iterations, "iterations", 10, "iterations")
	fs.StringVar(&o.Output, "output", "", "write every page<TAB>rank line as part files under this directory")
	fs.IntVar(&o.Partitions, "partitions", 0, "partitions (default flint.default.parallelism)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("pagerank: %w; usage: %s", err, Usage)
	}
	switch {
	case o.Input == "" || fs.NArg() > 0:
		return o, fmt.Errorf("pagerank: --input is required, and nothing else; usage: %s", Usage)
	case o.Iterations < 1 || o.Partitions < 0:
		return o, errors.New("pagerank: --iterations must be positive and --partitions not negative")
	}
	return o, nil
}

// Check validates the arguments before any cluster starts.
func Check(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	return exampleutil.CheckInputs("pagerank", []string{o.Input}, o.Output)
}

// Main is the driver: it prints the top 10 pages.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	ranks, err := Run(ctx, fc, o)
	if err != nil {
		return err
	}
	for i, r := range ranks {
		if i == 10 {
			break
		}
		fmt.Fprintf(os.Stdout, "%-20s %.6f\n", r.Page, r.Rank)
	}
	return nil
}
