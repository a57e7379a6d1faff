package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/backoff"
	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/uri"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// Errors; test with errors.Is.
var (
	// ErrChecksum: the fetched content's SHA-256 is not the one the driver
	// listed.
	ErrChecksum = errors.New("files: SHA-256 mismatch")
	// ErrConflict: a file of that name with other content is already here.
	ErrConflict = errors.New("files: another file of that name is here already")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("files: store closed")
)

// Config configures a Store. The zero value is usable: a temporary
// directory, four attempts per file starting 250ms apart.
type Config struct {
	// Dir holds the fetched files (created when first needed). "" means a
	// temporary directory, removed by Close; a given Dir (an executor's
	// sandbox) is left in place.
	Dir string
	// Attempts is how often a file is fetched before its task fails
	// (default 4).
	Attempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// every further one up to 8× (default 250ms).
	Backoff time.Duration
	// After waits between attempts; nil is time.After (tests inject a
	// clock).
	After func(time.Duration) <-chan time.Time
	// Fetch is the fetcher's configuration; Header is set per fetch.
	Fetch uri.Config
	// Logger is optional; nil discards logs. Tokens are never logged.
	Logger logrus.FieldLogger
}

// SandboxDir is the Dir for an executor Mesos started: flint-files in its
// sandbox ($MESOS_SANDBOX), so the agent's sandbox GC removes the files
// with it; "" (a temporary directory) elsewhere.
func SandboxDir() string {
	if sb := os.Getenv("MESOS_SANDBOX"); sb != "" {
		return filepath.Join(sb, "flint-files")
	}
	return ""
}

// Store keeps one executor's added files. It is safe for concurrent use.
type Store struct {
	cfg Config
	log logrus.FieldLogger

	mu      sync.Mutex
	dir     string // "" until first needed
	temp    bool
	closed  bool
	entries map[string]*entry // by name
	fetches int               // completed fetches (tests, logs)
}

// entry is one file: fetched, being fetched (done open) or failed (then
// removed from the map, so a later task tries again).
type entry struct {
	ref       *flintpb.FileRef
	done      chan struct{}
	path      string
	err       error
	cancelled bool // the fetching task's context ended: others try again
}

// New returns a Store.
func New(cfg Config) *Store {
	if cfg.Attempts <= 0 {
		cfg.Attempts = 4
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 250 * time.Millisecond
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	log := cfg.Logger
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	return &Store{cfg: cfg, log: log.WithField("component", "files"), entries: map[string]*entry{}}
}

// Prepare makes every file of refs present and returns the task's view.
// token is the task's files token, presented to the driver's file server
// for the refs it serves. A file is fetched once: another task's fetch in
// progress is waited for, a file already here is used as it is. It fails
// when a file cannot be fetched after the configured attempts, when its
// content is not what the driver listed, or when ctx ends.
func (s *Store) Prepare(ctx context.Context, refs []*flintpb.FileRef, token string) (task.Files, error) {
	v := make(task.Files, len(refs))
	for _, ref := range refs {
		p, err := s.ensure(ctx, ref, token)
		if err != nil {
			return nil, err
		}
		v[ref.Name] = p
	}
	return v, nil
}

func (s *Store) ensure(ctx context.Context, ref *flintpb.FileRef, token string) (string, error) {
	if err := task.ValidFileName(ref.Name); err != nil {
		return "", err
	}
	for {
		p, again, err := s.ensureOnce(ctx, ref, token)
		if !again {
			return p, err
		}
	}
}

// ensureOnce is one try of ensure; again when another task's fetch ended
// because that task was cancelled, while ctx is live.
func (s *Store) ensureOnce(ctx context.Context, ref *flintpb.FileRef, token string) (p string, again bool, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", false, ErrClosed
	}
	e := s.entries[ref.Name]
	if e != nil && !sameFile(e.ref, ref) {
		s.mu.Unlock()
		return "", false, fmt.Errorf("%w: %q is %s here, the task lists %s", ErrConflict, ref.Name, describe(e.ref), describe(ref))
	}
	owner := e == nil
	if owner {
		e = &entry{ref: ref, done: make(chan struct{})}
		s.entries[ref.Name] = e
	}
	s.mu.Unlock()
	if owner {
		e.path, e.err = s.fetch(ctx, ref, token)
		e.cancelled = e.err != nil && ctx.Err() != nil
		s.mu.Lock()
		if e.err != nil {
			delete(s.entries, ref.Name) // the next task tries again
		} else {
			s.fetches++
		}
		s.mu.Unlock()
		close(e.done)
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return "", false, fmt.Errorf("files: %q: %w", ref.Name, context.Cause(ctx))
	}
	if e.err != nil {
		return "", !owner && e.cancelled && ctx.Err() == nil, e.err
	}
	return e.path, false, nil
}

// Fetches is the number of files fetched so far.
func (s *Store) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// sameFile reports whether two refs of one name describe the same content.
func sameFile(a, b *flintpb.FileRef) bool {
	if a.Sha256 != "" || b.Sha256 != "" {
		return a.Sha256 == b.Sha256 && a.Extract == b.Extract
	}
	return a.Uri == b.Uri && a.Extract == b.Extract
}

func describe(r *flintpb.FileRef) string {
	if r.Sha256 != "" {
		return "sha256 " + r.Sha256
	}
	return redact.URL(r.Uri)
}

// directory returns the store's directory, creating it.
func (s *Store) directory() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		return s.dir, nil
	}
	if s.cfg.Dir == "" {
		d, err := os.MkdirTemp("", "flint-files-")
		if err != nil {
			return "", fmt.Errorf("files: %w", err)
		}
		s.dir, s.temp = d, true
		return d, nil
	}
	d, err := filepath.Abs(s.cfg.Dir)
	if err == nil {
		err = os.MkdirAll(d, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("files: %w", err)
	}
	s.dir = d
	return d, nil
}

// fetch fetches ref with retries and returns its final path.
func (s *Store) fetch(ctx context.Context, ref *flintpb.FileRef, token string) (string, error) {
	dir, err := s.directory()
	if err != nil {
		return "", err
	}
	log := s.log.WithFields(logrus.Fields{"file": ref.Name, "uri": redact.URL(ref.Uri)})
	for attempt := 1; ; attempt++ {
		p, err := s.fetchOnce(ctx, dir, ref, token)
		if err == nil {
			log.WithField("attempt", attempt).Debug("file fetched")
			return p, nil
		}
		err = fmt.Errorf("files: fetch %q from %s (attempt %d of %d): %w", ref.Name, redact.URL(ref.Uri), attempt, s.cfg.Attempts, err)
		var perm permanent
		if attempt >= s.cfg.Attempts || ctx.Err() != nil || errors.As(err, &perm) {
			return "", err
		}
		wait := backoff.Delay(s.cfg.Backoff, 8*s.cfg.Backoff, attempt-1)
		log.WithError(err).Warnf("fetch failed; retrying in %v", wait)
		select {
		case <-s.cfg.After(wait):
		case <-ctx.Done():
			return "", fmt.Errorf("%w (then: %w)", err, context.Cause(ctx))
		}
	}
}

// fetchOnce downloads ref into a staging directory, checks it and moves it
// to dir/name.
func (s *Store) fetchOnce(ctx context.Context, dir string, ref *flintpb.FileRef, token string) (string, error) {
	stage, err := os.MkdirTemp(dir, ".fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	fc := s.cfg.Fetch
	fc.Header = nil
	if ref.Served {
		if token == "" {
			return "", permanent{errors.New("the driver serves it but the task carries no files token")}
		}
		u, err := url.Parse(ref.Uri)
		if err != nil {
			return "", permanent{fmt.Errorf("%w: %v", uri.ErrInvalidURI, err)}
		}
		if fc.Header, err = fileserver.TokenHeader(u.Scheme+"://"+u.Host, token); err != nil {
			return "", permanent{err}
		}
	}
	// The staged file keeps the URL's name, whose extension says how an
	// archive is unpacked (an added directory is name → name.tar.gz).
	staged := stagedName(ref)
	no, exe := false, ref.Executable
	in := []mesos.CommandInfo_URI{{Value: ref.Uri, OutputFile: &staged, Extract: &no, Executable: &exe, Cache: &no}}
	if _, err := uri.New(fc).Fetch(ctx, in, stage); err != nil {
		return "", err
	}
	file := filepath.Join(stage, staged)
	if ref.Sha256 != "" {
		got, err := sha256File(file)
		if err != nil {
			return "", err
		}
		if got != ref.Sha256 {
			return "", fmt.Errorf("%w: got %s, the driver listed %s", ErrChecksum, got, ref.Sha256)
		}
	}
	final := filepath.Join(dir, ref.Name)
	src := file
	if ref.Extract {
		src = filepath.Join(stage, ".unpacked")
		if err := uri.Extract(file, src, uri.Limits{MaxBytes: fc.MaxExtractBytes, MaxFiles: fc.MaxExtractFiles}); err != nil {
			return "", err
		}
	}
	_ = os.RemoveAll(final) // a leftover of an earlier executor in this directory
	if err := os.Rename(src, final); err != nil {
		return "", err
	}
	return final, nil
}

// permanent is a fetch error no retry can cure.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

func stagedName(ref *flintpb.FileRef) string {
	if u, err := url.Parse(ref.Uri); err == nil {
		if b := path.Base(u.Path); task.ValidFileName(b) == nil && b != "/" {
			return b
		}
	}
	return ref.Name
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close ends the store: later Prepare calls fail, and a temporary
// directory is removed. Call it once no task runs.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.temp && s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("files: %w", err)
		}
	}
	return nil
}
