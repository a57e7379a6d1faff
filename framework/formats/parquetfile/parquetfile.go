package parquetfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/task"
)

// Options say how to read Parquet.
type Options struct {
	// Filter, when set, keeps only the rows whose column lies in a range, skipping the row
	// groups whose statistics show no such row.
	Filter *Filter
}

// Filter keeps the rows whose top-level column Column is in [Min, Max] (a nil bound is
// open). The bounds have the Go type of T's field for the column (int64, float64, string,
// …).
type Filter struct {
	Column   string
	Min, Max any
}

// mayHold reports whether a column chunk's statistics allow a value in the range (true
// when it has none).
func (f *Filter) mayHold(c parquet.ColumnChunk) bool {
	b, ok := c.(interface {
		Bounds() (min, max parquet.Value, ok bool)
	})
	if !ok {
		return true
	}
	lo, hi, ok := b.Bounds()
	if !ok {
		return true
	}
	t := c.Type()
	if f.Min != nil && t.Compare(hi, parquet.ValueOf(f.Min)) < 0 {
		return false
	}
	if f.Max != nil && t.Compare(lo, parquet.ValueOf(f.Max)) > 0 {
		return false
	}
	return true
}

// batchSize is how many rows a task reads and emits at a time.
const batchSize = 1024

// Read is the rows of the Parquet files at paths as T (any storage scheme; files,
// directories, prefixes and globs as dataset.TextFile takes them). T's fields are columns
// by parquet-go's rules (`parquet:"name"` tags, else the field's name). See the package
// documentation for planning, projection and filtering.
func Read[T any](b *dataset.Builder, o Options, paths ...string) dataset.Dataset[T] {
	schema := parquet.SchemaOf(new(T))
	keep, err := rowFilter[T](o.Filter, schema)
	return dataset.ReadFiles(b, dataset.FileSource[T, split]{
		Op: "parquetFile",
		Plan: func(in dataset.FilePlanInput) ([]split, error) {
			if err != nil {
				return nil, err
			}
			return plan(in, schema, o.Filter)
		},
		Hosts: func(s split) []string { return dataset.FileHosts(s.File.Path) },
		Read: func(ctx context.Context, s split, emit func([]T) error) error {
			return readSplit(ctx, s, keep, emit)
		},
	}, paths...)
}

// rowFilter is the row test of f on T (nil: every row).
func rowFilter[T any](f *Filter, schema *parquet.Schema) (func(*T) bool, error) {
	if f == nil {
		return nil, nil
	}
	leaf, ok := schema.Lookup(f.Column)
	if !ok || leaf.Node == nil {
		return nil, fmt.Errorf("parquetfile: the filter's column %q is not a top-level column of %v (its columns: %s)", f.Column, reflect.TypeFor[T](), columnNames(schema))
	}
	field := -1
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		if fieldColumn(t.Field(i)) == f.Column {
			field = i
		}
	}
	if field < 0 {
		return nil, fmt.Errorf("parquetfile: no field of %v holds column %q", t, f.Column)
	}
	for _, bound := range []any{f.Min, f.Max} {
		if bound != nil && reflect.TypeOf(bound) != t.Field(field).Type {
			return nil, fmt.Errorf("parquetfile: the filter's bound %v is a %T, but column %q is a %v", bound, bound, f.Column, t.Field(field).Type)
		}
	}
	typ := leaf.Node.Type()
	lo, hi := f.Min, f.Max
	return func(x *T) bool {
		v := parquet.ValueOf(reflect.ValueOf(x).Elem().Field(field).Interface())
		return (lo == nil || typ.Compare(v, parquet.ValueOf(lo)) >= 0) && (hi == nil || typ.Compare(v, parquet.ValueOf(hi)) <= 0)
	}, nil
}

func fieldColumn(f reflect.StructField) string {
	name := f.Tag.Get("parquet")
	for i := 0; i < len(name); i++ {
		if name[i] == ',' {
			name = name[:i]
			break
		}
	}
	if name == "" {
		return f.Name
	}
	return name
}

// readSplit reads s's row groups, only T's columns, emitting the rows keep keeps.
func readSplit[T any](ctx context.Context, s split, keep func(*T) bool, emit func([]T) error) error {
	ra, err := openReaderAt(ctx, framework.TaskConfig(ctx), s.File)
	if err != nil {
		return fmt.Errorf("parquetfile: %w", err)
	}
	m := task.MetricsFrom(ctx)
	var rows int64
	defer func() { m.AddInput(ra.read.Load(), rows) }()
	pf, err := parquet.OpenFile(ra, s.File.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20))
	if err != nil {
		return fmt.Errorf("parquetfile: %s: %w", s.File.Path, err)
	}
	// One batch for the whole split: a batch is valid only during emit (the dataset
	// contract), so it is read into again — a fresh one per 1,024 rows cost allocation and GC.
	buf := make([]T, batchSize)
	for _, g := range s.RowGroups {
		if g >= len(pf.RowGroups()) {
			return task.NotRetryable(fmt.Errorf("parquetfile: %s has %d row groups, the plan reads group %d", s.File.Path, len(pf.RowGroups()), g))
		}
		r := parquet.NewGenericRowGroupReader[T](pf.RowGroups()[g])
		for {
			n, err := r.Read(buf)
			out := buf[:n]
			if keep != nil {
				out = out[:0]
				for i := range buf[:n] {
					if keep(&buf[i]) {
						out = append(out, buf[i])
					}
				}
			}
			rows += int64(n)
			if len(out) > 0 {
				if err := emit(out); err != nil {
					r.Close()
					return err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return fmt.Errorf("parquetfile: read %s row group %d: %w", s.File.Path, g, err)
			}
		}
		r.Close()
	}
	return nil
}
