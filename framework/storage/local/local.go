package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

func init() {
	storage.Register("file", func(context.Context, *config.Config) (storage.FS, error) { return FS{}, nil })
}

// FS is the local file system. Its zero value is ready.
type FS struct{}

var _ storage.Writable = FS{}

// osPath is p without a file:// scheme.
func osPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}

func version(st fs.FileInfo) string {
	return fmt.Sprintf("%d-%d", st.Size(), st.ModTime().UnixNano())
}

func info(p string, st fs.FileInfo) storage.FileInfo {
	return storage.FileInfo{Path: p, Size: st.Size(), ModTime: st.ModTime(), Version: version(st), IsDir: st.IsDir()}
}

func wrap(op, p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("storage: %s %s: %w (%w)", op, p, storage.ErrNotExist, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("storage: %s %s: %w (%w)", op, p, storage.ErrAccess, err)
	}
	return fmt.Errorf("storage: %s %s: %w", op, p, err)
}

// Stat describes the file or directory at p.
func (FS) Stat(_ context.Context, p string) (storage.FileInfo, error) {
	st, err := os.Stat(osPath(p))
	if err != nil {
		return storage.FileInfo{}, wrap("stat", p, err)
	}
	return info(p, st), nil
}

// List is every regular file under dir, sorted by path.
func (FS) List(_ context.Context, dir string) ([]storage.FileInfo, error) {
	root := osPath(dir)
	if root == "" {
		root = "."
	}
	var out []storage.FileInfo
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := filepath.ToSlash(rel)
		if dir != "" {
			name = storage.Join(dir, name)
		}
		out = append(out, info(name, st))
		return nil
	})
	if err != nil {
		return nil, wrap("list", dir, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("storage: list %s: no file under it: %w", dir, storage.ErrNotExist)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open reads bytes [off, off+n) of f.
func (FS) Open(_ context.Context, f storage.FileInfo, off, n int64) (io.ReadCloser, error) {
	file, err := os.Open(osPath(f.Path))
	if err != nil {
		return nil, wrap("open", f.Path, err)
	}
	st, err := file.Stat()
	if err == nil && f.Version != "" && version(st) != f.Version {
		err = fmt.Errorf("%w (listed %d bytes, now %d, or modified at %s)", storage.ErrChanged, f.Size, st.Size(), st.ModTime().UTC().Format("2006-01-02T15:04:05.000000000Z"))
	}
	if err == nil {
		_, err = file.Seek(off, io.SeekStart)
	}
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("storage: open %s: %w", f.Path, err)
	}
	if n < 0 {
		return file, nil
	}
	return limited{io.LimitReader(file, n), file}, nil
}

type limited struct {
	io.Reader
	io.Closer
}

// Create writes p through a temporary file renamed on Close.
func (l FS) Create(ctx context.Context, p string) (io.WriteCloser, error) {
	op := osPath(p)
	if err := os.MkdirAll(filepath.Dir(op), 0o755); err != nil {
		return nil, wrap("create", p, err)
	}
	f, err := os.CreateTemp(filepath.Dir(op), "."+filepath.Base(op)+".*")
	if err != nil {
		return nil, wrap("create", p, err)
	}
	return &created{f: f, to: op, name: p}, nil
}

type created struct {
	f        *os.File
	to, name string
}

func (c *created) Write(b []byte) (int, error) { return c.f.Write(b) }

func (c *created) Close() error {
	err := c.f.Close()
	if err == nil {
		err = os.Rename(c.f.Name(), c.to)
	}
	if err != nil {
		os.Remove(c.f.Name())
		return wrap("create", c.name, err)
	}
	return nil
}

// Delete removes the file at p.
func (FS) Delete(_ context.Context, p string) error {
	if err := os.Remove(osPath(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrap("delete", p, err)
	}
	return nil
}

// TempDir is the directory under an output directory where staged files wait.
const TempDir = "_temporary"

// Stage writes p as a file under _temporary beside it.
func (FS) Stage(ctx context.Context, p string) (storage.Staged, error) {
	op := osPath(p)
	// The output directory must exist (the committer makes it): an executor that does not
	// share the driver's file system fails here instead of writing where nobody reads.
	tmp := filepath.Join(filepath.Dir(op), TempDir)
	if err := os.Mkdir(tmp, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, wrap("stage", p, err)
	}
	var id [8]byte
	rand.Read(id[:])
	name := filepath.Join(tmp, filepath.Base(op)+"-attempt-"+hex.EncodeToString(id[:]))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, wrap("stage", p, err)
	}
	// Only now look for the output's markers: the driver writes _SUCCESS or _ABORTED before
	// it removes _temporary, so a file staged after that removal sees one (Writable.Stage).
	if err := storage.Ended(ctx, FS{}.Stat, p); err != nil {
		f.Close()
		os.Remove(name)
		os.Remove(tmp) // only when empty: another late attempt may still be in it
		return nil, err
	}
	return &staged{f: f, path: p}, nil
}

type staged struct {
	f    *os.File
	path string
	n    int64
}

func (s *staged) Write(b []byte) (int, error) {
	n, err := s.f.Write(b)
	s.n += int64(n)
	return n, err
}

func (s *staged) Finish() (storage.Pending, error) {
	err := s.f.Sync()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.f.Name())
		return storage.Pending{}, wrap("stage", s.path, err)
	}
	return storage.Pending{Path: s.path, ID: s.f.Name(), Size: s.n}, nil
}

func (s *staged) Abort() error {
	s.f.Close()
	if err := os.Remove(s.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrap("abort", s.path, err)
	}
	return nil
}

// Publish renames the staged file to its path. A second Publish of the same write finds
// the file already there and its staged copy gone: not an error.
func (FS) Publish(_ context.Context, p storage.Pending) error {
	to := osPath(p.Path)
	err := os.Rename(p.ID, to)
	if errors.Is(err, fs.ErrNotExist) {
		if st, serr := os.Stat(to); serr == nil && st.Size() == p.Size {
			return nil
		}
	}
	if err != nil {
		return wrap("publish", p.Path, err)
	}
	return nil
}

// AbortStaged removes dir's _temporary directory.
func (FS) AbortStaged(_ context.Context, dir string) error {
	if err := os.RemoveAll(filepath.Join(osPath(dir), TempDir)); err != nil {
		return wrap("abort", dir, err)
	}
	return nil
}
