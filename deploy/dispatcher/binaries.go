package dispatcher

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrChecksum is returned when an uploaded binary's content does not have the
// SHA-256 its uploader declared.
var ErrChecksum = errors.New("dispatcher: checksum mismatch")

// Binaries is the content-addressed store of uploaded programs:
// <dir>/<sha256>/<name>. A binary is written to a temporary file while it is
// hashed and kept only when its hash is the declared one, so a stored path's
// content is always its name's hash.
type Binaries struct{ dir string }

// NewBinaries creates dir when missing.
func NewBinaries(dir string) (*Binaries, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("dispatcher: binaries: %w", err)
	}
	return &Binaries{dir: dir}, nil
}

// Put stores r's content under name, checking that it hashes to wantSHA (hex),
// and returns its path. Storing a hash already there is a no-op once checked.
// max bounds the size.
func (b *Binaries) Put(wantSHA, name string, r io.Reader, max int64) (string, error) {
	if !ValidSHA256(wantSHA) {
		return "", fmt.Errorf("%w: the declared SHA-256 %q is not 64 lower-case hex digits", ErrBadRequest, wantSHA)
	}
	if !nameRE.MatchString(name) || name == "." || name == ".." {
		return "", fmt.Errorf("%w: binary name %q: want a plain file name", ErrBadRequest, name)
	}
	f, err := os.CreateTemp(b.dir, ".upload-*")
	if err != nil {
		return "", fmt.Errorf("dispatcher: binaries: %w", err)
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, max+1))
	if err == nil && n > max {
		err = fmt.Errorf("%w: the binary is over %d bytes", ErrBadRequest, max)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("dispatcher: upload: %w", err)
	}
	if got := hexOf(h.Sum(nil)); got != wantSHA {
		return "", fmt.Errorf("%w: the uploaded %d bytes hash to %s, not the declared %s", ErrChecksum, n, got, wantSHA)
	}
	dst := filepath.Join(b.dir, wantSHA, name)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("dispatcher: binaries: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o500); err != nil {
		return "", fmt.Errorf("dispatcher: binaries: %w", err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return "", fmt.Errorf("dispatcher: binaries: %w", err)
	}
	return dst, nil
}

// Path returns the stored binary of hash sha, whatever its name, or an error
// when none was uploaded.
func (b *Binaries) Path(sha string) (string, error) {
	if !ValidSHA256(sha) {
		return "", fmt.Errorf("%w: bad hash %q", ErrBadRequest, sha)
	}
	ents, err := os.ReadDir(filepath.Join(b.dir, sha))
	if err != nil || len(ents) == 0 {
		return "", fmt.Errorf("%w: no binary with SHA-256 %s was uploaded (POST it to /v1/binaries first)", ErrBadRequest, sha)
	}
	return filepath.Join(b.dir, sha, ents[0].Name()), nil
}
