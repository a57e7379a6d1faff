package fileserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/flint-mesos/flint/uri"
)

// served is one published name: content with a given hash and basename,
// available from one or more local files.
type served struct {
	name    string // "<sha256>/<basename>"
	sha     string
	size    int64
	sources []*fileSource
}

// fileSource is a local file with the content of a served name, as it
// was when hashed.
type fileSource struct {
	path string
	info fs.FileInfo
}

// pathKey identifies a registration: the file opened and the basename it
// is published under (AddExecutable opens /proc/self/exe under the
// program's name).
type pathKey struct{ path, base string }

type pathRec struct {
	name string // key in Server.files
	src  *fileSource
}

// unchanged reports whether now describes the same regular file as was,
// unmodified (same size, modification time, device and inode).
func unchanged(was, now fs.FileInfo) bool {
	return now.Mode().IsRegular() && was.Size() == now.Size() &&
		was.ModTime().Equal(now.ModTime()) && os.SameFile(was, now)
}

// AddFile publishes the regular file at path (symlinks followed) under
// its content hash and basename and returns its URL. The content is hashed
// once: adding the same unchanged path again, or another file with the
// same content and basename, returns the same FileURL without re-reading
// it. A path whose file changed since it was added is hashed anew and gets
// a new URL; the old URL is then refused (409).
func (s *Server) AddFile(path string) (FileURL, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return FileURL{}, fmt.Errorf("uri: add %s: %w", path, err)
	}
	return s.add(abs, filepath.Base(abs))
}

// AddExecutable publishes the running program (os.Executable, symlinks
// resolved) under its basename. On Linux it is read through
// /proc/self/exe, so the image actually running is served even if the
// file at its path is rebuilt or removed while the driver runs.
func (s *Server) AddExecutable() (FileURL, error) {
	exe, err := os.Executable()
	if err != nil {
		return FileURL{}, fmt.Errorf("uri: add executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	open := exe
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			open = "/proc/self/exe"
		}
	}
	return s.add(open, filepath.Base(exe))
}

func (s *Server) add(path, base string) (FileURL, error) {
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return FileURL{}, fmt.Errorf("uri: add %s: %w: no file name", path, uri.ErrInvalidURI)
	}
	if err := s.addable(); err != nil {
		return FileURL{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return FileURL{}, fmt.Errorf("uri: add: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return FileURL{}, fmt.Errorf("uri: add %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return FileURL{}, fmt.Errorf("uri: add %s: not a regular file", path)
	}
	s.mu.Lock()
	if rec, ok := s.byPath[pathKey{path, base}]; ok && unchanged(rec.src.info, info) {
		u := s.fileURL(s.files[rec.name])
		s.mu.Unlock()
		return u, nil
	}
	s.mu.Unlock()

	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return FileURL{}, fmt.Errorf("uri: add %s: %w", path, err)
	}
	s.hashed.Add(1)
	if after, err := f.Stat(); err != nil || !unchanged(info, after) {
		return FileURL{}, fmt.Errorf("uri: add %s: the file changed while it was hashed", path)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return s.register(sum, base, &fileSource{path: path, info: info})
}

func (s *Server) addable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateNew:
		return errors.New("uri: server: call Serve before adding files (URLs need its address)")
	case stateClosed:
		return ErrClosed
	}
	return nil
}

func (s *Server) register(sum, base string, src *fileSource) (FileURL, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return FileURL{}, ErrClosed
	}
	name := sum + "/" + base
	delete(s.gone, name)
	e := s.files[name]
	if e == nil {
		e = &served{name: name, sha: sum, size: src.info.Size()}
		s.files[name] = e
	}
	i := slices.IndexFunc(e.sources, func(o *fileSource) bool { return o.path == src.path })
	if i >= 0 {
		e.sources[i] = src
	} else {
		e.sources = append(e.sources, src)
	}
	s.byPath[pathKey{src.path, base}] = pathRec{name: name, src: src}
	s.log.WithField("file", src.path).WithField("url", s.base+"/files/"+name).Debug("file published")
	return s.fileURL(e), nil
}

// Remove stops serving the file published at fileURL (a FileURL's URL),
// whatever its local sources: requests for it are refused with 410 Gone
// until the same content is added again. It reports whether the URL was
// served.
func (s *Server) Remove(fileURL string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, ok := strings.CutPrefix(fileURL, s.base+"/files/")
	if !ok {
		return false
	}
	sha, base, _ := strings.Cut(name, "/")
	if b, err := url.PathUnescape(base); err == nil {
		name = sha + "/" + b
	}
	if s.files[name] == nil {
		return false
	}
	delete(s.files, name)
	for k, rec := range s.byPath {
		if rec.name == name {
			delete(s.byPath, k)
		}
	}
	if s.gone == nil {
		s.gone = map[string]bool{}
	}
	s.gone[name] = true
	return true
}

// fileURL builds e's URL; s.mu must be held.
func (s *Server) fileURL(e *served) FileURL {
	base := filepath.Base(e.name)
	return FileURL{
		URL:    s.base + "/files/" + e.sha + "/" + url.PathEscape(base),
		Name:   base,
		SHA256: e.sha,
		Size:   e.size,
		key:    e.name,
	}
}

// lookup returns the served file named "<sha256>/<basename>" and a copy
// of its sources.
func (s *Server) lookup(name string) (*served, []*fileSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.files[name]
	if e == nil {
		return nil, nil
	}
	return e, slices.Clone(e.sources)
}

// removed reports whether name was removed (Remove) and not added again.
func (s *Server) removed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[name]
}

// open opens the first source of a served file that is still unchanged.
// Otherwise it returns the HTTP status to refuse with: 409 when a source
// changed, 500 on another error, 410 when every source is gone.
func open(sources []*fileSource) (*os.File, *fileSource, int) {
	var changed, failed bool
	for _, src := range sources {
		f, err := os.Open(src.path)
		if err != nil {
			failed = failed || !errors.Is(err, fs.ErrNotExist)
			continue
		}
		info, err := f.Stat()
		if err == nil && unchanged(src.info, info) {
			return f, src, 0
		}
		f.Close()
		if err != nil {
			failed = true
		} else {
			changed = true
		}
	}
	switch {
	case changed:
		return nil, nil, 409
	case failed:
		return nil, nil, 500
	}
	return nil, nil, 410
}
