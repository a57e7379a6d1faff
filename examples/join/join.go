// Package join is the inner join of two tab-separated files on their
// key, on the executors: both sides are shuffled by a hash of the key and
// merged by key. Every input line is key<TAB>value (a line without a tab
// is a key with an empty value); every output line is
// key<TAB>left<TAB>right, one for every pair of a left and a right value
// of the same key, as SQL's inner join.
package join

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/examples/exampleutil"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// Usage documents the example's arguments.
const Usage = "join --left PATH --right PATH --output DIR [--partitions N]"

// Options are a join's inputs.
type Options struct {
	Left, Right, Output string
	Partitions          int
}

// ParseLine splits a line into its key and value at the first tab.
func ParseLine(l string) dataset.KV[string, string] {
	k, v, _ := strings.Cut(l, "\t")
	return dataset.KV[string, string]{Key: k, Value: v}
}

// Job is the join as a dataset job.
var Job = dataset.Job("examples.join", func(b *dataset.Builder, o Options) error {
	left := dataset.Map(dataset.TextFile(b, o.Left), ParseLine)
	right := dataset.Map(dataset.TextFile(b, o.Right), ParseLine)
	joined := dataset.Join(left, right, o.Partitions)
	lines := dataset.Map(joined, func(kv dataset.KV[string, dataset.Pair[string, string]]) string {
		return kv.Key + "\t" + kv.Value.Left + "\t" + kv.Value.Right
	})
	return dataset.SaveAsTextFile(lines, o.Output)
})

// Run joins on fc.
func Run(ctx context.Context, fc *framework.Context, o Options) error {
	_, err := Job.Run(ctx, fc, o)
	return err
}

func parseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("join", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.Left, "left", "", "left input (key<TAB>value lines)")
	fs.StringVar(&o.Right, "right", "", "right input (key<TAB>value lines)")
	fs.StringVar(&o.Output, "output", "", "output directory (must not exist)")
	fs.IntVar(&o.Partitions, "partitions", 0, "partitions of the join (default flint.default.parallelism)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("join: %w; usage: %s", err, Usage)
	}
	switch {
	case o.Left == "" || o.Right == "" || o.Output == "" || fs.NArg() > 0:
		return o, fmt.Errorf("join: --left, --right and --output are required, and nothing else; usage: %s", Usage)
	case o.Partitions < 0:
		return o, errors.New("join: --partitions must not be negative")
	}
	return o, nil
}

// Check validates the arguments before any cluster starts.
func Check(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	return exampleutil.CheckInputs("join", []string{o.Left, o.Right}, o.Output)
}

// Main is the driver.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	if err := Run(ctx, fc, o); err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "joined into %s\n", o.Output)
	return nil
}
