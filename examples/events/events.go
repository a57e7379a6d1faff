// Package events reads events from JSON lines files, totals them per user and kind on the
// executors, and writes the totals as Parquet: the shape of a typical ported Spark job
// (read events, aggregate, write Parquet), on any storage scheme (local paths, s3://).
// Each input line is an object {"user": …, "kind": …, "amount": …}; a line that is not one
// (broken JSON, a value of the wrong type) is dropped and counted. The output holds one row
// per (user, kind): the number of events and the sum of their amounts, in zstd-compressed
// Parquet files.
package events

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
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/formats/jsonlines"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
)

// Usage documents the example's arguments.
const Usage = "events --input PATH --output DIR [--partitions N]"

// Event is one input line.
type Event struct {
	User   string  `json:"user"`
	Kind   string  `json:"kind"`
	Amount float64 `json:"amount"`
}

// Total is one output row.
type Total struct {
	User   string  `parquet:"user"`
	Kind   string  `parquet:"kind"`
	Events int64   `parquet:"events"`
	Amount float64 `parquet:"amount"`
}

// Options are the job's inputs.
type Options struct {
	Input, Output string
	Partitions    int
}

// Result is what the job reports.
type Result struct {
	Events, Malformed, Totals int64
}

type key struct{ User, Kind string }

// Job is the aggregation as a dataset job.
var Job = dataset.JobResult("examples.events", func(b *dataset.Builder, o Options) (Result, error) {
	malformed := dataset.Counter(b, "malformed event lines")
	events := dataset.Cache(jsonlines.Read[Event](b, jsonlines.Options{Mode: formats.DropMalformed, Dropped: malformed}, o.Input))
	n, err := dataset.Count(events)
	if err != nil {
		return Result{}, err
	}
	pairs := dataset.Map(events, func(e Event) dataset.KV[key, Total] {
		return dataset.KV[key, Total]{Key: key{e.User, e.Kind}, Value: Total{User: e.User, Kind: e.Kind, Events: 1, Amount: e.Amount}}
	})
	totals := dataset.Values(dataset.ReduceByKey(pairs, func(a, b Total) Total {
		a.Events += b.Events
		a.Amount += b.Amount
		return a
	}, o.Partitions))
	totals = dataset.Cache(totals)
	if err := parquetfile.Save(totals, o.Output, parquetfile.SaveOptions{Compression: "zstd"}); err != nil {
		return Result{}, err
	}
	k, err := dataset.Count(totals)
	return Result{Events: n, Malformed: malformed.Value(), Totals: k}, err
})

// Run aggregates on fc.
func Run(ctx context.Context, fc *framework.Context, o Options) (Result, error) {
	return Job.Run(ctx, fc, o)
}

func parseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("events", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.Input, "input", "", "JSON lines of events (a file, directory, glob or s3:// prefix)")
	fs.StringVar(&o.Output, "output", "", "output directory of Parquet files (must not exist)")
	fs.IntVar(&o.Partitions, "partitions", 0, "output files (default flint.default.parallelism)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("events: %w; usage: %s", err, Usage)
	}
	switch {
	case o.Input == "" || o.Output == "" || fs.NArg() > 0:
		return o, fmt.Errorf("events: --input and --output are required, and nothing else; usage: %s", Usage)
	case o.Partitions < 0:
		return o, errors.New("events: --partitions must not be negative")
	}
	return o, nil
}

// Check validates the arguments before any cluster starts.
func Check(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	return exampleutil.CheckInputs("events", []string{o.Input}, o.Output)
}

// Main is the driver.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	r, err := Run(ctx, fc, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%d events (%d malformed lines dropped): %d totals per user and kind written to %s\n", r.Events, r.Malformed, r.Totals, o.Output)
	return nil
}
