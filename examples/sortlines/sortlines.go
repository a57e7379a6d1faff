// Package sortlines sorts the lines of its input by byte order on the
// executors: the lines are range-partitioned by a sample of the input
// and each partition is merged from sorted shuffle runs (spilled to disk
// when they do not fit in memory), so the concatenation of the output's
// part files in name order is exactly `LC_ALL=C sort` of the input.
package sortlines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/examples/exampleutil"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// Usage documents the example's arguments.
const Usage = "sort --input PATH... --output DIR [--partitions N]"

// Options are a sort's inputs.
type Options struct {
	Inputs     []string
	Output     string
	Partitions int // 0: as many as input splits
}

// Job is the sort as a dataset job.
var Job = dataset.Job("examples.sort", func(b *dataset.Builder, o Options) error {
	lines := dataset.TextFile(b, o.Inputs...)
	return dataset.SaveAsTextFile(dataset.Sort(lines, true, o.Partitions), o.Output)
})

// Run sorts on fc.
func Run(ctx context.Context, fc *framework.Context, o Options) error {
	_, err := Job.Run(ctx, fc, o)
	return err
}

func parseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("sort", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringArrayVar(&o.Inputs, "input", nil, "input file, directory or glob (repeatable)")
	fs.StringVar(&o.Output, "output", "", "output directory (must not exist)")
	fs.IntVar(&o.Partitions, "partitions", 0, "output partitions (default: one per input split)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("sort: %w; usage: %s", err, Usage)
	}
	o.Inputs = append(o.Inputs, fs.Args()...)
	switch {
	case len(o.Inputs) == 0 || o.Output == "":
		return o, fmt.Errorf("sort: --input and --output are required; usage: %s", Usage)
	case o.Partitions < 0:
		return o, errors.New("sort: --partitions must not be negative")
	}
	return o, nil
}

// Check validates the arguments before any cluster starts.
func Check(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	return exampleutil.CheckInputs("sort", o.Inputs, o.Output)
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
	fmt.Fprintf(os.Stdout, "sorted into %s\n", o.Output)
	return nil
}
