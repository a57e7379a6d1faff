// Package events reads events from JSON lines files, totals them per user and kind on the
// executors, and writes the totals as Parquet: the shape of a typical ported Spark job
// (read events, aggregate, write Parquet), on any storage scheme (local paths, s3://).
// Each input line is an object {"user": …, "kind": …, "amount": …}; a line that is not one
// (broken JSON, a value of the wrong type) is dropped and counted. The output holds one row
// per (user, kind): the number of events and the sum of their amounts, in zstd-compressed
// Parquet files.
//
// --input-format reads the events from CSV with a header (user,kind,amount; malformed rows
// dropped and counted as lines are) or Parquet instead, and --output-format writes the totals
// as CSV with a header or JSON lines instead: every format read and written by one job (the
// Docker end-to-end suite runs it against an S3 server, e2e/s3_test.go).
package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/examples/exampleutil"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/formats/csvfile"
	"github.com/flint-mesos/flint/framework/formats/jsonlines"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
)

// Usage documents the example's arguments.
const Usage = "events --input PATH --output DIR [--partitions N] [--input-format json|csv|parquet] [--output-format parquet|csv|json]"

// Event is one input line.
type Event struct {
	User   string  `json:"user" csv:"user" parquet:"user"`
	Kind   string  `json:"kind" csv:"kind" parquet:"kind"`
	Amount float64 `json:"amount" csv:"amount" parquet:"amount"`
}

// Total is one output row.
type Total struct {
	User   string  `parquet:"user" json:"user" csv:"user"`
	Kind   string  `parquet:"kind" json:"kind" csv:"kind"`
	Events int64   `parquet:"events" json:"events" csv:"events"`
	Amount float64 `parquet:"amount" json:"amount" csv:"amount"`
}

// Options are the job's inputs.
type Options struct {
	Input, Output string
	Partitions    int
	// InputFormat is json (the default), csv or parquet; OutputFormat is parquet (the
	// default), csv or json.
	InputFormat, OutputFormat string
}

// Result is what the job reports.
type Result struct {
	Events, Malformed, Totals int64
}

type key struct{ User, Kind string }

// Job is the aggregation as a dataset job.
var Job = dataset.JobResult("examples.events", func(b *dataset.Builder, o Options) (Result, error) {
	malformed := dataset.Counter(b, "malformed event lines")
	var in dataset.Dataset[Event]
	switch o.InputFormat {
	case "", "json":
		in = jsonlines.Read[Event](b, jsonlines.Options{Mode: formats.DropMalformed, Dropped: malformed}, o.Input)
	case "csv":
		in = csvfile.Read[Event](b, csvfile.Options{Header: true, Mode: formats.DropMalformed, Dropped: malformed}, o.Input)
	case "parquet":
		in = parquetfile.Read[Event](b, parquetfile.Options{}, o.Input)
	}
	events := dataset.Cache(in)
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
	switch o.OutputFormat {
	case "", "parquet":
		err = parquetfile.Save(totals, o.Output, parquetfile.SaveOptions{Compression: "zstd"})
	case "csv":
		err = csvfile.Save(totals, o.Output, csvfile.Options{Header: true})
	case "json":
		err = jsonlines.Save(totals, o.Output)
	}
	if err != nil {
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
	fs.StringVar(&o.InputFormat, "input-format", "json", "json (JSON lines), csv (with a header) or parquet")
	fs.StringVar(&o.OutputFormat, "output-format", "parquet", "parquet, csv (with a header) or json (JSON lines)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("events: %w; usage: %s", err, Usage)
	}
	switch {
	case o.Input == "" || o.Output == "" || fs.NArg() > 0:
		return o, fmt.Errorf("events: --input and --output are required, and nothing else; usage: %s", Usage)
	case o.Partitions < 0:
		return o, errors.New("events: --partitions must not be negative")
	case !slices.Contains([]string{"json", "csv", "parquet"}, o.InputFormat):
		return o, fmt.Errorf("events: --input-format %q: want json, csv or parquet", o.InputFormat)
	case !slices.Contains([]string{"json", "csv", "parquet"}, o.OutputFormat):
		return o, fmt.Errorf("events: --output-format %q: want parquet, csv or json", o.OutputFormat)
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
