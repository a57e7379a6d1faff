package redact

import (
	"bytes"
	"io"
)

// Writer applies Text to what it writes, a whole line at a time: a line
// is held until its newline arrives (or Flush), so a URL split across two
// writes is masked whole, never shown in part.
type Writer struct {
	w       io.Writer
	partial []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes the complete lines of p (and of what earlier writes held)
// and holds the rest. It reports len(p) unless w fails.
func (r *Writer) Write(p []byte) (int, error) {
	r.partial = append(r.partial, p...)
	i := bytes.LastIndexByte(r.partial, '\n')
	if i < 0 {
		return len(p), nil
	}
	lines := r.partial[:i+1]
	if _, err := io.WriteString(r.w, Text(string(lines))); err != nil {
		return 0, err
	}
	r.partial = append(r.partial[:0], r.partial[i+1:]...)
	return len(p), nil
}

// Flush writes the held partial line.
func (r *Writer) Flush() error {
	if len(r.partial) == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, Text(string(r.partial)))
	r.partial = r.partial[:0]
	return err
}
