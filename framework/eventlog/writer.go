package eventlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/flint-mesos/flint/framework/event"
)

// Options configure a Writer.
type Options struct {
	// Compress writes zstd-compressed files (.zst).
	Compress bool
	// MaxFileSize is how many bytes of JSON a file holds before the next
	// one is started; 0 never rolls.
	MaxFileSize int64
	// FlushInterval is how often buffered events reach the files
	// (default 1 s).
	FlushInterval time.Duration
	// Ticks, when set, replaces the flush ticker (tests): every value
	// received flushes.
	Ticks <-chan time.Time
}

// Writer appends events to an application's log. OnEvent is called by one
// goroutine (the bus'); Close flushes and closes the files.
type Writer struct {
	mu    sync.Mutex
	dir   string
	o     Options
	index int
	f     *os.File
	zw    *zstd.Encoder
	buf   *bufio.Writer
	size  int64
	err   error // the first write error; later events are dropped
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

var _ event.Listener = (*Writer)(nil)

// AppDir is the directory of an application's log.
func AppDir(dir, appID string) string { return filepath.Join(dir, appID) }

// Create makes dir/<appID>/ and opens its first file.
func Create(dir, appID string, o Options) (*Writer, error) {
	if appID == "" || appID != filepath.Base(appID) || appID == "." || appID == ".." {
		return nil, fmt.Errorf("eventlog: application id %q cannot name a directory", appID)
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	w := &Writer{dir: AppDir(dir, appID), o: o, stop: make(chan struct{}), done: make(chan struct{})}
	if err := os.MkdirAll(w.dir, 0o750); err != nil {
		return nil, fmt.Errorf("eventlog: flint.eventLog.dir: %w", err)
	}
	if err := w.open(); err != nil {
		return nil, err
	}
	go w.flusher()
	return w, nil
}

// Dir is the application's log directory.
func (w *Writer) Dir() string { return w.dir }

func (w *Writer) fileName(i int) string {
	name := fmt.Sprintf("events_%05d.jsonl", i)
	if w.o.Compress {
		name += ".zst"
	}
	return filepath.Join(w.dir, name)
}

// open starts the next file. Called with w.mu held (or before the flusher runs).
func (w *Writer) open() error {
	w.index++
	f, err := os.OpenFile(w.fileName(w.index), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	var out io.Writer = f
	if w.o.Compress {
		zw, err := zstd.NewWriter(f, zstd.WithEncoderConcurrency(1))
		if err != nil {
			f.Close()
			return fmt.Errorf("eventlog: zstd: %w", err)
		}
		w.zw, out = zw, zw
	}
	w.f, w.buf, w.size = f, bufio.NewWriterSize(out, 64<<10), 0
	return nil
}

// OnEvent appends e.
func (w *Writer) OnEvent(e event.Event) {
	line, err := Encode(e)
	if err != nil {
		return // an event type the log does not know: nothing to replay it into
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.f == nil {
		return
	}
	if w.o.MaxFileSize > 0 && w.size > 0 && w.size+int64(len(line))+1 > w.o.MaxFileSize {
		if w.err = w.closeFile(); w.err == nil {
			w.err = w.open()
		}
		if w.err != nil {
			return
		}
	}
	if _, err := w.buf.Write(append(line, '\n')); err != nil {
		w.err = fmt.Errorf("eventlog: %w", err)
		return
	}
	w.size += int64(len(line)) + 1
}

// flushLocked pushes buffered events to the file (a zstd block when
// compressed, which a reader can decode up to there).
func (w *Writer) flushLocked() error {
	if w.f == nil {
		return nil
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	if w.zw != nil {
		if err := w.zw.Flush(); err != nil {
			return fmt.Errorf("eventlog: %w", err)
		}
	}
	return nil
}

func (w *Writer) closeFile() error {
	err := w.flushLocked()
	if w.zw != nil {
		err = errors.Join(err, w.zw.Close())
		w.zw = nil
	}
	if w.f != nil {
		err = errors.Join(err, w.f.Close())
		w.f = nil
	}
	return err
}

// Flush pushes buffered events to the files now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.flushLocked()
	return w.err
}

func (w *Writer) flusher() {
	defer close(w.done)
	ticks := w.o.Ticks
	if ticks == nil {
		t := time.NewTicker(w.o.FlushInterval)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-w.stop:
			return
		case <-ticks:
			_ = w.Flush()
		}
	}
}

// Close flushes, closes the last file and stops the flusher; it returns the
// first error the log met. It is idempotent.
func (w *Writer) Close() error {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.closeFile(); w.err == nil {
			w.err = err
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
