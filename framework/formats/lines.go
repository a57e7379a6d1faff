package formats

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/storage/codec"
	"github.com/flint-mesos/flint/framework/task"
)

// Line is one line of a file as ReadLines gives it.
type Line struct {
	// Text is the line without its '\n' and a '\r' before it; valid until the next line.
	Text []byte
	// File is the file's path.
	File string
	rel  int64
	nums *Lines
}

// Number is the line's number in the file (1-based); it may read the file's start (Lines).
func (l Line) Number() (int64, error) { return l.nums.Line(l.rel) }

// ReadLines calls fn with each non-empty line that starts in part p of a line-oriented file
// (dataset.OpenLineRange: decompressed, a split's first line the first to start in it) and
// counts the bytes read as the task's input. cfg nil: the task's configuration.
func ReadLines(ctx context.Context, cfg *config.Config, p dataset.FilePart, fn func(Line) error) error {
	lr, err := dataset.OpenLineRange(ctx, cfg, p)
	if err != nil {
		return err
	}
	defer lr.Close()
	m := task.MetricsFrom(ctx)
	l := Line{File: p.File.Path, nums: NewLines(ctx, p.File, lr.Offset)}
	pos := lr.Offset
	var read int64
	defer func() { m.AddInput(read, 0) }()
	for pos < lr.End {
		b, err := readLine(lr.R)
		pos += int64(len(b))
		read += int64(len(b))
		if len(b) > 0 {
			l.rel++
			l.Text = trimEOL(b)
			if len(l.Text) > 0 {
				if err := fn(l); err != nil {
					return checkStream(p, lr, err)
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return dataset.ReadFailed(p, err)
		}
	}
	return nil
}

// checkStream is err, a malformed record's, unless p is compressed and the rest of its
// stream fails to decompress: corrupt compressed data decodes to garbage before the codec's
// checksum catches it, and the codec's error — naming the file and the codec — is the one
// that says what is wrong.
func checkStream(p dataset.FilePart, lr *dataset.LineRange, err error) error {
	if c, ok := codec.ForPath(p.File.Path); !ok || c.NewReader == nil || !errors.Is(err, ErrMalformed) {
		return err
	}
	if _, derr := io.Copy(io.Discard, lr.R); derr != nil {
		return fmt.Errorf("%w (first seen as: %v)", dataset.ReadFailed(p, derr), err)
	}
	return err
}

// readLine is the next line with its '\n' (a longer line than the buffer is copied).
func readLine(r *bufio.Reader) ([]byte, error) {
	b, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return b, err
	}
	long := append([]byte(nil), b...)
	for err == bufio.ErrBufferFull {
		b, err = r.ReadSlice('\n')
		long = append(long, b...)
	}
	return long, err
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// BatchSize is how many records a line reader hands on at a time.
const BatchSize = 1024

// ParseLine fills *x from one line: skip reports a line that holds no record (blank, a
// comment, a header); err, a malformed record (as much of it as parsed stays in *x).
type ParseLine[T any] func(l Line, x *T) (skip bool, err error)

// ReadRecords is the read loop every line-oriented format shares (csvfile, jsonlines): for
// each part of a split, in order, parserFor gives the part's ParseLine (ok false: the part
// holds no record), every line of the part is parsed into a T, a malformed one goes through
// pol (named format in its errors), and the records are emitted BatchSize at a time and
// counted as the task's input records.
func ReadRecords[T any](ctx context.Context, format string, parts []dataset.FilePart, pol Policy,
	parserFor func(i int, p dataset.FilePart) (parse ParseLine[T], ok bool), emit func([]T) error) error {
	m := task.MetricsFrom(ctx)
	batch := make([]T, 0, BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		m.AddInput(0, int64(len(batch)))
		err := emit(batch)
		batch = make([]T, 0, BatchSize)
		return err
	}
	for i, p := range parts {
		parse, ok := parserFor(i, p)
		if !ok {
			continue
		}
		err := ReadLines(ctx, nil, p, func(l Line) error {
			var x T
			skip, err := parse(l, &x)
			if skip {
				return nil
			}
			if err != nil {
				keep, err := pol.Handle(format, &x, l.File, l.Number, string(l.Text), err)
				if err != nil || !keep {
					return err
				}
			}
			batch = append(batch, x)
			if len(batch) == BatchSize {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return flush()
}
