package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/plural"
)

// Parallelize splits xs into parts partitions (the default parallelism
// when parts ≤ 0). Executors rebuild xs by replaying the body, so xs must
// come from the job's arguments or deterministic code; wrap values read
// from outside in Value.
func Parallelize[T any](b *Builder, xs []T, parts int) Dataset[T] {
	if parts <= 0 {
		parts = b.DefaultParallelism()
	}
	ds := newNode[T](b, "parallelize", parts, nil, nil, func(tc *taskContext, p int, emit func([]T) error) error {
		lo, hi := len(xs)*p/parts, len(xs)*(p+1)/parts
		for i := lo; i < hi; i += batchSize {
			if err := emit(xs[i:min(hi, i+batchSize)]); err != nil {
				return err
			}
		}
		return nil
	})
	return ds
}

// Range is the integers [start, end) in parts partitions.
func Range(b *Builder, start, end int64, parts int) Dataset[int64] {
	if parts <= 0 {
		parts = b.DefaultParallelism()
	}
	n := max(end-start, 0)
	return newNode[int64](b, "range", parts, nil, nil, func(tc *taskContext, p int, emit func([]int64) error) error {
		lo, hi := start+n*int64(p)/int64(parts), start+n*int64(p+1)/int64(parts)
		buf := make([]int64, 0, batchSize)
		for i := lo; i < hi; i++ {
			buf = append(buf, i)
			if len(buf) == batchSize {
				if err := emit(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			return emit(buf)
		}
		return nil
	})
}

// Split is a byte range of an input file one task reads: the lines that
// start in [Start, End).
type Split struct {
	Path       string
	Start, End int64
	Hosts      []string // where the bytes are, when known
}

// TextFile is the lines of the files at paths (files, directories, globs,
// http(s):// URLs), without their '\n', one partition per split of at most
// flint.files.maxPartitionBytes. The driver lists the files and plans the
// splits (frozen with the job); the executors read them. A relative path
// is resolved against the driver's working directory when the job is
// planned, so the same command works on every master; the path must then
// be readable from the executors under that absolute name (one host, a
// shared file system mounted at the same path on every agent, or a URL).
// An executor that cannot read it fails the job at once, naming the path
// and its host, instead of retrying the task (ErrInputUnreadable).
//
// A directory's files are its regular files, recursively, except names
// starting with '.' or '_' (as Hadoop's input formats skip) and files that
// are not text: a file whose first 8 KiB hold a NUL byte (the rule grep
// and git use) is skipped with one warning naming it, so a directory of
// documents with images is counted by its text only. A file named
// explicitly, or matched by a glob, is read whatever it holds. A path or
// glob matching nothing is an error; an input with no bytes at all is a
// warning.
//
// A line belongs to the split its first byte is in. A split's host, where
// the driver knows it, is its task's locality preference (splitHosts: a
// URL's host; the driver's host for a file on a local-disk file system,
// not on a network one).
func TextFile(b *Builder, paths ...string) Dataset[string] {
	info := b.newInfo("textFile", typeName[string](), 0, nil, nil)
	var plan splitPlan
	b.freeze("splits:"+string(info.id), func() any {
		s, warnings, err := planSplits(paths, b.settings.MaxPartitionBytes)
		if err != nil {
			return splitPlan{Err: err.Error()}
		}
		b.warn(warnings...)
		return splitPlan{Splits: s}
	}, &plan)
	splits, listErr := plan.Splits, plan.Err
	info.parts = len(splits)
	info.preferred = splitPreferences(splits)
	n := &tnode[string]{nodeInfo: info}
	n.compute = func(tc *taskContext, p int, emit func([]string) error) error {
		if listErr != "" {
			return errors.New(listErr)
		}
		return readSplit(splits[p], func(lines []string, bytes int64) error {
			task.MetricsFrom(tc.ctx).AddInput(bytes, int64(len(lines)))
			return emit(lines)
		})
	}
	if listErr != "" {
		b.fail(errors.New(listErr))
	}
	b.add(n)
	return Dataset[string]{n}
}

type splitPlan struct {
	Splits []Split
	Err    string
}

// planSplits expands paths and cuts every file into ranges of at most max
// bytes. The warnings say what was skipped, or that there is nothing to
// read.
func planSplits(paths []string, max int64) ([]Split, []string, error) {
	files, warnings, err := expand(paths)
	if err != nil {
		return nil, nil, err
	}
	var out []Split
	for _, f := range files {
		size, err := fileSize(f)
		if err != nil {
			return nil, nil, err
		}
		if size == 0 {
			continue
		}
		hosts := splitHosts(f)
		for start := int64(0); start < size; start += max {
			out = append(out, Split{Path: f, Start: start, End: min(size, start+max), Hosts: hosts})
		}
	}
	if len(out) == 0 {
		warnings = append(warnings, fmt.Sprintf("dataset: input %s is empty: %s, so the dataset has no records",
			strings.Join(paths, " "), describeEmpty(len(files))))
	}
	return out, warnings, nil
}

func describeEmpty(files int) string {
	if files == 0 {
		return "it holds no file to read"
	}
	return fmt.Sprintf("its %s no bytes", map[bool]string{true: "file holds", false: "files hold"}[files == 1])
}

func isURL(p string) bool { return strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") }

// expand turns paths into absolute files (resolved against the driver's
// working directory): a directory's text files (listDir), a glob's
// matches, in name order; URLs as they are. The warnings name the files a
// directory listing skipped.
func expand(paths []string) ([]string, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("dataset: TextFile needs at least one path")
	}
	var out, skipped []string
	for _, p := range paths {
		if isURL(p) {
			out = append(out, p)
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset: input %s: %w", p, err)
		}
		matches := []string{abs}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(abs)
			if err != nil {
				return nil, nil, fmt.Errorf("dataset: bad glob %q: %w", p, err)
			}
			if len(m) == 0 {
				return nil, nil, fmt.Errorf("dataset: %q matches no file", p)
			}
			matches = m
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, nil, fmt.Errorf("dataset: input %w", err)
			}
			if !st.IsDir() {
				out = append(out, m)
				continue
			}
			files, skip, err := listDir(m)
			if err != nil {
				return nil, nil, err
			}
			out, skipped = append(out, files...), append(skipped, skip...)
		}
	}
	var warnings []string
	if len(skipped) > 0 {
		warnings = append(warnings, fmt.Sprintf("dataset: skipped %s that %s not text (a NUL byte in the first %d KiB): %s",
			plural.N(len(skipped), "file"), map[bool]string{true: "is", false: "are"}[len(skipped) == 1], sniffBytes>>10, listSome(skipped, 5)))
	}
	return out, warnings, nil
}

// listDir is dir's regular files, recursively, except names starting with
// '.' or '_' and files that are not text (skipped, returned apart).
func listDir(dir string) (files, skipped []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		text, err := isText(path)
		if err != nil {
			return err
		}
		if text {
			files = append(files, path)
		} else {
			skipped = append(skipped, path)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: list input %s: %w", dir, err)
	}
	return files, skipped, nil
}

// sniffBytes is how much of a file isText reads.
const sniffBytes = 8 << 10

// isText reports whether the first sniffBytes of path hold no NUL byte:
// grep's and git's rule for telling binary files (images, archives,
// executables) from text in any ASCII-compatible encoding.
func isText(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	return bytes.IndexByte(buf[:n], 0) < 0, nil
}

// listSome is up to n of names and how many more there are.
func listSome(names []string, n int) string {
	s := strings.Join(names[:min(n, len(names))], ", ")
	if len(names) > n {
		s += fmt.Sprintf(" and %d more", len(names)-n)
	}
	return s
}

func fileSize(p string) (int64, error) {
	if !isURL(p) {
		st, err := os.Stat(p)
		if err != nil {
			return 0, fmt.Errorf("dataset: input %w", err)
		}
		return st.Size(), nil
	}
	resp, err := http.Head(p)
	if err != nil {
		return 0, fmt.Errorf("dataset: input %s: %w", p, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength < 0 {
		return 0, fmt.Errorf("dataset: input %s: HEAD answered %s with length %d", p, resp.Status, resp.ContentLength)
	}
	return resp.ContentLength, nil
}

// openRange opens bytes [start, end) of p, or to the end of the file when
// end < 0.
func openRange(p string, start, end int64) (io.ReadCloser, error) {
	if !isURL(p) {
		f, err := os.Open(p)
		if err != nil {
			return nil, unreadableInput(p, err)
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("dataset: read input %s: %w", p, err)
		}
		return f, nil
	}
	req, err := http.NewRequest(http.MethodGet, p, nil)
	if err != nil {
		return nil, fmt.Errorf("dataset: input %s: %w", p, err)
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", start))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dataset: read input %s: %w", p, err)
	}
	if resp.StatusCode != http.StatusPartialContent && !(resp.StatusCode == http.StatusOK && start == 0) {
		resp.Body.Close()
		return nil, fmt.Errorf("dataset: read input %s from byte %d: %s", p, start, resp.Status)
	}
	return resp.Body, nil
}

// readSplit emits the lines that start in [s.Start, s.End): a split not
// at the file's start skips to the first line starting at or after
// s.Start (the byte before s.Start tells whether a line starts there),
// and the last line read may run past s.End. With each batch of lines it
// passes the bytes they took in the file (their '\n' included): over a
// file's splits, these add up to its size.
func readSplit(s Split, emit func(lines []string, bytes int64) error) error {
	from := s.Start
	if from > 0 {
		from--
	}
	rc, err := openRange(s.Path, from, -1)
	if err != nil {
		return err
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 256<<10)
	pos := from
	if s.Start > 0 {
		skipped, err := r.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			pos += int64(len(skipped))
			skipped, err = r.ReadSlice('\n')
		}
		pos += int64(len(skipped))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset: read %s: %w", s.Path, err)
		}
	}
	batch := make([]string, 0, batchSize)
	var bytes int64
	for pos < s.End {
		line, err := r.ReadString('\n')
		pos += int64(len(line))
		if len(line) > 0 {
			batch = append(batch, strings.TrimSuffix(line, "\n"))
			bytes += int64(len(line))
			if len(batch) == batchSize {
				if err := emit(batch, bytes); err != nil {
					return err
				}
				batch, bytes = batch[:0], 0
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("dataset: read %s: %w", s.Path, err)
		}
	}
	if len(batch) > 0 {
		return emit(batch, bytes)
	}
	return nil
}

// ErrInputUnreadable: an executor cannot open a local input or output path
// the driver planned (another host without a shared file system, or a file
// removed since). Retrying cannot fix it, so the job fails at once
// (task.ErrNotRetryable).
var ErrInputUnreadable = errors.New("dataset: a local path the driver planned cannot be opened on this executor")

// unreadableInput is the error for local path p that err kept this
// executor from opening: it names the path, this host and the ways to
// make the path reach the executors.
func unreadableInput(p string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("dataset: read input %w", err)
	}
	host, herr := os.Hostname()
	if herr != nil || host == "" {
		host = "this executor's host"
	}
	return task.NotRetryable(fmt.Errorf("%w: %s on host %s (%v); the driver resolved this path on its own host, but the executors open local paths themselves: "+
		"put it on a file system shared by every agent under the same path, serve it over http(s):// and pass the URL, "+
		"or ship it with fc.AddFile and read it through the task's context", ErrInputUnreadable, p, host, errors.Unwrap(err)))
}

// warn logs each message once on the driver (executors replaying the body
// get the frozen plan and never plan again).
func (b *Builder) warn(msgs ...string) {
	if b.fc == nil || !b.Driver() {
		return
	}
	for _, m := range msgs {
		b.fc.Logger().Warn(m)
	}
}
