package jsonlines

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/task"
)

// Options say how to read JSON lines. The zero value fails at the first malformed line.
type Options struct {
	// Mode is what to do with a malformed line (formats.FailFast by default).
	Mode formats.Mode
	// Dropped counts the lines DropMalformed skips (may be nil).
	Dropped *dataset.Accumulator[int64]
}

// Read is the objects of the JSON lines files at paths as T, one per non-blank line: any
// storage scheme, files, directories, prefixes and globs as dataset.TextFile takes them,
// compressed files decompressed.
func Read[T any](b *dataset.Builder, o Options, paths ...string) dataset.Dataset[T] {
	pol, err := formats.NewPolicy[T]("jsonlines", o.Mode, o.Dropped)
	return dataset.ReadFiles(b, dataset.FileSource[T, dataset.FileSplit]{
		Op: "jsonLinesFile",
		Plan: func(in dataset.FilePlanInput) ([]dataset.FileSplit, error) {
			if err != nil {
				return nil, err
			}
			return in.LineSplits(), nil
		},
		Hosts: func(s dataset.FileSplit) []string { return s.Hosts },
		Read: func(ctx context.Context, s dataset.FileSplit, emit func([]T) error) error {
			return readSplit(ctx, s, pol, emit)
		},
	}, paths...)
}

func readSplit[T any](ctx context.Context, s dataset.FileSplit, pol formats.Policy, emit func([]T) error) error {
	parse := func(l formats.Line, x *T) (bool, error) {
		text := bytes.TrimSpace(l.Text)
		if len(text) == 0 {
			return true, nil
		}
		err := decode(text, x)
		pol.Clear(x)
		return false, err
	}
	return formats.ReadRecords(ctx, "jsonlines", s.Parts, pol,
		func(int, dataset.FilePart) (formats.ParseLine[T], bool) { return parse, true }, emit)
}

// decode reads one JSON object into x: any other JSON value (null included, which
// encoding/json would take as "no change") is an error.
func decode(text []byte, x any) error {
	if text[0] != '{' {
		var v any
		if err := json.Unmarshal(text, &v); err != nil {
			return err
		}
		return fmt.Errorf("a JSON %s, not an object", kind(v))
	}
	return json.Unmarshal(text, x)
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "value"
}

// Save writes ds as JSON lines under dir, one object per line and one part file per
// partition (part-00000.json, …; .json.gz and so on with dataset.Compress), through the
// output commit protocol of dataset.SaveAsTextFile (dataset.Overwrite replaces an existing
// output). Records are encoded by encoding/json.
func Save[T any](ds dataset.Dataset[T], dir string, opts ...dataset.SaveOption) error {
	return dataset.SaveFiles(ds, dataset.FileSink[T]{Op: "saveAsJSONLines", Ext: ".json", Write: writePart[T]}, dir, opts...)
}

func writePart[T any](w io.Writer, part func(func([]T) error) error) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := part(func(xs []T) error {
		for i := range xs {
			if err := enc.Encode(&xs[i]); err != nil {
				return task.NotRetryable(fmt.Errorf("jsonlines: encode a record: %w", err))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
