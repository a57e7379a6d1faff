package uri

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/redact"
)

// Config configures a Fetcher. The zero value is usable.
type Config struct {
	// HTTPClient downloads http and https URIs. Default: a client with
	// dial, TLS handshake and response header timeouts, no overall timeout
	// (bound a fetch with its context), and no transparent decompression.
	HTTPClient *http.Client
	// Cache holds content of URIs with cache=true; nil disables caching
	// (every URI is fetched directly into the sandbox).
	Cache *Cache
	// MaxExtractBytes caps the bytes one archive may expand to
	// (default DefaultMaxExtractBytes, 8 GiB).
	MaxExtractBytes int64
	// MaxExtractFiles caps the entries of one archive
	// (default DefaultMaxExtractFiles, 100,000).
	MaxExtractFiles int
	// MaxDownloadBytes caps the size of one fetched file; 0 = unlimited.
	MaxDownloadBytes int64
	// Header, if set, returns extra headers for each HTTP request,
	// including each redirect (e.g. a bearer token for Flint's file server
	// only when u is that server).
	Header func(u *url.URL) http.Header
}

// Fetcher fetches CommandInfo.URIs into sandboxes with Mesos' semantics. It
// is safe for concurrent use.
type Fetcher struct {
	client      *http.Client
	cache       *Cache
	limits      Limits
	maxDownload int64
	header      func(u *url.URL) http.Header
}

// Result describes one fetched URI.
type Result struct {
	URI string // the URI value as given
	// Path is sandbox-relative: the file written, or for an extracted bare
	// .gz the decompressed file, or "." for an extracted archive (entries
	// land at the top of the sandbox).
	Path      string
	Bytes     int64 // size of the fetched content (before extraction)
	CacheHit  bool  // served from the cache without fetching
	Extracted bool
}

// New returns a Fetcher.
func New(cfg Config) *Fetcher {
	f := &Fetcher{
		cache:       cfg.Cache,
		limits:      Limits{MaxBytes: cfg.MaxExtractBytes, MaxFiles: cfg.MaxExtractFiles}.withDefaults(),
		maxDownload: cfg.MaxDownloadBytes,
		header:      cfg.Header,
	}
	var c http.Client
	if cfg.HTTPClient != nil {
		c = *cfg.HTTPClient
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.ResponseHeaderTimeout = time.Minute
		c.Transport = t
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if next != nil {
			if err := next(req, via); err != nil {
				return err
			}
		} else if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		f.addHeaders(req)
		return nil
	}
	f.client = &c
	return f
}

func (f *Fetcher) addHeaders(req *http.Request) {
	if f.header != nil {
		for k, vs := range f.header(req.URL) {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	// Archives must arrive byte for byte, whatever the transport.
	req.Header.Set("Accept-Encoding", "identity")
}

// Fetch fetches uris into sandbox (created if missing) in order and stops
// at the first failure, returning the results so far and an error naming
// the URI and wrapping the cause.
//
//   - No scheme or file:// (absolute paths only): copied. http, https:
//     downloaded (redirects followed, non-2xx fails). Other schemes fail
//     with ErrUnsupportedScheme.
//   - The file is named output_file (sandbox-relative, may create
//     subdirectories, never absolute or leaving the sandbox) or, as Mesos
//     names it, everything after the URI's last "/" (query and fragment
//     included). No checksum is verified.
//   - executable: mode 0755 and no extraction, written so that no child
//     process forked meanwhile can hold it open for writing (exec'ing it
//     never fails with ETXTBSY; see writeExecutable). Otherwise, with extract
//     (default true), archives named .tar .tgz .tar.gz .tbz2 .tar.bz2 .txz
//     .tar.xz .zip are unpacked into the sandbox top (see Extract) and a
//     bare .gz is decompressed there to its name without .gz. As in Mesos
//     the archive (or .gz) stays in the sandbox, except when it came from
//     the cache: then it is extracted straight from the cache and not copied.
//   - cache (with Config.Cache set): the content is kept in the cache and
//     copied into the sandbox; a later fetch of the same URI does not touch
//     the source.
func (f *Fetcher) Fetch(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) ([]Result, error) {
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return nil, fmt.Errorf("uri: sandbox: %w", err)
	}
	root, err := os.OpenRoot(sandbox)
	if err != nil {
		return nil, fmt.Errorf("uri: sandbox: %w", err)
	}
	defer root.Close()
	results := make([]Result, 0, len(uris))
	for i := range uris {
		res, err := f.fetchOne(ctx, &uris[i], root)
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

func (f *Fetcher) fetchOne(ctx context.Context, u *mesos.CommandInfo_URI, root *os.Root) (Result, error) {
	src, err := parseURI(u.Value)
	if err != nil {
		return Result{}, fmt.Errorf("uri: fetch %q: %w", redact.URL(strings.TrimSpace(u.Value)), err)
	}
	res, err := f.place(ctx, u, src, root)
	if err != nil {
		return Result{}, fmt.Errorf("uri: fetch %s: %w", src.redacted(), redact.Error(err, src.secrets()...))
	}
	return res, nil
}

func (f *Fetcher) place(ctx context.Context, u *mesos.CommandInfo_URI, src source, root *os.Root) (Result, error) {
	name, err := outputName(u, src)
	if err != nil {
		return Result{}, err
	}
	res := Result{URI: u.Value, Path: name}
	kind := notArchive
	if !u.GetExecutable() && u.GetExtract() {
		kind = archiveKindOf(name)
	}
	var from string // the file to extract
	if u.GetCache() && f.cache != nil {
		e, hit, gerr := f.cache.get(ctx, src.raw, func(ctx context.Context, w *os.File) (int64, error) {
			return f.retrieve(ctx, src, w)
		})
		if gerr != nil {
			return res, gerr
		}
		defer f.cache.release(e)
		res.CacheHit, res.Bytes, from = hit, e.size, e.file
		switch {
		case u.GetExecutable():
			err = writeExecutable(root, name, e.file)
		case kind == notArchive:
			err = writeInto(root, name, func(w *os.File) (int64, error) { return copyFromFile(ctx, e.file, w) })
		}
	} else {
		target := name
		if u.GetExecutable() {
			target = stagingName(name) // copied to name by writeExecutable
		}
		err = writeInto(root, target, func(w *os.File) (int64, error) {
			n, err := f.retrieve(ctx, src, w)
			res.Bytes = n
			return n, err
		})
		if err == nil && u.GetExecutable() {
			err = writeExecutable(root, name, filepath.Join(root.Name(), target))
			if rerr := root.Remove(target); err == nil {
				err = rerr
			}
		}
		from = filepath.Join(root.Name(), name)
	}
	if err != nil || u.GetExecutable() {
		return res, err
	}
	if kind == notArchive {
		return res, nil
	}
	if err := extractFile(ctx, kind, from, name, root.Name(), f.limits); err != nil {
		return res, err
	}
	res.Extracted, res.Path = true, "."
	if kind == kindGz {
		res.Path = strings.TrimSuffix(filepath.Base(name), ".gz")
	}
	return res, nil
}

// writeInto creates the sandbox file name (and its directories) through a
// temporary file renamed into place, so failures leave nothing behind.
func writeInto(root *os.Root, name string, fill func(w *os.File) (int64, error)) error {
	return writeFile(root, name, false, fill)
}

// writeFile is writeInto; with forkLock the temporary file is open only
// under syscall.ForkLock's read lock (see writeExecutable).
func writeFile(root *os.Root, name string, forkLock bool, fill func(w *os.File) (int64, error)) error {
	dir := filepath.Dir(name)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := stagingName(name)
	if forkLock {
		syscall.ForkLock.RLock()
	}
	w, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = fill(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if forkLock {
		syscall.ForkLock.RUnlock()
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// stagingName is a hidden temporary name beside name.
func stagingName(name string) string {
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".fetch-"+rand.Text()[:12])
}

// writeExecutable copies the closed file src to the sandbox file name,
// mode 0755, so that no child process can ever hold it open for writing:
// the copy's write descriptor exists only under syscall.ForkLock's read
// lock, which every fork of this process excludes (its exclusive lock
// covers fork up to the child's exec, where the descriptor closes).
// Without this, a goroutine forking any program while the file is being
// written gives that child a copy of the write descriptor until it execs,
// and exec'ing the file meanwhile fails with ETXTBSY ("text file busy",
// golang/go#22315). A rename does not help (the inode stays open), so the
// fetched bytes go to a staging file first and only this short in-kernel
// copy (copy_file_range) runs under the lock.
func writeExecutable(root *os.Root, name, src string) error {
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	return writeFile(root, name, true, func(w *os.File) (int64, error) {
		n, err := io.Copy(w, r)
		if err == nil {
			err = w.Chmod(0o755)
		}
		return n, err
	})
}

// copyFromFile copies a cache file into w, keeping its mode.
func copyFromFile(ctx context.Context, name string, w *os.File) (int64, error) {
	r, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return 0, err
	}
	n, err := copyLimited(ctx, w, r, 0)
	if err != nil {
		return n, err
	}
	return n, w.Chmod(fi.Mode().Perm())
}
