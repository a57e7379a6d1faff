package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/flint-mesos/flint/framework/task"
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
	ds.n.data = digestOf(xs)
	return ds
}

// Range is the integers [start, end) in parts partitions.
func Range(b *Builder, start, end int64, parts int) Dataset[int64] {
	if parts <= 0 {
		parts = b.DefaultParallelism()
	}
	n := max(end-start, 0)
	ds := newNode[int64](b, "range", parts, nil, nil, func(tc *taskContext, p int, emit func([]int64) error) error {
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
	ds.n.data = digestOf(start, end)
	return ds
}

// TextFile is the lines of the files at paths, split at '\n' (a '\r' before it is kept). A
// path is a local path, a file:// or http(s):// URL, an s3:// (s3a://, s3n://) URI, or any
// scheme registered with package storage; a file, a directory or key prefix (every file
// under it but names starting with '.' or '_'), or a glob. The driver lists the files when
// the job is planned (frozen with the job; relative local paths resolved against its
// working directory) and packs them into splits of about flint.files.maxPartitionBytes:
// a larger file is cut into byte ranges (a line belongs to the range its first byte is
// in), small files are packed together (each costing flint.files.openCostInBytes more than
// its size). Files ending in .gz, .zst, .bz2 or .xz are decompressed, each read whole by one
// task (package storage/codec). Executors read only their splits, failing when a file is no
// longer the version the driver listed. A local-disk file's split prefers the driver's host;
// an object store's has no preference.
//
// A local directory's files skip those that are not text: a file whose first 8 KiB hold a
// NUL byte (the rule grep and git use), unless its extension names a codec, is skipped with
// one warning naming it, so a directory of documents with images is counted by its text
// only. A file named explicitly, or matched by a glob, is read whatever it holds. A path or
// glob matching nothing is an error; an input with no bytes at all is a warning. A local
// path an executor cannot open (another host, no shared file system) fails the job at once,
// naming the path and the host (ErrInputUnreadable).
//
// A line is a string over the bytes of the 256 KiB chunk it was read into (one allocation
// per chunk, none per line), so a line, or a substring of it, kept after its task keeps its
// whole chunk in memory. Persist takes care of the common case: the records it keeps in
// memory (MemoryOnly, MemoryAndDisk) get copies of their strings — the record itself, its
// struct fields, array and slice elements — so a persisted sparse Filter holds only the
// lines it kept, as the storage budget counts them, as in Spark. Records leaving a task
// (shuffles, results, disk) are encoded anyway. What is left to the user: a line kept by a
// closure in its own variables, or behind a pointer, map or interface of a persisted record
// (which Persist does not follow), keeps its chunk; strings.Clone it there.
func TextFile(b *Builder, paths ...string) Dataset[string] {
	info := b.newInfo("textFile", typeName[string](), 0, nil, nil)
	var plan filePlan
	b.freeze("splits:"+string(info.id), func() any {
		s, warnings, err := planFiles(b, absInputs(paths))
		if err != nil {
			return filePlan{Err: err.Error()}
		}
		b.warn(warnings...)
		return filePlan{Splits: s}
	}, &plan)
	splits, listErr := plan.Splits, plan.Err
	info.parts = len(splits)
	info.preferred = filePreferences(splits)
	n := &tnode[string]{nodeInfo: info}
	n.compute = func(tc *taskContext, p int, emit func([]string) error) error {
		if listErr != "" {
			return errors.New(listErr)
		}
		m := task.MetricsFrom(tc.ctx)
		return readTextSplit(tc, splits[p], func(lines []string) error {
			m.AddInput(0, int64(len(lines)))
			return emit(lines)
		}, func(n int64) { m.AddInput(n, 0) })
	}
	if listErr != "" {
		b.fail(errors.New(listErr))
	}
	b.add(n)
	return Dataset[string]{n}
}

// filePlan is a file source's splits as the driver froze them, or its listing error.
type filePlan struct {
	Splits []fileSplit
	Err    string
}

func describeEmpty(files int) string {
	if files == 0 {
		return "it holds no file to read"
	}
	return fmt.Sprintf("its %s no bytes", map[bool]string{true: "file holds", false: "files hold"}[files == 1])
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
		"or ship it with fc.AddFile and read it through the task's context", ErrInputUnreadable, p, host, pathCause(err)))
}

// pathCause is the system's reason inside a file error (err itself when there is none).
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
