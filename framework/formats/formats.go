package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/task"
)

// Mode is what a reader does with a malformed record.
type Mode int

const (
	// FailFast fails the job at the first malformed record, naming file and line.
	FailFast Mode = iota
	// DropMalformed skips malformed records, counting them.
	DropMalformed
	// Permissive keeps malformed records, marking them in T's *Corrupt field.
	Permissive
)

func (m Mode) String() string {
	switch m {
	case FailFast:
		return "FailFast"
	case DropMalformed:
		return "DropMalformed"
	case Permissive:
		return "Permissive"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Corrupt is where a malformed record is and why, held by T's field of type *Corrupt under
// Permissive (nil for a well-formed record). Readers never fill it from the data.
type Corrupt struct {
	File   string
	Line   int64
	Record string // the record's raw text
	Reason string
}

func (c *Corrupt) Error() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Reason) }

// ErrMalformed is wrapped by a FailFast reader's error for a malformed record.
var ErrMalformed = errors.New("malformed record")

// Malformed is the FailFast error for a record at file:line, not retryable.
func Malformed(format, file string, line int64, reason error) error {
	return task.NotRetryable(fmt.Errorf("%s: %s:%d: %w: %w (pass Mode DropMalformed to skip such records or Permissive to keep them marked)",
		format, file, line, ErrMalformed, reason))
}

// Policy is a reader's Mode with what it needs: the counter of dropped records and T's
// corrupt field.
type Policy struct {
	Mode    Mode
	Dropped *dataset.Accumulator[int64]
	corrupt []int // index of T's *Corrupt field
}

// NewPolicy checks mode against T on the driver: Permissive needs a *Corrupt field in T.
// dropped may be nil (DropMalformed then counts nowhere but still drops).
func NewPolicy[T any](format string, mode Mode, dropped *dataset.Accumulator[int64]) (Policy, error) {
	p := Policy{Mode: mode, Dropped: dropped}
	if mode < FailFast || mode > Permissive {
		return p, fmt.Errorf("%s: unknown %v", format, mode)
	}
	p.corrupt = CorruptField(reflect.TypeFor[T]())
	if mode == Permissive && p.corrupt == nil {
		return p, fmt.Errorf("%s: mode Permissive needs a field of type *formats.Corrupt in %v to mark malformed records (Go fields cannot be null); add one, or use FailFast or DropMalformed",
			format, reflect.TypeFor[T]())
	}
	return p, nil
}

// CorruptField is the index of t's field of type *Corrupt (nil when it has none).
func CorruptField(t reflect.Type) []int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	ct := reflect.TypeFor[*Corrupt]()
	for _, f := range reflect.VisibleFields(t) {
		if f.Type == ct && f.IsExported() {
			return f.Index
		}
	}
	return nil
}

// Clear sets *x's corrupt field to nil: readers never take it from the data.
func (p Policy) Clear(x any) {
	if p.corrupt != nil {
		reflect.ValueOf(x).Elem().FieldByIndex(p.corrupt).SetZero()
	}
}

// IsCorrupt reports whether i is the index of the corrupt field.
func (p Policy) IsCorrupt(i []int) bool { return p.corrupt != nil && slices.Equal(p.corrupt, i) }

// Handle applies the policy to a malformed record held in *x (as much of it as parsed):
// keep reports whether the reader emits *x; err is FailFast's error. line gives the
// record's line number (computed only when needed).
func (p Policy) Handle(format string, x any, file string, line func() (int64, error), raw string, reason error) (keep bool, err error) {
	switch p.Mode {
	case DropMalformed:
		if p.Dropped != nil {
			p.Dropped.Add(1)
		}
		return false, nil
	case Permissive:
		n, err := line()
		if err != nil {
			return false, err
		}
		reflect.ValueOf(x).Elem().FieldByIndex(p.corrupt).Set(reflect.ValueOf(&Corrupt{File: file, Line: n, Record: raw, Reason: reason.Error()}))
		return true, nil
	}
	n, err := line()
	if err != nil {
		return false, err
	}
	return false, Malformed(format, file, n, reason)
}

// Lines numbers the lines of a part of a file that starts at byte offset (decompressed) of
// the file: Line(rel) is the file's line number of the part's line rel (1-based). The
// lines before offset are counted, by reading the file from its start, the first time Line
// is called, so only a part reporting a malformed record pays for it.
type Lines struct {
	ctx    context.Context
	file   storage.FileInfo
	offset int64
	base   int64
	known  bool
}

// NewLines numbers the lines of f from byte offset on (ctx is the task's).
func NewLines(ctx context.Context, f storage.FileInfo, offset int64) *Lines {
	return &Lines{ctx: ctx, file: f, offset: offset, known: offset == 0}
}

// Line is the file's line number of the part's line rel (1-based).
func (l *Lines) Line(rel int64) (int64, error) {
	if !l.known {
		n, err := countLines(l.ctx, l.file, l.offset)
		if err != nil {
			return 0, err
		}
		l.base, l.known = n, true
	}
	return l.base + rel, nil
}

// countLines counts the '\n' in f's first n bytes (an uncompressed file).
func countLines(ctx context.Context, f storage.FileInfo, n int64) (int64, error) {
	fs, err := storage.For(ctx, framework.TaskConfig(ctx), f.Path)
	if err != nil {
		return 0, err
	}
	rc, err := fs.Open(ctx, f, 0, n)
	if err != nil {
		return 0, fmt.Errorf("count the lines of %s: %w", f.Path, err)
	}
	defer rc.Close()
	var count int64
	buf := make([]byte, 256<<10)
	for {
		k, err := rc.Read(buf)
		count += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return 0, fmt.Errorf("count the lines of %s: %w", f.Path, err)
		}
	}
}
