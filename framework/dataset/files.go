package dataset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/codec"
	"github.com/flint-mesos/flint/internal/plural"

	// The schemes every job can read and write.
	_ "github.com/flint-mesos/flint/framework/storage/httpfs"
	_ "github.com/flint-mesos/flint/framework/storage/local"
	_ "github.com/flint-mesos/flint/framework/storage/s3"
)

// filePart is a byte range [Start, End) of one input file; a compressed file's part is the
// whole file.
type filePart struct {
	File       storage.FileInfo
	Start, End int64
}

// fileSplit is what one task of a file source reads: one range of a large file, or several
// small files packed together.
type fileSplit struct {
	Parts []filePart
	Hosts []string
}

// Size is the bytes the split reads (compressed bytes for a compressed file).
func (s fileSplit) Size() int64 {
	var n int64
	for _, p := range s.Parts {
		n += p.End - p.Start
	}
	return n
}

// splittable reports whether f can be read from the middle: not a compressed file.
func splittable(f storage.FileInfo) bool {
	_, compressed := codec.ForPath(f.Path)
	return !compressed
}

// packSplits cuts the files into splits of at most max bytes: a splittable file larger
// than max into ranges of max bytes; the others (small files, compressed files whole)
// packed in listing order into splits while their bytes plus openCost per file fit in max,
// as Spark packs small files (spark.sql.files.openCostInBytes). Empty files are dropped.
// hosts says where a file's bytes are.
func packSplits(files []storage.FileInfo, max, openCost int64, hosts func(string) []string) []fileSplit {
	var out []fileSplit
	var cur fileSplit
	var curCost int64
	flush := func() {
		if len(cur.Parts) > 0 {
			out = append(out, cur)
		}
		cur, curCost = fileSplit{}, 0
	}
	for _, f := range files {
		if f.Size == 0 {
			continue
		}
		if splittable(f) && f.Size > max {
			flush()
			h := hosts(f.Path)
			for start := int64(0); start < f.Size; start += max {
				out = append(out, fileSplit{Parts: []filePart{{File: f, Start: start, End: min(f.Size, start+max)}}, Hosts: h})
			}
			continue
		}
		cost := f.Size + openCost
		if len(cur.Parts) > 0 && curCost+cost > max {
			flush()
		}
		cur.Parts = append(cur.Parts, filePart{File: f, Start: 0, End: f.Size})
		cur.Hosts = mergeHosts(cur.Hosts, hosts(f.Path), len(cur.Parts) == 1)
		curCost += cost
	}
	flush()
	return out
}

// mergeHosts keeps the hosts every file of a split shares.
func mergeHosts(have, add []string, first bool) []string {
	if first {
		return add
	}
	var out []string
	for _, h := range have {
		for _, a := range add {
			if h == a {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// planFiles lists paths on the driver (storage.Expand) and packs them into splits. The
// warnings name the files of local directories skipped as not text, or say that there is
// nothing to read.
func planFiles(b *Builder, paths []string) ([]fileSplit, []string, error) {
	ctx := context.Background()
	if len(paths) == 0 {
		return nil, nil, errors.New("dataset: TextFile needs at least one path")
	}
	var files []storage.FileInfo
	var skipped []string
	for _, p := range paths {
		got, err := storage.Expand(ctx, b.config(), []string{p})
		if err != nil {
			return nil, nil, fmt.Errorf("dataset: %w", err)
		}
		if localDir(p) {
			got, skipped, err = textOnly(got, skipped)
			if err != nil {
				return nil, nil, err
			}
		}
		files = append(files, got...)
	}
	var warnings []string
	if len(skipped) > 0 {
		warnings = append(warnings, fmt.Sprintf("dataset: skipped %s that %s not text (a NUL byte in the first %d KiB): %s",
			plural.N(len(skipped), "file"), map[bool]string{true: "is", false: "are"}[len(skipped) == 1], sniffBytes>>10, listSome(skipped, 5)))
	}
	splits := packSplits(files, b.settings.MaxPartitionBytes, b.settings.OpenCostInBytes, fileHosts)
	if len(splits) == 0 {
		warnings = append(warnings, fmt.Sprintf("dataset: input %s is empty: %s, so the dataset has no records",
			strings.Join(paths, " "), describeEmpty(len(files))))
	}
	return splits, warnings, nil
}

// localDir reports whether p is a local directory (not a glob).
func localDir(p string) bool {
	if storage.Scheme(p) != "file" || strings.ContainsAny(p, "*?[") {
		return false
	}
	st, err := os.Stat(strings.TrimPrefix(p, "file://"))
	return err == nil && st.IsDir()
}

// textOnly drops the files that are not text (isText) unless their extension names a codec,
// adding them to skipped.
func textOnly(files []storage.FileInfo, skipped []string) ([]storage.FileInfo, []string, error) {
	out := files[:0:0]
	for _, f := range files {
		if _, compressed := codec.ForPath(f.Path); !compressed {
			text, err := isText(strings.TrimPrefix(f.Path, "file://"))
			if err != nil {
				return nil, nil, fmt.Errorf("dataset: list input %s: %w", f.Path, err)
			}
			if !text {
				skipped = append(skipped, f.Path)
				continue
			}
		}
		out = append(out, f)
	}
	return out, skipped, nil
}

// config is the job's configuration on the driver, nil (defaults) without a context.
func (b *Builder) config() *config.Config {
	if b.fc == nil {
		return nil
	}
	return b.fc.Config()
}

// openPart opens part of f for a task: the configuration is the task's (its S3 settings came from
// the driver with the job's settings, the credentials as Mesos secrets). A part that starts inside a
// file opens one byte early, so that the reader can tell whether a line starts at Start.
// Reads stop at End, and continue past it (one more request) only when the caller reads on
// to finish a line. A compressed file is decompressed whole.
func openPart(tc *taskContext, p filePart) (io.ReadCloser, error) {
	ctx := context.Background()
	var cfg *config.Config
	if tc != nil && tc.ctx != nil {
		ctx = tc.ctx
		cfg = framework.TaskConfig(tc.ctx)
	}
	return openPartWith(ctx, cfg, p)
}

// openPartWith is openPart with the configuration given (the driver's, at planning).
func openPartWith(ctx context.Context, cfg *config.Config, p filePart) (io.ReadCloser, error) {
	fs, err := storage.For(ctx, cfg, p.File.Path)
	if err != nil {
		return nil, err
	}
	readErr := func(err error) error { return readErr(p.File.Path, err) }
	if c, ok := codec.ForPath(p.File.Path); ok {
		rc, err := fs.Open(ctx, p.File, 0, -1)
		if err != nil {
			return nil, readErr(err)
		}
		stored := &countingReader{r: rc}
		dr, err := c.NewReader(stored)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("dataset: read %s: not %s data: %w", p.File.Path, c.Name, err)
		}
		return closeBoth{Reader: dr, a: dr, b: rc, stored: stored}, nil
	}
	from := max(p.Start-1, 0)
	rc, err := fs.Open(ctx, p.File, from, p.End-from)
	if err != nil {
		return nil, readErr(err)
	}
	return &tailReader{head: rc, open: func() (io.ReadCloser, error) {
		if p.End >= p.File.Size {
			return nil, io.EOF
		}
		rc, err := fs.Open(ctx, p.File, p.End, -1)
		return rc, readErr(err)
	}}, nil
}

// readErr prefixes a storage error (which names the file) with the package; a local file
// this executor cannot open is ErrInputUnreadable (retrying cannot help).
func readErr(path string, err error) error {
	if err == nil {
		return nil
	}
	if storage.Scheme(path) == "file" && !errors.Is(err, storage.ErrChanged) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return unreadableInput(path, err)
		}
	}
	return fmt.Errorf("dataset: %w", err)
}

type closeBoth struct {
	io.Reader
	a, b io.Closer
	// stored counts the compressed bytes the decoder read from storage
	stored *countingReader
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func (c closeBoth) Close() error {
	err := c.a.Close()
	if err2 := c.b.Close(); err == nil {
		err = err2
	}
	return err
}

// tailReader reads head, then — only if the reader goes on — what open returns.
type tailReader struct {
	head io.ReadCloser
	open func() (io.ReadCloser, error)
	tail io.ReadCloser
	done bool
}

func (t *tailReader) Read(b []byte) (int, error) {
	if t.tail == nil {
		n, err := t.head.Read(b)
		if err != io.EOF {
			return n, err
		}
		if t.done {
			return n, io.EOF
		}
		t.done = true
		rc, err := t.open()
		if err != nil {
			return n, err
		}
		t.tail = rc
		if n > 0 {
			return n, nil
		}
	}
	return t.tail.Read(b)
}

func (t *tailReader) Close() error {
	err := t.head.Close()
	if t.tail != nil {
		if err2 := t.tail.Close(); err == nil {
			err = err2
		}
	}
	return err
}

// fileHosts is where the driver knows a file's bytes to be (splitHosts for local files and
// http(s) URLs); an object store's bytes are everywhere.
func fileHosts(p string) []string {
	switch storage.Scheme(p) {
	case "file":
		return splitHosts(strings.TrimPrefix(p, "file://"))
	case "http", "https":
		return splitHosts(p)
	}
	return nil
}

// filePreferences are the splits' hosts as the DAG core's per-partition preferences.
func filePreferences(splits []fileSplit) [][]scheduler.Location {
	var out [][]scheduler.Location
	for i, s := range splits {
		if len(s.Hosts) == 0 {
			continue
		}
		if out == nil {
			out = make([][]scheduler.Location, len(splits))
		}
		for _, h := range s.Hosts {
			out[i] = append(out[i], scheduler.Location{Host: h})
		}
	}
	return out
}

// absInputs resolves relative local paths against the driver's working directory: executors
// run elsewhere (their sandboxes).
func absInputs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if storage.Scheme(p) == "file" && !strings.HasPrefix(p, "file://") {
			if abs, err := filepath.Abs(p); err == nil {
				out[i] = abs
			}
		}
	}
	return out
}

// readTextSplit emits the lines of s's parts, and tells read the bytes they took in
// storage (readTextPart).
func readTextSplit(tc *taskContext, s fileSplit, emit func([]string) error, read func(bytes int64)) error {
	batch := make([]string, 0, batchSize)
	for _, p := range s.Parts {
		err := readTextPart(tc, p, read, func(line string) error {
			batch = append(batch, line)
			if len(batch) == batchSize {
				if err := emit(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(batch) > 0 {
		return emit(batch)
	}
	return nil
}

// readTextPart calls line for each line that starts in the part, without its '\n' (a
// '\r' before it is kept): a part not at the file's start skips to the first line starting at or
// after p.Start (the byte before p.Start tells whether a line starts there), and the last
// line read may run past p.End. A compressed file's part is all its lines.
//
// It tells read the bytes the part took in storage, Spark's input bytes (what a task read
// from the file system): the lines' own bytes with their line ends (so a file's parts add
// up to its size, CRLF line ends and a last line without one included), and for a
// compressed file the compressed bytes its decoder read.
func readTextPart(tc *taskContext, p filePart, read func(bytes int64), line func(string) error) error {
	rc, err := openPart(tc, p)
	if err != nil {
		return err
	}
	defer rc.Close()
	var lineBytes int64
	defer func() {
		if cb, ok := rc.(closeBoth); ok && cb.stored != nil {
			lineBytes = cb.stored.n
		}
		read(lineBytes)
	}()
	lines := lineCutter{r: rc}
	_, compressed := codec.ForPath(p.File.Path)
	pos, end := max(p.Start-1, 0), p.End
	if compressed {
		pos, end = 0, math.MaxInt64
	}
	if p.Start > 0 && !compressed {
		_, n, err := lines.next() // the rest of the line before p.Start, or the '\n' ending it
		pos += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readFailed(p, err)
		}
	}
	for pos < end {
		s, n, err := lines.next()
		pos += int64(n)
		lineBytes += int64(n)
		if n > 0 {
			if err := line(s); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readFailed(p, err)
		}
	}
	return nil
}

// lineCutter cuts a stream into lines without copying them: it reads the stream straight
// into chunks of lineChunk bytes and makes each line a string over the bytes of the chunk
// it was read into — one copy of each byte (the read), one allocation per chunk, none per
// line. A chunk is only ever appended to: a byte, once read, is never written again, so the
// strings are as immutable as any Go string (strings.Builder's rule); a line kept alive
// keeps its chunk alive. A line that runs past a chunk's end moves, with the rest of the
// chunk's bytes, to the start of the next chunk (a line longer than a chunk gets a chunk
// twice its length so far).
type lineCutter struct {
	r       io.Reader
	buf     []byte // the chunk: buf[:len(buf)] read so far
	cut     int    // buf[:cut] is cut into lines
	scanned int    // buf[cut:scanned] holds no '\n'
	err     error  // r's error, returned once every byte before it is cut
}

// lineChunk is the size of a chunk: reads of up to this many bytes (a large read costs the
// network stack far less per byte than the 8 KiB reads of io.Copy), allocated on the
// allocator's large-object path once per chunk.
const lineChunk = 256 << 10

// minRead is the least room a read gets: a chunk with less left is replaced by a new one.
const minRead = 16 << 10

// next is the next line without its '\n', the bytes it took with its '\n', and r's error
// (io.EOF after a last line without one, with that line).
func (c *lineCutter) next() (string, int, error) {
	for {
		if i := bytes.IndexByte(c.buf[c.scanned:], '\n'); i >= 0 {
			end := c.scanned + i
			s := stringOf(c.buf[c.cut:end])
			n := end + 1 - c.cut
			c.cut, c.scanned = end+1, end+1
			return s, n, nil
		}
		c.scanned = len(c.buf)
		if c.err != nil {
			s := stringOf(c.buf[c.cut:])
			n := len(c.buf) - c.cut
			c.cut = len(c.buf)
			return s, n, c.err
		}
		c.fill()
	}
}

// fill reads once into the chunk, first moving the unfinished line to a new chunk when the
// chunk has less than minRead bytes of room left.
func (c *lineCutter) fill() {
	if cap(c.buf)-len(c.buf) < minRead {
		rest := c.buf[c.cut:]
		chunk := make([]byte, len(rest), max(lineChunk, 2*len(rest)))
		copy(chunk, rest)
		c.buf, c.scanned, c.cut = chunk, len(rest), 0
	}
	n, err := c.r.Read(c.buf[len(c.buf):cap(c.buf)])
	c.buf = c.buf[:len(c.buf)+n]
	c.err = err
}

// stringOf is b as a string sharing b's bytes, which the caller never writes again.
func stringOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// skipLine reads through the next '\n', returning the bytes read.
func skipLine(r *bufio.Reader) (int64, error) {
	var n int64
	for {
		b, err := r.ReadSlice('\n')
		n += int64(len(b))
		if err != bufio.ErrBufferFull {
			return n, err
		}
	}
}

// readFailed names the file of a failed read, and the codec of a compressed one.
func readFailed(p filePart, err error) error {
	if c, ok := codec.ForPath(p.File.Path); ok && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("dataset: read %s: corrupt or truncated %s data: %w", p.File.Path, c.Name, err)
	}
	return fmt.Errorf("dataset: read %s: %w", p.File.Path, err)
}
