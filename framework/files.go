package framework

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/uri"
)

// ErrFileConflict is returned by AddFile, AddDir and AddArchive when a
// file of the same name with other content was added before: tasks find
// files by name, so one name has one content for the whole application.
var ErrFileConflict = errors.New("framework: a different file of that name was added already")

// addedFiles is the Context's list of added files.
type addedFiles struct {
	list   []*backend.File
	byName map[string]*backend.File
	temp   string // directory of AddDir's archives, removed by Stop
}

// AddFile adds a file for every task submitted from now on (Spark's
// SparkContext.addFile): a local path (or file:// URL) is published by the
// driver's file server, content addressed and behind a credential; an
// http:// or https:// URL is passed through for executors to fetch
// themselves: the driver never fetches it. A remote URL may end in
// #sha256=<64 hex digits> (uri.SplitChecksum): the fragment is taken off
// the URL and executors verify the content against it; without one its
// content is not verified. Every task of a stage submitted after AddFile
// returns lists the file, and its executor fetches it once, before the
// first such task runs (verifying the SHA-256 of local files, and of
// remote ones that give it), also when the executor started earlier. Tasks find the local copy with
// TaskContextOf(ctx).File(name), name being the file's base name. Adding
// the same content under the same name again is a no-op; other content
// under a name already added fails with ErrFileConflict.
func (c *Context) AddFile(pathOrURL string) error { return c.add(pathOrURL, false) }

// AddArchive adds an archive (.tar, .tar.gz, .tgz, .tar.bz2, .tbz2,
// .tar.xz, .txz, .zip; local or http(s)) that executors unpack (Spark's
// addArchive): TaskContext.File(name) is then the directory it was
// unpacked into, name being the archive's base name. Unpacking refuses
// entries that would leave that directory.
func (c *Context) AddArchive(pathOrURL string) error { return c.add(pathOrURL, true) }

// AddDir adds a local directory with everything below it (Spark's
// addFile(path, recursive = true)): the driver packs it into a tar.gz it
// serves, executors unpack it, and TaskContext.File(base name of dir) is
// the directory's copy.
func (c *Context) AddDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("framework: add dir %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return fmt.Errorf("framework: add dir: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("framework: add dir %s: not a directory (use AddFile)", dir)
	}
	name := filepath.Base(abs)
	if err := task.ValidFileName(name); err != nil {
		return fmt.Errorf("framework: add dir %s: %w", dir, err)
	}
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	if c.files.temp == "" {
		if c.files.temp, err = os.MkdirTemp("", "flint-added-"); err != nil {
			return fmt.Errorf("framework: add dir %s: %w", dir, err)
		}
	}
	sub, err := os.MkdirTemp(c.files.temp, "dir-")
	if err != nil {
		return fmt.Errorf("framework: add dir %s: %w", dir, err)
	}
	archive := filepath.Join(sub, name+".tar.gz")
	if err := packDir(abs, archive); err != nil {
		os.RemoveAll(sub)
		return fmt.Errorf("framework: add dir %s: %w", dir, err)
	}
	ref, err := c.localRef(archive, name, true)
	if err == nil {
		var dup bool
		if dup, err = c.register(ref, dir); dup {
			os.RemoveAll(sub)
		}
	}
	if err != nil {
		os.RemoveAll(sub)
	}
	return err
}

func (c *Context) add(pathOrURL string, extract bool) error {
	what := "file"
	if extract {
		what = "archive"
	}
	ref, err := c.refOf(pathOrURL, extract)
	if err != nil {
		return fmt.Errorf("framework: add %s %s: %w", what, redact.URL(pathOrURL), err)
	}
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	_, err = c.register(ref, pathOrURL)
	return err
}

// refOf describes pathOrURL as a file to fetch.
func (c *Context) refOf(pathOrURL string, extract bool) (*backend.File, error) {
	p := pathOrURL
	if u, err := url.Parse(pathOrURL); err == nil && len(u.Scheme) > 1 {
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			name, err := url.PathUnescape(path.Base(u.Path))
			if err != nil || task.ValidFileName(name) != nil || strings.HasSuffix(u.Path, "/") {
				return nil, fmt.Errorf("the URL names no file")
			}
			raw, sum, err := uri.SplitChecksum(pathOrURL)
			if err != nil {
				return nil, err
			}
			return &backend.File{Name: name, URI: raw, SHA256: sum, Extract: extract}, nil
		case "file":
			p = u.Path
		default:
			return nil, fmt.Errorf("unsupported scheme %q (local paths, file://, http:// and https://)", u.Scheme)
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil, err
	case st.IsDir():
		return nil, errors.New("a directory (use AddDir)")
	case !st.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	}
	name := filepath.Base(abs)
	if err := task.ValidFileName(name); err != nil {
		return nil, err
	}
	return c.localRef(abs, name, extract)
}

// localRef publishes a local file: on the backend's file server, or (local
// mode) as a file:// URL with its SHA-256.
func (c *Context) localRef(abs, name string, extract bool) (*backend.File, error) {
	if fsrv, ok := backend.As[backend.FileServer](c.backend); ok {
		u, sum, size, err := fsrv.ServeFile(abs)
		if err != nil {
			return nil, err
		}
		return &backend.File{Name: name, URI: u, SHA256: sum, Size: size, Extract: extract, Served: true}, nil
	}
	sum, size, err := hashFile(abs)
	if err != nil {
		return nil, err
	}
	return &backend.File{Name: name, URI: (&url.URL{Scheme: "file", Path: abs}).String(), SHA256: sum, Size: size, Extract: extract}, nil
}

// register adds ref to the list unless its name is taken; dup reports the
// same content added before. c.filesMu must be held.
func (c *Context) register(ref *backend.File, given string) (dup bool, err error) {
	if c.files.byName == nil {
		c.files.byName = map[string]*backend.File{}
	}
	if old := c.files.byName[ref.Name]; old != nil {
		if sameContent(old, ref) {
			return true, nil
		}
		return false, fmt.Errorf("%w: %q (from %s) is %s, %s was added before", ErrFileConflict, ref.Name, redact.URL(given), refContent(ref), refContent(old))
	}
	c.files.byName[ref.Name] = ref
	c.files.list = append(c.files.list[:len(c.files.list):len(c.files.list)], ref) // a new array: the loop holds the old one
	c.driver.SetFiles(c.files.list)
	c.log.WithField("file", ref.Name).Debugf("added file %s (%s)", ref.Name, refContent(ref))
	return false, nil
}

// RemoveFile stops listing the added file name in the tasks of stages
// submitted from now on (dataset broadcasts release theirs with it) and
// the driver's file server stops serving it (410 Gone); it reports
// whether name was added. Executors keep copies they fetched (dataset
// broadcasts drop theirs at their next task).
func (c *Context) RemoveFile(name string) bool {
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	ref := c.files.byName[name]
	if ref == nil {
		return false
	}
	delete(c.files.byName, name)
	if fsrv, ok := backend.As[backend.FileUnserver](c.backend); ok && ref.Served {
		fsrv.UnserveFile(ref.URI)
	}
	list := make([]*backend.File, 0, len(c.files.list)) // a new array: the loop holds the old one
	for _, f := range c.files.list {
		if f != ref {
			list = append(list, f)
		}
	}
	c.files.list = list
	c.driver.SetFiles(c.files.list)
	c.log.WithField("file", name).Debugf("removed file %s", name)
	return true
}

func sameContent(a, b *backend.File) bool {
	if a.Extract != b.Extract {
		return false
	}
	if a.SHA256 != "" || b.SHA256 != "" {
		return a.SHA256 == b.SHA256
	}
	return a.URI == b.URI
}

func refContent(r *backend.File) string {
	kind := "a file"
	if r.Extract {
		kind = "an archive"
	}
	if r.SHA256 != "" {
		return fmt.Sprintf("%s with sha256 %s", kind, r.SHA256)
	}
	return fmt.Sprintf("%s at %s", kind, redact.URL(r.URI))
}

// removeAddedFiles removes AddDir's archives (Stop, after the backend).
func (c *Context) removeAddedFiles() error {
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	if c.files.temp == "" {
		return nil
	}
	return os.RemoveAll(c.files.temp)
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// packDir writes dir's tree as a gzipped tar to archive, entries in
// lexical order and with no time in the gzip header, so the same tree
// gives the same bytes (and the same SHA-256) again.
func packDir(dir, archive string) error {
	out, err := os.Create(archive)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	werr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case !info.Mode().IsRegular() && !info.IsDir():
			return fmt.Errorf("%s: not a regular file, directory or symlink", p)
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	return errors.Join(werr, tw.Close(), zw.Close(), out.Close())
}

// TaskContext is what a running task can ask of its executor: Spark's
// TaskContext with SparkFiles. Get it with TaskContextOf.
type TaskContext struct{ ctx context.Context }

// TaskContextOf is the task context of ctx, a task function's context.
func TaskContextOf(ctx context.Context) TaskContext { return TaskContext{ctx: ctx} }

// File returns the local path of the file added as name (its base name;
// for AddArchive and AddDir the directory it was unpacked into): Spark's
// SparkFiles.get. It fails for a name not added before the task's stage
// was submitted.
func (t TaskContext) File(name string) (string, error) {
	v, ok := task.FilesFrom(t.ctx)
	if !ok {
		if TaskConfig(t.ctx) == nil {
			return "", fmt.Errorf("framework: file %q: not a task's context", name)
		}
		v = task.Files{}
	}
	p, err := v.File(name)
	if err != nil {
		return "", fmt.Errorf("framework: %w", err)
	}
	return p, nil
}

// Config is the job's configuration as the task sees it (TaskConfig).
func (t TaskContext) Config() *Config { return TaskConfig(t.ctx) }
