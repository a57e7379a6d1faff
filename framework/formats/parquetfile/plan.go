package parquetfile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/storage"
)

// split is one task's input: row groups of one file.
type split struct {
	File      storage.FileInfo
	RowGroups []int
}

// footer is what the driver learnt from one file's footer.
type footer struct {
	groups []int   // the row groups the filter keeps
	sizes  []int64 // their compressed sizes
	total  int
}

// plan reads every footer (eight at a time), checks the schemas and packs the row groups.
func plan(in dataset.FilePlanInput, schema *parquet.Schema, filter *Filter) ([]split, error) {
	footers := make([]footer, len(in.Files))
	errs := make([]error, len(in.Files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, f := range in.Files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			footers[i], errs[i] = readFooter(in.Ctx, in.Config, f, schema, filter)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []split
	for i, f := range in.Files {
		out = append(out, pack(f, footers[i], in.MaxPartitionBytes)...)
	}
	return out, nil
}

// pack cuts one file's row groups, in order, into splits of at most max bytes.
func pack(f storage.FileInfo, ft footer, max int64) []split {
	var out []split
	var cur split
	var size int64
	for i, g := range ft.groups {
		if len(cur.RowGroups) > 0 && size+ft.sizes[i] > max {
			out = append(out, cur)
			cur, size = split{}, 0
		}
		cur.File = f
		cur.RowGroups = append(cur.RowGroups, g)
		size += ft.sizes[i]
	}
	if len(cur.RowGroups) > 0 {
		out = append(out, cur)
	}
	return out
}

func readFooter(ctx context.Context, cfg *config.Config, f storage.FileInfo, schema *parquet.Schema, filter *Filter) (footer, error) {
	ra, err := openReaderAt(ctx, cfg, f)
	if err != nil {
		return footer{}, fmt.Errorf("parquetfile: %w", err)
	}
	pf, err := parquet.OpenFile(ra, f.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return footer{}, fmt.Errorf("parquetfile: %s: not a Parquet file or a corrupt one: %w", f.Path, err)
	}
	if err := checkSchema(f.Path, schema, pf.Schema()); err != nil {
		return footer{}, err
	}
	var fcol = -1
	if filter != nil {
		leaf, ok := pf.Schema().Lookup(filter.Column)
		if !ok || leaf.Node == nil {
			return footer{}, fmt.Errorf("parquetfile: %s: the filter's column %q is not in the file", f.Path, filter.Column)
		}
		fcol = leaf.ColumnIndex
	}
	ft := footer{total: len(pf.RowGroups())}
	for i, rg := range pf.RowGroups() {
		if rg.NumRows() == 0 {
			continue
		}
		if fcol >= 0 && !filter.mayHold(rg.ColumnChunks()[fcol]) {
			continue
		}
		var size int64
		for _, c := range pf.Metadata().RowGroups[i].Columns {
			size += c.MetaData.TotalCompressedSize
		}
		ft.groups = append(ft.groups, i)
		ft.sizes = append(ft.sizes, size)
	}
	return ft, nil
}

// checkSchema fails when file lacks a column of want or has it with another type, or
// optional where want's is required, at any depth of nested groups: one error a column (a
// plain column where T has a group, or the reverse, is one error at the group's path).
func checkSchema(path string, want, file *parquet.Schema) error {
	return errors.Join(checkFields(path, file, nil, want, file)...)
}

// checkFields compares the fields of want's group with those of got's, below prefix.
func checkFields(path string, file *parquet.Schema, prefix []string, want, got parquet.Node) []error {
	var errs []error
	for _, wf := range want.Fields() {
		col := append(slices.Clone(prefix), wf.Name())
		name := strings.Join(col, ".")
		gf := field(got, wf.Name())
		switch {
		case gf == nil:
			errs = append(errs, fmt.Errorf("parquetfile: %s has no column %q (T has it as %s; the file's columns: %s)",
				path, name, describe(wf), columnNames(file)))
		case wf.Leaf() != gf.Leaf() || gf.Optional() && !wf.Optional() || gf.Repeated() != wf.Repeated() ||
			wf.Leaf() && typeName(wf) != typeName(gf):
			errs = append(errs, fmt.Errorf("parquetfile: %s: column %q is %s in the file but %s in T", path, name, describe(gf), describe(wf)))
		case !wf.Leaf():
			errs = append(errs, checkFields(path, file, col, wf, gf)...)
		}
	}
	return errs
}

// field is n's field called name, or nil.
func field(n parquet.Node, name string) parquet.Field {
	for _, f := range n.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// typeName is n's physical type and its logical type, when that says more: a signed
// integer of the physical type's width (what Go's int32 and int64 get) is the physical type,
// as Spark and other writers leave it.
func typeName(n parquet.Node) string {
	t := n.Type()
	if lt := t.LogicalType(); lt != nil && !plainInt(t.Kind(), lt) {
		return fmt.Sprintf("%s (%s)", t.Kind(), lt)
	}
	return t.Kind().String()
}

func describe(n parquet.Node) string {
	var s string
	if n.Leaf() {
		s = typeName(n)
	} else {
		var names []string
		for _, f := range n.Fields() {
			names = append(names, f.Name())
		}
		s = "a group (" + strings.Join(names, ", ") + ")"
	}
	switch {
	case n.Repeated():
		return "repeated " + s
	case n.Optional():
		return "optional " + s
	}
	return s
}

func columnNames(s *parquet.Schema) string {
	var names []string
	for _, c := range s.Columns() {
		names = append(names, strings.Join(c, "."))
	}
	return strings.Join(names, ", ")
}

func plainInt(k parquet.Kind, lt *format.LogicalType) bool {
	i, ok := lt.Value.(*format.IntType)
	return ok && i != nil && i.IsSigned && (k == parquet.Int32 && i.BitWidth == 32 || k == parquet.Int64 && i.BitWidth == 64)
}
