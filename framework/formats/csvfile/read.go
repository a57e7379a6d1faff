package csvfile

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
)

// Options say how to read (and write) CSV. The zero value reads comma-separated rows
// without a header, by position, failing at the first malformed row.
type Options struct {
	// Header: each file's first row names its columns, and T's fields are read from the
	// columns of their names (first exactly, then ignoring case). Without it T's fields are
	// read from the columns in their order.
	Header bool
	// Comma separates fields (0: ','; '\t' for TSV).
	Comma rune
	// Comment starts a line to skip (0: none).
	Comment rune
	// LazyQuotes lets a quote appear in an unquoted field (encoding/csv's LazyQuotes).
	LazyQuotes bool
	// Mode is what to do with a malformed row (formats.FailFast by default).
	Mode formats.Mode
	// Dropped counts the rows DropMalformed skips (may be nil).
	Dropped *dataset.Accumulator[int64]
}

func (o Options) comma() rune {
	if o.Comma == 0 {
		return ','
	}
	return o.Comma
}

// split is one task's input: line-aligned ranges and, reading by header, each part's
// file's header as the driver read it.
type split struct {
	dataset.FileSplit
	Headers [][]string
}

// Read is the rows of the CSV files at paths as T, one T per row: any storage scheme, files,
// directories, prefixes and globs as dataset.TextFile takes them, compressed files
// decompressed (.gz, .zst, .bz2, .xz). Splits are TextFile's: byte ranges aligned to lines,
// so a quoted field must not hold a line break (as Spark's CSV reader without multiLine).
//
// T is a struct; its exported fields are its columns, named by a `csv:"name"` tag or the
// field's name (`csv:"-"` skips one). A field is a string, bool, integer, float, time.Time
// (RFC 3339 or a date), an encoding.TextUnmarshaler, or a pointer to one (an empty value:
// nil). Reading by header, the driver reads each file's header when the job is planned and
// fails there, naming the file and the field, when a file lacks a column of T; a row must
// have as many fields as its file's header (by position: as T has columns). Malformed rows
// are handled by o.Mode (package formats).
func Read[T any](b *dataset.Builder, o Options, paths ...string) dataset.Dataset[T] {
	cols, err := columns(reflect.TypeFor[T]())
	pol, perr := formats.NewPolicy[T]("csvfile", o.Mode, o.Dropped)
	if err == nil {
		err = perr
	}
	return dataset.ReadFiles(b, dataset.FileSource[T, split]{
		Op: "csvFile",
		Plan: func(in dataset.FilePlanInput) ([]split, error) {
			if err != nil {
				return nil, err
			}
			return plan(in, o, cols)
		},
		Hosts: func(s split) []string { return s.Hosts },
		Read: func(ctx context.Context, s split, emit func([]T) error) error {
			return readSplit(ctx, s, o, cols, pol, emit)
		},
	}, paths...)
}

// plan makes TextFile's splits and, reading by header, reads every file's header, checking
// that it has T's columns.
func plan(in dataset.FilePlanInput, o Options, cols []column) ([]split, error) {
	var out []split
	for _, s := range in.LineSplits() {
		out = append(out, split{FileSplit: s})
	}
	if !o.Header {
		return out, nil
	}
	headers, err := readHeaders(in, o)
	if err != nil {
		return nil, err
	}
	for i := range out {
		for _, p := range out[i].Parts {
			h := headers[p.File.Path]
			if h != nil {
				if _, err := mapHeader(h, cols); err != nil {
					return nil, fmt.Errorf("csvfile: %s: %w", p.File.Path, err)
				}
			}
			out[i].Headers = append(out[i].Headers, h)
		}
	}
	return out, nil
}

// readHeaders reads each file's first row, eight files at a time.
func readHeaders(in dataset.FilePlanInput, o Options) (map[string][]string, error) {
	var (
		mu   sync.Mutex
		out  = map[string][]string{}
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 8)
	)
	for _, f := range in.Files {
		if f.Size == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			h, err := readHeader(in.Ctx, in.Config, dataset.FilePart{File: f, Start: 0, End: f.Size}, o)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("csvfile: read the header of %s: %w", f.Path, err))
			}
			out[f.Path] = h
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

var errStop = errors.New("stop")

// readHeader is the first row of p's file (nil when it has none).
func readHeader(ctx context.Context, cfg *config.Config, p dataset.FilePart, o Options) ([]string, error) {
	var h []string
	r := newLineParser(o)
	err := formats.ReadLines(ctx, cfg, p, func(l formats.Line) error {
		if r.comment(l.Text) {
			return nil
		}
		rec, err := r.parse(l.Text)
		if err != nil {
			n, _ := l.Number()
			return fmt.Errorf("line %d: %w", n, err)
		}
		h = append([]string(nil), rec...)
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return h, nil
}

// mapHeader is, for each column of T, its index in header.
func mapHeader(header []string, cols []column) ([]int, error) {
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, h := range header {
			if h == c.name {
				idx[i] = j
				break
			}
		}
		if idx[i] >= 0 {
			continue
		}
		for j, h := range header {
			if strings.EqualFold(h, c.name) {
				if idx[i] >= 0 {
					return nil, fmt.Errorf("columns %q and %q both match field %s ignoring case", header[idx[i]], h, c.name)
				}
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("no column %q for field of type %v (the header has %s)", c.name, c.typ, strings.Join(header, ", "))
		}
	}
	return idx, nil
}

// readSplit emits the rows of s's parts as T.
func readSplit[T any](ctx context.Context, s split, o Options, cols []column, pol formats.Policy, emit func([]T) error) error {
	r := newLineParser(o)
	return formats.ReadRecords(ctx, "csvfile", s.Parts, pol, func(i int, p dataset.FilePart) (formats.ParseLine[T], bool) {
		idx, want := identity(len(cols)), len(cols)
		if o.Header {
			if s.Headers[i] == nil {
				return nil, false // the file holds no row
			}
			idx, _ = mapHeader(s.Headers[i], cols)
			want = len(s.Headers[i])
		}
		skipHeader := o.Header && p.Start == 0
		return func(l formats.Line, x *T) (bool, error) {
			if r.comment(l.Text) {
				return true, nil
			}
			if skipHeader {
				skipHeader = false
				return true, nil
			}
			rec, err := r.parse(l.Text)
			if err == nil {
				err = fill(reflect.ValueOf(x).Elem(), rec, idx, want, cols)
			}
			return false, err
		}, true
	}, emit)
}

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// fill sets v's columns from rec (idx: each column's field index in rec); a row of another
// length than want is malformed. Every column is tried, so a Permissive row keeps what parsed.
func fill(v reflect.Value, rec []string, idx []int, want int, cols []column) error {
	if len(rec) != want {
		return fmt.Errorf("%d fields, want %d", len(rec), want)
	}
	var errs []error
	for i, c := range cols {
		if err := set(v.FieldByIndex(c.index), rec[idx[i]]); err != nil {
			errs = append(errs, fmt.Errorf("column %s: %w", c.name, err))
		}
	}
	return errors.Join(errs...)
}

// lineParser parses one line at a time with an encoding/csv Reader it feeds.
type lineParser struct {
	feed     feeder
	r        *csv.Reader
	buf      []byte
	commentB byte
}

func newLineParser(o Options) *lineParser {
	p := &lineParser{}
	p.r = csv.NewReader(&p.feed)
	p.r.Comma = o.comma()
	p.r.LazyQuotes = o.LazyQuotes
	p.r.FieldsPerRecord = -1
	p.r.ReuseRecord = true
	if o.Comment != 0 && o.Comment < 0x80 {
		p.commentB = byte(o.Comment)
	}
	return p
}

func (p *lineParser) comment(line []byte) bool {
	return p.commentB != 0 && len(line) > 0 && line[0] == p.commentB
}

// parse is line's fields (valid until the next parse).
func (p *lineParser) parse(line []byte) ([]string, error) {
	p.buf = append(append(p.buf[:0], line...), '\n')
	p.feed.b = p.buf
	rec, err := p.r.Read()
	p.feed.b = nil
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, pe.Err // its line and column are the csv.Reader's, not the file's
	}
	if err == io.EOF {
		return nil, errors.New("no record")
	}
	return rec, err
}

// feeder gives the csv.Reader one line at a time.
type feeder struct{ b []byte }

func (f *feeder) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}
