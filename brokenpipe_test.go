//go:build unix

package flint

import (
	"os"
	"testing"
)

// brokenPipe tells a pipe whose reader went away from one still read, and
// from a regular file.
func TestBrokenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if brokenPipe(int(w.Fd())) {
		t.Error("a pipe with its reader is reported broken")
	}
	r.Close()
	if !brokenPipe(int(w.Fd())) {
		t.Error("a pipe without a reader is not reported broken")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if brokenPipe(int(f.Fd())) {
		t.Error("a regular file is reported broken")
	}
}
