package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/config"
)

// Errors every scheme maps its own to (test with errors.Is).
var (
	// ErrNotExist: no file, object, bucket or directory at the path.
	ErrNotExist = errors.New("storage: no such file")
	// ErrChanged: the file is no longer the version the driver listed (its ETag, size or
	// modification time differs).
	ErrChanged = errors.New("storage: file changed since it was listed")
	// ErrAccess: the store refused the credentials or the operation.
	ErrAccess = errors.New("storage: access denied")
	// ErrReadOnly: the scheme cannot be written (http(s)).
	ErrReadOnly = errors.New("storage: scheme is read-only")
	// ErrNoScheme: no implementation is registered for the path's scheme.
	ErrNoScheme = errors.New("storage: no storage registered for scheme")
	// ErrCommitted: Stage refused to write into an output whose job already committed (its
	// directory holds SuccessMarker): a task attempt that started after the commit.
	ErrCommitted = errors.New("storage: output already committed")
	// ErrAborted: Stage refused to write into an output whose job failed or was cancelled
	// (its directory holds AbortMarker): a task attempt that started after the job's cleanup.
	ErrAborted = errors.New("storage: output's job failed or was cancelled")
)

// SuccessMarker is the file a committed output directory holds, written by the driver after
// every part file is published and before its final sweep of staged writes (Writable).
const SuccessMarker = "_SUCCESS"

// AbortMarker is the file the driver writes into the output directory of a job that failed
// or was cancelled, before its sweep of staged writes: an attempt still running that stages
// after the sweep listed finds it and discards its own write (Writable.Stage). Readers skip
// it (a hidden name); the next write into the directory removes it.
const AbortMarker = "_ABORTED"

// Ended tells a staged write whether its output's job already ended: ErrCommitted (wrapped)
// when the directory holding path has SuccessMarker, ErrAborted when it has AbortMarker,
// nil when neither, or the error stat gave. stat is the scheme's (ErrNotExist for none).
// Writable.Stage calls it once its staged write exists.
func Ended(ctx context.Context, stat func(context.Context, string) (FileInfo, error), path string) error {
	dir := path[:strings.LastIndexByte(path, '/')+1]
	for _, m := range []struct {
		name string
		err  error
	}{{SuccessMarker, ErrCommitted}, {AbortMarker, ErrAborted}} {
		_, err := stat(ctx, dir+m.name)
		switch {
		case err == nil:
			return fmt.Errorf("storage: stage %s: %s exists: %w", path, dir+m.name, m.err)
		case !errors.Is(err, ErrNotExist):
			return fmt.Errorf("storage: stage %s: %w", path, err)
		}
	}
	return nil
}

// FileInfo describes one file as its store listed it. It is gob-encodable: the driver freezes
// listings with the job and executors open the files they describe.
type FileInfo struct {
	// Path names the file as the job wrote it: a local path, or a URI with its scheme.
	Path    string
	Size    int64
	ModTime time.Time
	// Version identifies this content of the file: an S3 or HTTP ETag; a local file's size and
	// modification time. "" when the store gives none (no check is made then).
	Version string
	// IsDir is set by Stat for a local directory.
	IsDir bool
}

// FS reads one scheme's files. Implementations are safe for concurrent use.
type FS interface {
	// Stat describes the file at path: ErrNotExist when there is none (an S3 prefix with
	// objects under it is not a file: List it).
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List is every file under dir (a directory or a key prefix ending at a '/'), at any
	// depth, sorted by Path. A dir with nothing under it gives ErrNotExist.
	List(ctx context.Context, dir string) ([]FileInfo, error)
	// Open reads bytes [off, off+n) of f (to its end when n < 0), failing with ErrChanged
	// when the file is no longer f.Version.
	Open(ctx context.Context, f FileInfo, off, n int64) (io.ReadCloser, error)
}

// Writable is a scheme that can be written, with what the commit protocol needs.
type Writable interface {
	FS
	// Create writes path directly: the file is visible, whole, once Close returns nil.
	Create(ctx context.Context, path string) (io.WriteCloser, error)
	// Delete removes the file at path; a missing one is not an error.
	Delete(ctx context.Context, path string) error
	// Stage starts writing path invisibly: nothing appears at path until Publish. Once its
	// staged write exists (an S3 upload created, a temporary file made) it looks for
	// SuccessMarker and AbortMarker beside path (Ended); when there is one it discards the
	// write and fails with ErrCommitted or ErrAborted. With the driver writing a marker
	// before its final AbortStaged — committed or failed — every staged write is either seen
	// by that sweep or sees the marker: none outlives the job.
	Stage(ctx context.Context, path string) (Staged, error)
	// Publish makes a staged write visible at its path. Publishing the same Pending twice
	// is not an error when the first succeeded.
	Publish(ctx context.Context, p Pending) error
	// AbortStaged discards every staged write under dir that was not published (a killed
	// writer's, a speculative loser's, a failed job's).
	AbortStaged(ctx context.Context, dir string) error
}

// Staged is one write in progress.
type Staged interface {
	io.Writer
	// Finish ends the write, durable but invisible, and returns what publishes it.
	Finish() (Pending, error)
	// Abort discards the write.
	Abort() error
}

// Pending is a finished staged write the driver may publish: gob-encodable, it travels as a
// task's result. Its fields mean what the scheme says (S3: the upload's id and the parts'
// ETags in order; local: the staged file's path).
type Pending struct {
	Path  string
	ID    string
	Parts []string
	Size  int64
}

// Opener makes a scheme's FS from the job's configuration (nil: defaults and the
// environment). It may return a cached FS.
type Opener func(ctx context.Context, cfg *config.Config) (FS, error)

var (
	regMu    sync.RWMutex
	registry = map[string]Opener{}
)

// Register makes open serve paths of scheme (lower case, without "://"; "file" serves paths
// without a scheme). Call it from an init function; registering a scheme twice panics.
func Register(scheme string, open Opener) {
	regMu.Lock()
	defer regMu.Unlock()
	scheme = strings.ToLower(scheme)
	if _, dup := registry[scheme]; dup {
		panic("storage: scheme " + scheme + " registered twice")
	}
	registry[scheme] = open
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []string
	for s := range registry {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Scheme is path's URI scheme in lower case, "file" for a path without one.
func Scheme(path string) string {
	i := strings.Index(path, "://")
	if i <= 0 || strings.ContainsAny(path[:i], "/\\") {
		return "file"
	}
	return strings.ToLower(path[:i])
}

// For is the FS serving path's scheme under cfg.
func For(ctx context.Context, cfg *config.Config, path string) (FS, error) {
	s := Scheme(path)
	regMu.RLock()
	open := registry[s]
	regMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("%w %q (%s; registered: %s)", ErrNoScheme, s, path, strings.Join(Schemes(), ", "))
	}
	return open(ctx, cfg)
}

// WritableFor is the Writable serving path's scheme, or ErrReadOnly.
func WritableFor(ctx context.Context, cfg *config.Config, path string) (Writable, error) {
	fs, err := For(ctx, cfg, path)
	if err != nil {
		return nil, err
	}
	w, ok := fs.(Writable)
	if !ok {
		return nil, fmt.Errorf("%w: %s:// cannot be written (%s)", ErrReadOnly, Scheme(path), path)
	}
	return w, nil
}

// Join joins dir and name with one '/' (URIs and local paths alike).
func Join(dir, name string) string {
	return strings.TrimSuffix(dir, "/") + "/" + strings.TrimPrefix(name, "/")
}
