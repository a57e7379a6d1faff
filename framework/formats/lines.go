package formats

import (
	"bufio"
	"context"
	"io"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
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
					return err
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
