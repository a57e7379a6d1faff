package csvfile

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"reflect"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/task"
)

// Save writes ds as CSV files under dir, one part file per partition (part-00000.csv, …;
// .csv.gz and so on with dataset.Compress), through the output commit protocol of
// dataset.SaveAsTextFile (dataset.Overwrite replaces an existing output). With o.Header each
// file starts with a row of T's column names; o.Comma separates fields. Values are written
// as Read reads them back (a nil pointer as an empty field, times in RFC 3339).
func Save[T any](ds dataset.Dataset[T], dir string, o Options, opts ...dataset.SaveOption) error {
	cols, err := columns(reflect.TypeFor[T]())
	return dataset.SaveFiles(ds, dataset.FileSink[T]{
		Op:  "saveAsCSV",
		Ext: map[bool]string{true: ".tsv", false: ".csv"}[o.comma() == '\t'],
		Write: func(w io.Writer, part func(func([]T) error) error) error {
			if err != nil {
				return task.NotRetryable(err)
			}
			return writePart(w, o, cols, part)
		},
	}, dir, opts...)
}

func writePart[T any](w io.Writer, o Options, cols []column, part func(func([]T) error) error) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := csv.NewWriter(bw)
	cw.Comma = o.comma()
	rec := make([]string, len(cols))
	if o.Header {
		for i, c := range cols {
			rec[i] = c.name
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	err := part(func(xs []T) error {
		for i := range xs {
			v := reflect.ValueOf(&xs[i]).Elem()
			for j, c := range cols {
				s, err := format(v.FieldByIndex(c.index))
				if err != nil {
					return fmt.Errorf("csvfile: column %s: %w", c.name, err)
				}
				rec[j] = s
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
